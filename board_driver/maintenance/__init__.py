"""Looking after the hardware: calibration, the self-test, installing the service.
"""
