"""Fakes that behave like the hardware, shipped with the package (as gpiozero ships its mock
pins): the simulated board, the terminal console, event scripts in virtual time, the
choreographer of physical hands and the noisy-game generator.
"""
