# fairyboard pin map for the Raspberry Pi Pico (RP2040). GPIO numbers, not header pins;
# hardware/firmware/README.md has the same table with header pins and wiring.

# Matrix columns, file a..l (col 0..11): outputs, idle high, pulled low one at a time.
COLUMNS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
# The columns' drive strength (mA: 2, 4, 8 or 12; the RP2040's default is 4). A closed switch
# pulls its row down to the diode's drop (~0.55 V for a 1N4148) plus the column's output-low
# level, which must stay under the RP2040's 0.8 V input-low limit: the strongest drive keeps
# the column's share smallest (hardware/WIRING.md, "Option B": how to measure it).
COLUMN_DRIVE_MA = 12
# Matrix rows, rank 1..8 (row 0..7): inputs with pull-ups.
ROWS = (14, 15, 16, 17, 18, 19, 20, 21)
# WS2812 data in of the first LED (through a 74AHCT125 level shifter to 5 V).
LED_DATA = 22
LED_COUNT = 96
# Tie to GND at power-up to skip the firmware and stay at the MicroPython prompt.
SAFE_MODE = 28
# Watchdog: the board resets if the main loop stalls this long (ms; RP2040 max 8388).
WATCHDOG_MS = 5000
# Wait after pulling a column low, before reading the rows (us). The slow edge is a row
# rising back through its pull-up once the previous column lets go, to V_IH (1.3 of 3.3 V):
# t = R*C*ln(3.3/(3.3-1.3)) = 0.93*R*C. With the 10 kohm external pull-ups that the board
# requires (hardware/WIRING.md) and 160-250 pF of wire that is 1.5-2.3 us; on the internal
# pull-ups alone (50-80 kohm) it would be 7.5-19 us, and too short a wait shows a phantom
# piece on the next column. 20 us covers either. A scan costs 12 x SETTLE_US.
SETTLE_US = 20
# LED current budget (mA): every frame is scaled down to draw at most this from the LED
# supply (60 mA per LED at full white, 1 mA dark). Match it to the fuse and supply
# (hardware/BOM.md: 2.5 A fuse, 5 V 3 A supply -> 1500 mA, plus ~0.1 A dark: 64% of the fuse).
LED_BUDGET_MA = 1500
