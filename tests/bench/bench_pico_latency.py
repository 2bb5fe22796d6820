"""Benchmark: a magnet set down on the emulated Pico, to the LED frame that shows the move on the
chip's WS2812 data pin, under ``fairyboard serve`` (a script, not a test).

The stock MicroPython for RPI_PICO runs the firmware on rp2040js (tests/pico_harness) with its
USB port on a pty; ``fairyboard serve`` opens it as the board's port (a pico-serial profile)
and plays a new orthodox game whose moves the script makes with magnets: lift the piece, hold
it 150 ms, set it down. The chip's time is held to the wall clock's (``realtime``), so the
host's waits count as they would on a real board, and every time is read in the chip's ns:
from the set-down to the end of the first LED frame in which the move's from-square shows the
last-move colour or the hold colour (the move shown: a move held because the piece may slide
on is shown in the hold colour until its commit), and to the frame in which its to-square
shows the last-move colour (the move committed, its record on disk).

Three arrangements, measured one after the other in one run:

* ``now``: the Pico debounces (the profile's ``debounce_ms``: two scans that agree), the host
  does not again;
* ``old``: the Pico debounces 30 ms and the host again (``host_debounce: always``, 40 ms), as
  before;
* ``floor``: no debounce on either side -- the scan, the link, the host's step and the LED
  frame, the least the same path can take.

    .venv/bin/python tests/bench/bench_pico_latency.py [--moves 36] [--only now]
"""

from __future__ import annotations

import argparse
import os
import random
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE.parents[1] / "firmware"), str(HERE.parents[1] / "firmware_bridge"), str(ROOT)]

import pico_emu  # noqa: E402
from pico_emu import MS, board_frames  # noqa: E402

from board_driver.config import configs_dir, load_variant  # noqa: E402
from board_driver.referee.layout import Layout, LedOrder  # noqa: E402
from board_driver.referee.scene import Palette  # noqa: E402
from board_driver.settings import load_profile, read_profile  # noqa: E402
from engine.game import new_game  # noqa: E402
from firmware_bridge import Occupancy, OccupancyReason  # noqa: E402

BRIGHTNESS = 64
HAND_MS = 150             # the piece in the hand, from the lift's LED frame to the set-down
WAIT_S = 20.0             # wall seconds to wait for a frame before giving up on a move

# the Pico's debounce as the shipped profile sets it (configs/boards/pico-serial.yaml)
PROFILE_DEBOUNCE = int(read_profile("pico-serial")[1]["hardware"]["sensors"]["debounce_ms"])

ARRANGEMENTS = {
    # name: (the Pico's debounce_ms, host_debounce, the driver's debounce_ms)
    "now": (PROFILE_DEBOUNCE, "auto", 40),
    "old": (30, "always", 40),
    "floor": (0, "auto", 0),
}


def plan_moves(n: int, seed: int = 7):
    """``n`` quiet moves of one orthodox game (no capture, castling, en passant or promotion),
    each lifting a piece from a square the move before did not touch (so that the from-square's
    colour says this move was shown), sliders preferred (some of them are held)."""
    rng = random.Random(seed)
    g = new_game(load_variant("orthodox"))
    moves, last = [], set()
    while len(moves) < n and g.outcome() is None:
        quiet = []
        for a in g.legal_actions():
            if a.silent or len(a.lifts) != 1 or len(a.places) != 1:
                continue
            (frm,), (to,) = tuple(a.lifts), tuple(a.places)
            if not (g.occupancy() >> to & 1) and frm not in last and _outcome_ok(g, a):
                quiet.append((frm, to, a))
        if not quiet:
            break
        sliders = [m for m in quiet if _on_a_line(m[0], m[1])]
        frm, to, a = rng.choice(sliders if sliders and rng.random() < 0.6 else quiet)
        moves.append((frm, to, a.text))
        last = {frm, to}
        g.push(a)
    return moves


def _on_a_line(a: int, b: int) -> bool:
    df, dr = abs(a % 8 - b % 8), abs(a // 8 - b // 8)
    return max(df, dr) > 1 and (df == 0 or dr == 0 or df == dr)


def _outcome_ok(g, a) -> bool:
    c = g.copy()
    c.push(a)
    return c.outcome() is None


class Serve:
    """``fairyboard serve`` on the emulated Pico's port, reading its output as it comes."""

    def __init__(self, work: Path, port: str, pico_debounce: int, host_debounce: str, driver_debounce: int):
        profile = work / "board.yaml"
        profile.write_text(
            "name: bench-pico\nfiles: 12\nranks: 8\nsensors: identity\nleds: {order: serpentine, first: a1}\n"
            "small_game: {first_file: c, first_rank: centre}\n"
            f"hardware:\n  sensors:\n    backend: serial\n    ports: [{port}]\n    scan_ms: 10\n"
            f"    debounce_ms: {pico_debounce}\n    host_debounce: {host_debounce}\n    ready_timeout: 60\n"
            f"  leds: {{backend: serial, brightness: {BRIGHTNESS}, budget_ma: 1500}}\n")
        configs = work / "configs"
        shutil.copytree(configs_dir(), configs)
        defaults = (configs / "defaults.yaml").read_text()
        (configs / "defaults.yaml").write_text(defaults.replace("debounce_ms: 40", f"debounce_ms: {driver_debounce}"))
        env = {**os.environ, "FAIRYBOARD_DATA": str(work / "data"), "FAIRYBOARD_CONFIGS": str(configs)}
        env.pop("FAIRYBOARD_BOARD", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "board_driver.cli", "serve", "--board", str(profile), "--new"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     cwd=ROOT, env=env)
        self.out = ""

    def until(self, text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while text not in self.out:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise RuntimeError(f"serve never said {text!r}:\n{self.out}")
            if select.select([fd], [], [], min(left, 0.2))[0]:
                self.out += os.read(fd, 4096).decode(errors="replace")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Strip:
    """The LED frames on the emulated chip's data pin, as (start ns, end ns, colours by chain
    index), and when the board sent each OCCUPANCY frame of a change (ns of its first packet)."""

    def __init__(self, pico):
        self.pico = pico
        self.frames: list[tuple[int, int, list[tuple[int, int, int]]]] = []
        self.changes: list[int] = []

    def poll(self) -> None:
        log = self.pico.log()
        self.changes += [f[0] for f in board_frames(log)
                         if isinstance(f[3], Occupancy) and f[3].reason == OccupancyReason.CHANGE]
        for f in log["leds"]:
            raw = bytes.fromhex(f["hex"])
            self.frames.append((f["start"], f["end"], [(raw[i + 1], raw[i], raw[i + 2]) for i in range(0, len(raw) - 2, 3)]))

    def first(self, after: int, pred):
        """The first frame begun after ``after`` (chip ns) that ``pred`` holds for; waits for it."""
        deadline = time.monotonic() + WAIT_S
        while True:
            for start, end, colours in self.frames:
                if start > after and pred(colours):
                    return start, end, colours
            if time.monotonic() > deadline:
                return None
            time.sleep(0.005)
            self.poll()


def measure(image: Path, name: str, moves) -> dict:
    pico_debounce, host_debounce, driver_debounce = ARRANGEMENTS[name]
    v = load_variant("orthodox")
    layout = Layout.place(load_profile("pico-serial"), v.geometry)
    order = LedOrder(12, 8, "serpentine", "a1")
    last_move, hold = (tuple((c * BRIGHTNESS + 127) // 255 for c in rgb) for rgb in (Palette().last_move, Palette().hold))
    closed = set(layout.closed_sensors(new_game(v).occupancy()))
    out = {"lit": [], "committed": [], "reported": [], "held": 0, "missed": 0, "lag": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pico = pico_emu.Pico(image, pty=True)
        serve = None
        try:
            pico.set_closed(closed)
            pico.run_ms(500)                    # booted, listening
            pico.realtime()
            serve = Serve(work, pico.port, pico_debounce, host_debounce, driver_debounce)
            serve.until("New game")
            strip = Strip(pico)
            wall0, sim0 = time.monotonic(), pico.call("now")["now"]
            time.sleep(1.0)
            strip.poll()
            for frm, to, text in moves:
                f_sensor, t_sensor = layout.sensor_of(frm), layout.sensor_of(to)
                f_led = order.chain_index(layout.physical(frm))
                t_led = order.chain_index(layout.physical(to))
                lifted = pico.call("closed", sensors=sorted(closed - {f_sensor}))["now"]
                closed.discard(f_sensor)
                hand = strip.first(lifted, lambda c: True)
                if hand is None:
                    out["missed"] += 1
                    break
                while pico.call("now")["now"] < hand[1] + HAND_MS * MS:
                    time.sleep(0.002)
                closed.add(t_sensor)
                placed = pico.call("closed", sensors=sorted(closed))["now"]
                lit = strip.first(placed, lambda c: c[f_led] in (last_move, hold))
                done = strip.first(placed, lambda c: c[t_led] == last_move)
                if lit is None or done is None:
                    out["missed"] += 1
                    print(f"  {name}: {text}: no frame showed the move", file=sys.stderr)
                    break
                out["lit"].append((lit[1] - placed) / MS)
                out["reported"] += [(t - placed) / MS for t in strip.changes if t > placed][:1]
                out["committed"].append((done[1] - placed) / MS)
                out["held"] += done[1] > lit[1]
                while True:
                    at = pico.call("now")
                    out["lag"] = max(out["lag"], at["lag_ns"] / MS)
                    if at["now"] >= done[1] + 100 * MS:
                        break
                    time.sleep(0.002)
            out["speed"] = (pico.call("now")["now"] - sim0) / MS / 1000 / (time.monotonic() - wall0)
        finally:
            if serve is not None:
                serve.close()
            pico.close()
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moves", type=int, default=36, help="moves per arrangement (default 36)")
    ap.add_argument("--only", choices=sorted(ARRANGEMENTS), action="append", help="measure only these")
    args = ap.parse_args()
    reason = pico_emu.why_not()
    if reason:
        print("bench_pico_latency:", reason)
        return 2
    moves = plan_moves(args.moves)
    names = args.only or ["floor", "now", "old"]
    with tempfile.TemporaryDirectory() as tmp:
        image = pico_emu.build_filesystem(Path(tmp) / "fs")
        results = {n: measure(image, n, moves) for n in names}
    print(f"magnet set down -> LED frame on the emulated Pico's data pin, under serve "
          f"({len(moves)} moves planned; chip time held to the wall clock)")
    print(f"{'':8} {'moves':>5} {'p50 shown':>10} {'p99 shown':>10} {'held':>5} {'p50 commit':>11} "
          f"{'p99 commit':>11} {'p50 reported':>13} {'emulator lag':>13}")
    for n in names:
        r = results[n]
        if not r["lit"]:
            print(f"{n:8} no move measured")
            continue
        print(f"{n:8} {len(r['lit']):5d} {statistics.median(r['lit']):8.1f}ms {pct(r['lit'], 99):8.1f}ms "
              f"{r['held']:5d} {statistics.median(r['committed']):9.1f}ms {pct(r['committed'], 99):9.1f}ms "
              f"{statistics.median(r['reported'] or [0]):11.1f}ms {r['lag']:11.1f}ms")
    for n in names:
        r = results[n]
        if r.get("speed"):
            print(f"{n}: the chip's time ran at {r['speed']:.0%} of the wall clock's (100%: the emulator kept up)")
    if "floor" in results and results["floor"]["lit"]:
        fl = results["floor"]["lit"]
        for n in names:
            if n != "floor" and results[n]["lit"]:
                print(f"{n} / floor: p50 x{statistics.median(results[n]['lit']) / statistics.median(fl):.2f}, "
                      f"p99 x{pct(results[n]['lit'], 99) / pct(fl, 99):.2f}")
    print("shown: to the end of the frame showing the move (last-move or hold colour on its from-square); "
          "commit: to the frame with its record on disk (last-move colour on its to-square); reported: to the "
          "board's OCCUPANCY CHANGE leaving the chip (the firmware's scan and debounce); emulator lag: the most "
          "the chip's time fell behind the wall clock between moves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
