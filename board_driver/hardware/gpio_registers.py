"""The GPIO bank of a Raspberry Pi 1-4, read and written a register at a time.

A scan through RPi.GPIO costs one call per square (``GPIO.input``): 96 reads and 9 writes for
12 x 8, each call a microsecond or two of Python and C on a Pi. The BCM283x and BCM2711 keep
the levels of GPIO 0-31 in one 32-bit register, GPLEV0, and set or clear any of them with one
write to GPSET0 or GPCLR0 (BCM2835 ARM Peripherals, section 6.1; the same offsets on the
BCM2711). So a scan reads a whole rank of columns at once: ``2 * rows`` writes and ``rows``
reads, 24 operations instead of 105 (``tests/bench/bench_gpio_scan.py``). gpiozero's "native"
pin factory and pigpio read the same registers through the same device.

``/dev/gpiomem`` maps just that GPIO block (4 KiB) for members of the gpio group, without root.
RPi.GPIO still sets the pins up (direction, pull-downs) and releases them: the scan only sets,
clears and reads levels, which is all ``GPIO.output``/``GPIO.input`` do underneath.

The Pi 5 is different: its GPIO is behind the RP1 chip, with other registers, and rpi-lgpio
goes through the kernel's GPIO character device. There, and anywhere the SoC is not known, the
scan keeps to the pin calls (:func:`open_registers` returns None).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Protocol

GPSET0 = 0x1C
"""Output set register 0 (GPIO 0-31): a 1 bit drives that pin high, a 0 bit changes nothing."""
GPCLR0 = 0x28
"""Output clear register 0: a 1 bit drives that pin low."""
GPLEV0 = 0x34
"""Pin level register 0: bit n is GPIO n's level, for inputs and outputs alike."""
BLOCK = 4096
"""The size of the GPIO block /dev/gpiomem maps."""

SOCS = ("brcm,bcm2835", "brcm,bcm2836", "brcm,bcm2837", "brcm,bcm2711")
"""The device-tree names of the SoCs with this register layout (Pi 1, Zero, 2, 3, Zero 2, 4, 400,
CM1-4); the Pi 5's ``brcm,bcm2712`` is not one of them."""


class GpioRegisters(Protocol):
    """Set, clear and read GPIO 0-31 a whole register at a time (bit n = GPIO n)."""

    def set(self, mask: int) -> None: ...

    def clear(self, mask: int) -> None: ...

    def levels(self) -> int: ...

    def close(self) -> None: ...


class MappedRegisters:
    """The GPIO block of a BCM283x/BCM2711 through ``/dev/gpiomem`` (or any file of the same layout)."""

    def __init__(self, path: str | os.PathLike = "/dev/gpiomem") -> None:
        fd = os.open(path, os.O_RDWR | os.O_SYNC)
        try:
            self._map = mmap.mmap(fd, BLOCK, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        # 32-bit words through a memoryview of native unsigned ints: each access is one aligned
        # 32-bit load or store, as a peripheral register needs (struct's "<I" goes byte by byte)
        self._words = memoryview(self._map).cast("I")
        self._set, self._clear, self._lev = GPSET0 // 4, GPCLR0 // 4, GPLEV0 // 4

    def set(self, mask: int) -> None:
        self._words[self._set] = mask

    def clear(self, mask: int) -> None:
        self._words[self._clear] = mask

    def levels(self) -> int:
        return self._words[self._lev]

    def close(self) -> None:
        if not self._map.closed:
            self._words.release()
            self._map.close()


def soc(proc: Path = Path("/proc/device-tree")) -> str | None:
    """The SoC's device-tree name of this machine (``brcm,bcm2711``...), or None where no device
    tree says one of :data:`SOCS` or ``brcm,bcm2712``."""
    try:
        names = (proc / "compatible").read_bytes().decode("ascii", "replace").split("\0")
    except OSError:
        return None
    for name in names:
        if name in SOCS or name == "brcm,bcm2712":
            return name
    return None


def open_registers(pins: tuple[int, ...], *, dev: Path = Path("/dev"),
                   proc: Path = Path("/proc/device-tree")) -> GpioRegisters | None:
    """The register bank for a scan of ``pins`` where this machine has one: a Pi 1-4 (by its
    device tree), every pin in GPIO 0-31, and ``/dev/gpiomem`` open to this process; else None
    (the scan calls RPi.GPIO pin by pin, as on a Pi 5)."""
    if soc(proc) not in SOCS or any(not 0 <= p < 32 for p in pins):
        return None
    try:
        return MappedRegisters(dev / "gpiomem")
    except (OSError, ValueError):
        return None
