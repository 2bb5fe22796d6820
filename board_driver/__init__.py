"""The Pi service: sensors -> occupancy -> reconciliation -> LEDs, journal and the CLI."""
