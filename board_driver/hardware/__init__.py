"""Real hardware behind the driver's device Protocols (:mod:`board_driver.devices`).

* :mod:`.gpio_matrix` -- the Pi scans the reed-switch matrix through the RPi.GPIO API;
* :mod:`.serial_board` -- the Pico firmware's board over :mod:`firmware_bridge`;
* :mod:`.pi_leds` -- WS2812 LEDs driven from the Pi (SPI or PWM), an optional extra;
* :mod:`.buttons` -- push buttons on GPIO that send console commands;
* :mod:`.backends` -- builds what a board profile's ``hardware:`` section names.

Every device module is imported lazily (RPi.GPIO, spidev, rpi_ws281x are only needed on a Pi),
and every device takes its module, port or clock as a keyword argument, so the tests run the
same code on fakes.
"""
