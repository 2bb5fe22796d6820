# fairyboard firmware entry point for the Raspberry Pi Pico running MicroPython, which runs
# main.py at every boot. Its first statement turns Ctrl-C off: until then a 0x03 byte from
# the host (every frame the host sends starts 00 03 ...) would stop the board at the REPL.
# Everything else is in fb_main (shipped compiled, as fb_main.mpy, to shorten the boot).
import micropython
micropython.kbd_intr(-1)

import fb_main

fb_main.main()
