"""Benchmark: the CPU and the wake-ups of an idle service, board by board, side by side.

Run by hand:  .venv/bin/python tests/bench/bench_idle.py [--seconds S] [--only NAME ...]

Starts each service (``fairyboard serve``, the real CLI) in a data folder of its own, waits for
its game to be set up, lets start-up settle, then reads over ``S`` seconds in which nothing
happens on the board:

* its CPU time (user + system, /proc/PID/stat), as CPU seconds per minute and share of a core;
* its wake-ups: the context switches of all its threads (/proc/PID/task/*/status, voluntary
  ones: a thread that blocked and was woken), per second.

The services:

* ``sim``: ``serve --board sim``;
* ``sim+page``: the same with ``--web`` and a WebSocket held open on ``/api/ws`` (a client as
  the page's, answering the server's heartbeat);
* ``pico``: the Pico board (``backend: serial``) on the firmware's own main.py on MicroPython's
  unix port behind a pty (tests/firmware/unix_board.py), which streams occupancy and
  heartbeats as the Pico does (``periodic_ms``, ``heartbeat_ms``: 1000);
* ``gpio``: the Pi scanning the matrix itself (``backend: gpio``, its buttons polled) and driving
  the LEDs on SPI (``backend: pi``): the profile configs/boards/gpio-12x8.yaml as it is, RPi.GPIO
  being the fake Pi of tests/hardware/fake_gpio.py and spidev an SPI device that sends nothing,
  both on the module path, pieces on ranks 1, 2, 7 and 8; measured once the scan has slowed to its idle rate (nothing changed
  for ``IDLE_AFTER_S``: the steady state of a board left alone). Two rows, both services running
  at once and measured over the same seconds: ``gpio``, scanning a register at a time as on a
  Pi 1-4 (``access: auto``; the fake Pi standing in for /dev/gpiomem), and ``gpio-pins``, pin
  by pin through RPi.GPIO's calls as on a Pi 5 (``access: pins``);
* ``club``: ``serve --board sim`` with a ``broker:`` section, publishing to a real mosquitto
  (scripts/system-deps installs it).

Goal: an idle board uses under 1% of a core (a Pi Zero 2 W has four slow cores); scanning the
matrix on the Pi itself costs CPU by nature (bench_gpio_scan.py has its figure alone).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from board_driver.hardware.gpio_matrix import IDLE_AFTER_S  # noqa: E402
FAIRYBOARD = Path(sys.executable).with_name("fairyboard")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS       # utime, stime


def wakeups(pid: int) -> int:
    """Voluntary context switches of every thread of ``pid``: how often one blocked and woke."""
    n = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    n += int(line.split()[1])
        except OSError:
            pass                                    # a thread that ended meanwhile
    return n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_profile(folder: Path, base: str, changes: str) -> Path:
    """A copy of ``configs/boards/BASE.yaml`` with its ``hardware:`` (and anything after)
    replaced by ``changes``."""
    text = (ROOT / "configs" / "boards" / f"{base}.yaml").read_text()
    if "\nhardware:" in text:
        text = text[:text.index("\nhardware:") + 1]
    path = folder / f"{base}-bench.yaml"
    path.write_text(text + changes)
    return path


@contextmanager
def serve(args: list[str], env: dict | None = None) -> Iterator[subprocess.Popen]:
    """``fairyboard serve ARGS --new`` in a data folder of its own, once its game is set up."""
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "FAIRYBOARD_DATA": data, **(env or {})}
        proc = subprocess.Popen([str(FAIRYBOARD), "serve", "--new", *args], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        try:
            assert proc.stdout is not None
            end = time.monotonic() + 120
            said = b""
            while b"New game" not in said:          # the game is set up: from here on nothing happens
                if time.monotonic() > end or proc.poll() is not None:
                    raise RuntimeError("serve did not start: " + said.decode(errors="replace"))
                if select.select([proc.stdout], [], [], 0.5)[0]:
                    said += os.read(proc.stdout.fileno(), 4096)
            drain = threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(proc.stdout.fileno(), 4096), b"")],
                                     daemon=True)
            drain.start()                           # keep its pipe from filling
            yield proc
        finally:
            proc.terminate()
            proc.wait(10)


def measure(proc: subprocess.Popen, seconds: float, settle: float = 2.0) -> tuple[float, float]:
    """(CPU seconds per minute, wake-ups per second) over ``seconds`` of nothing happening,
    after ``settle`` seconds."""
    time.sleep(settle)                              # start-up work (the first LED frame, the caches) settles
    c0, w0, t0 = cpu_seconds(proc.pid), wakeups(proc.pid), time.monotonic()
    time.sleep(seconds)
    c1, w1, t1 = cpu_seconds(proc.pid), wakeups(proc.pid), time.monotonic()
    if proc.poll() is not None:
        raise RuntimeError("the service ended while measured")
    return 60 * (c1 - c0) / (t1 - t0), (w1 - w0) / (t1 - t0)


# -- the services -------------------------------------------------------------------------------

def run_sim(seconds: float) -> tuple[float, float]:
    with serve(["--board", "sim"]) as proc:
        return measure(proc, seconds)


class Page:
    """A WebSocket held open on the page's /api/ws, as the page holds it (heartbeat answered)."""

    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}/api/ws"
        self.messages = 0
        self.connected = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._run(),), daemon=True)

    async def _run(self) -> None:
        import aiohttp
        self._stop = asyncio.Event()
        async with aiohttp.ClientSession() as http:
            end = time.monotonic() + 60
            while True:
                try:
                    sock = await http.ws_connect(self.url, autoping=True)
                    break
                except aiohttp.ClientError:
                    if time.monotonic() > end:
                        raise
                    await asyncio.sleep(0.2)
            async with sock:
                self.connected.set()
                reader = asyncio.ensure_future(self._read(sock))
                await self._stop.wait()
                reader.cancel()

    async def _read(self, sock) -> None:
        async for _ in sock:
            self.messages += 1

    def __enter__(self) -> Page:
        self._thread.start()
        if not self.connected.wait(60):
            raise RuntimeError(f"no WebSocket on {self.url}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


def run_page(seconds: float) -> tuple[float, float]:
    port = free_port()
    with serve(["--board", "sim", "--web", f"127.0.0.1:{port}"]) as proc, Page(port):
        return measure(proc, seconds)


def run_pico(seconds: float) -> tuple[float, float]:
    sys.path.insert(0, str(ROOT / "tests" / "firmware"))
    sys.path.insert(0, str(ROOT / "tests" / "firmware_bridge"))
    from unix_board import UnixBoard
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        folder = Path(tmp)
        (folder / "board").mkdir()
        board = UnixBoard(folder / "board")
        stack.callback(board.close)
        profile = write_profile(folder, "pico-serial", f"""hardware:
  sensors:
    backend: serial
    ports: [{board.port}]
    periodic_ms: 1000
    heartbeat_ms: 1000
    ready_timeout: 60
  leds:
    backend: serial
""")
        with serve(["--board", str(profile)]) as proc:
            return measure(proc, seconds)


FAKE_RPI = '''"""RPi.GPIO for the idle benchmark: the fake Pi of tests/hardware/fake_gpio.py, calls not kept."""
import collections, sys
sys.path.insert(0, {hardware!r})
from fake_gpio import PI_COLUMNS, PI_ROWS, FakeGPIO, ReedBoard
_pi = FakeGPIO(ReedBoard(), rows=PI_ROWS, columns=PI_COLUMNS)
_pi.board.set_pieces(list(range(24)) + list(range(72, 96)))     # a set-up board: ranks 1, 2, 7 and 8
_pi.calls = collections.deque(maxlen=100)
_pi.scan_times = collections.deque(maxlen=100)
for _name in dir(_pi):
    if not _name.startswith("_"):
        globals()[_name] = getattr(_pi, _name)
'''


SITECUSTOMIZE = '''"""The fake Pi is a Pi: its GPIO devices are there (this machine has no /dev/gpiomem), and
with ``access: auto`` the matrix scans its bank a register at a time, as on a Pi 1-4."""
import board_driver.hardware.backends as backends
import RPi.GPIO as GPIO
backends.gpio_device_problem = lambda dev=None: None
backends.open_registers = lambda pins: GPIO._pi.registers()
'''


FAKE_SPIDEV = '''"""spidev for the idle benchmark: an SPI device that takes the LED frames and sends nothing."""
class SpiDev:
    max_speed_hz = mode = 0
    no_cs = False
    def open(self, bus, device): pass
    def writebytes2(self, data): pass
    def close(self): pass
'''


@contextmanager
def gpio_service(access: str) -> Iterator[subprocess.Popen]:
    """``serve`` on the GPIO profile as shipped, on the fake Pi, scanning with ``access``."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "RPi").mkdir()
        (folder / "RPi" / "__init__.py").write_text("")
        (folder / "RPi" / "GPIO.py").write_text(FAKE_RPI.format(hardware=str(ROOT / "tests" / "hardware")))
        (folder / "spidev.py").write_text(FAKE_SPIDEV)
        (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
        gpio = (ROOT / "configs" / "boards" / "gpio-12x8.yaml").read_text()
        hardware = gpio[gpio.index("\nhardware:") + 1:]         # the profile's own: matrix, SPI LEDs, buttons
        assert "    access: auto" in hardware
        hardware = hardware.replace("    access: auto", f"    access: {access}", 1)
        profile = write_profile(folder, "gpio-12x8", hardware)
        with serve(["--board", str(profile)], env={"PYTHONPATH": str(folder)}) as proc:
            yield proc


def run_gpio_both(seconds: float) -> list[tuple[str, float, float]]:
    """The GPIO service scanning a register at a time (``gpio``, a Pi 1-4) and pin by pin
    (``gpio-pins``, as on a Pi 5), both running at once and measured over the same seconds, so
    that the machine's other load weighs on both alike."""
    with gpio_service("auto") as regs, gpio_service("pins") as pins:
        time.sleep(2.0 + IDLE_AFTER_S)                        # the scans have slowed to their idle rate
        c0, w0 = [cpu_seconds(p.pid) for p in (regs, pins)], [wakeups(p.pid) for p in (regs, pins)]
        t0 = time.monotonic()
        time.sleep(seconds)
        c1, w1 = [cpu_seconds(p.pid) for p in (regs, pins)], [wakeups(p.pid) for p in (regs, pins)]
        dt = time.monotonic() - t0
        if regs.poll() is not None or pins.poll() is not None:
            raise RuntimeError("a service ended while measured")
    return [(name, 60 * (c1[i] - c0[i]) / dt, (w1[i] - w0[i]) / dt) for i, name in enumerate(("gpio", "gpio-pins"))]


def run_club(seconds: float) -> tuple[float, float]:
    mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        conf = folder / "mosquitto.conf"
        conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        broker = subprocess.Popen([mosquitto, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            end = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), 1).close()
                    break
                except OSError:
                    if time.monotonic() > end or broker.poll() is not None:
                        raise RuntimeError("mosquitto did not start") from None
                    time.sleep(0.1)
            profile = write_profile(folder, "sim", f"broker:\n  host: 127.0.0.1\n  port: {port}\n  name: bench-board\n")
            with serve(["--board", str(profile)]) as proc:
                return measure(proc, seconds)
        finally:
            broker.terminate()
            broker.wait(10)


SERVICES = {"sim": run_sim, "sim+page": run_page, "pico": run_pico, "gpio": run_gpio_both, "club": run_club}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--only", nargs="*", choices=list(SERVICES), help="measure only these services")
    args = ap.parse_args()
    rows = []
    for name in args.only or SERVICES:
        try:
            got = SERVICES[name](args.seconds)
            for label, cpm, wps in got if isinstance(got, list) else [(name, *got)]:
                rows.append((label, f"{cpm:8.3f}", f"{100 * cpm / 60:6.2f}%", f"{wps:8.1f}"))
        except Exception as exc:            # one service that cannot run here does not hide the others
            rows.append((name, "       -", "      -", f"  ({type(exc).__name__}: {exc})"))
    print(f"idle for {args.seconds:.0f} s each:")
    print(f"  {'service':10} {'CPU s/min':>9} {'of a core':>9} {'wake-ups/s':>10}")
    for name, cpm, share, wps in rows:
        print(f"  {name:10} {cpm:>9} {share:>9} {wps:>10}")


if __name__ == "__main__":
    main()
