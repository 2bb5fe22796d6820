"""Benchmark: the board loop while the computer thinks (a script, not a test).

* ``loop`` -- the service loop (:func:`board_driver.referee.runner.run_realtime`) on a real clock, the
  computer (``--spec``, default ``builtin``) playing Black with ``--seconds`` a move (default 1,
  the service's default): the player makes a move on a scripted board, and the time from the
  moment the move is stable (its last frame plus the debounce time) to the LED frame showing it
  is measured, then the time until the computer's move is lit. ``--sync`` keeps the computer
  thinking inside the loop's step, as scripted games do.
* ``commit`` -- a commit (the frame that completes a move: reconcile, engine push, journal,
  LED frame) timed while a built-in search runs in another thread of the same process, at
  several thread switch intervals (:func:`sys.setswitchinterval`), against the same commit
  with no search running. The time counts from the frame's arrival (the loop waits for it
  outside the interpreter, as a device read does), so it includes the wait for the
  interpreter's lock when the loop wakes. Also the search's nodes per second at each interval (what the
  loop's share of the interpreter costs the search).

    .venv/bin/python tests/bench/bench_computer.py [--samples N] [--seconds S] [--spec SPEC] [--sync]
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board_driver.config import load_variant  # noqa: E402
from board_driver.devices import RawFrame  # noqa: E402
from board_driver.opponents.computer import Computer  # noqa: E402
from board_driver.opponents.players import make_player  # noqa: E402
from board_driver.referee.layout import Layout  # noqa: E402
from board_driver.referee.runner import run_realtime  # noqa: E402
from board_driver.referee.session import Session  # noqa: E402
from board_driver.settings import load_profile, load_settings  # noqa: E402
from engine.game import new_game  # noqa: E402

MOVES = [("e2", "e4"), ("d2", "d4"), ("g1", "f3"), ("c2", "c4"), ("b1", "c3"), ("f2", "f4")]


def clock() -> int:
    return int(time.monotonic() * 1000)


class TimedSource:
    """Frames played at wall-clock times (milliseconds of :func:`clock`)."""

    sensor_count = 96

    def __init__(self):
        self.frames: list[RawFrame] = []
        self.lock = threading.Lock()

    def add(self, frame: RawFrame) -> None:
        with self.lock:
            self.frames.append(frame)

    def read(self, timeout: float):
        end = time.monotonic() + timeout
        while True:
            with self.lock:
                if self.frames and self.frames[0].t <= clock():
                    return self.frames.pop(0)
                nxt = self.frames[0].t if self.frames else None
            left = end - time.monotonic()
            if left <= 0:
                return None
            wait = left if nxt is None else min(left, max(0.0, (nxt - clock()) / 1000))
            time.sleep(max(wait, 0.0005))

    def close(self) -> None:
        pass


class TimedSink:
    led_count = 12 * 8

    def __init__(self):
        self.shown: list[tuple[float, object]] = []

    def show(self, frame) -> None:
        self.shown.append((time.monotonic() * 1000, frame))

    def close(self) -> None:
        pass


def session_for(spec: str, seconds: float) -> Session:
    v = load_variant("orthodox")
    settings = load_settings()
    s = Session(new_game(v), variant_name="orthodox", layout=Layout.place(load_profile("sim"), v.geometry),
                settings=settings)
    s.attach_computer(Computer({1: make_player(spec, v)}, seconds=seconds))
    return s


def loop_once(spec: str, seconds: float, frm: str, to: str, sync: bool) -> tuple[float, float]:
    """(ms from the move being stable to its LED frame, ms to the computer's move lit)."""
    s = session_for(spec, seconds)
    if sync:
        s.computer.background = False
        s.computer.think_in_background = lambda *a, **k: None      # noqa: E731 (the loop's switch, disabled)
    lay, geo = s.layout, s.game.geometry
    src, sink = TimedSource(), TimedSink()
    closed = set(lay.closed_sensors(s.occupancy))
    t0 = clock() + 300
    closed.discard(lay.sensor_of(geo.parse(frm)))
    src.add(RawFrame(t0, frozenset(closed)))
    closed.add(lay.sensor_of(geo.parse(to)))
    src.add(RawFrame(t0 + 300, frozenset(closed)))
    stable = t0 + 300 + s.settings.debounce_ms
    marks: dict[str, float] = {}

    def stop() -> bool:
        if "move" not in marks and s.game.history:
            marks["move"] = 0.0
        if s.computer.hint() is not None and "plan" not in marks:
            marks["plan"] = 0.0
        return clock() > stable + seconds * 1000 + 1500 or ("plan" in marks and clock() > stable + 50)

    run_realtime(s, src, sink, clock, stop=stop, on_notice=lambda line: None)
    s.close()
    move_lit = plan_lit = None
    frm_p = lay.physical(geo.parse(frm))
    to_p = lay.physical(geo.parse(to))
    for t, f in sink.shown:
        if move_lit is None and f.colors[frm_p] != (0, 0, 0) and f.colors[to_p] != (0, 0, 0):
            move_lit = t - stable
        if plan_lit is None and move_lit is not None and any(b for b in f.blink):
            plan_lit = t - stable
    return move_lit, plan_lit


def commit_under_search(samples: int, intervals, seconds: float):
    """{interval: [(wall ms, cpu ms) per commit]}, {interval: search nodes/s} (None: no search)."""
    from board_driver.opponents.players import BuiltinPlayer, parse_spec
    v = load_variant("orthodox")
    settings = load_settings()
    rng = random.Random(1)
    out, rates = {}, {}
    for interval in intervals:
        old = sys.getswitchinterval()
        times = []
        stop = threading.Event()
        nodes = [0, 0.0]

        def search():
            p = BuiltinPlayer(parse_spec("builtin"))
            g = new_game(v)
            for a in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"):
                g.push(g.parse(a))
            t = time.monotonic()
            while not stop.is_set():
                p.turn(g.copy(), seconds, stop=stop.is_set)
                nodes[0] += p.last_nodes
            nodes[1] = time.monotonic() - t

        th = None
        if interval is not None:
            sys.setswitchinterval(interval)
            th = threading.Thread(target=search, daemon=True)
            th.start()
            time.sleep(0.2)
        try:
            for i in range(samples):
                s = Session(new_game(v), variant_name="orthodox", layout=Layout.place(load_profile("sim"), v.geometry),
                            settings=settings)
                s.update(0)
                s.prepare()
                frm, to = MOVES[i % len(MOVES)]
                lay, geo = s.layout, s.game.geometry
                closed = set(lay.closed_sensors(s.occupancy))
                closed.discard(lay.sensor_of(geo.parse(frm)))
                s.on_frame(RawFrame(1000, frozenset(closed)))
                s.tick(1000 + settings.debounce_ms)
                closed.add(lay.sensor_of(geo.parse(to)))
                s.on_frame(RawFrame(1200, frozenset(closed)))
                # the loop waits for the frame outside the interpreter (as a device read does) and
                # it arrives at any moment of the search: the time counts from its arrival, so the
                # wait for the interpreter's lock when the loop wakes is included
                pause = rng.uniform(0.001, 0.02)
                w0 = time.perf_counter() + pause
                time.sleep(pause)
                c0 = time.thread_time()
                s.tick(1200 + settings.debounce_ms)
                _ = s.leds
                w, c = time.perf_counter() - w0, time.thread_time() - c0
                assert len(s.game.history) == 1
                times.append((w * 1000, c * 1000))
        finally:
            stop.set()
            if th is not None:
                th.join()
            sys.setswitchinterval(old)
        out[interval] = times
        rates[interval] = nodes[0] / nodes[1] if nodes[1] else None
    return out, rates


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--spec", default="builtin")
    ap.add_argument("--sync", action="store_true", help="the computer thinks inside the loop's step")
    ap.add_argument("--only", choices=("loop", "commit"))
    args = ap.parse_args(argv)
    if args.only != "commit":
        rows = []
        for i in range(max(3, args.samples // 20)):
            frm, to = MOVES[i % len(MOVES)]
            rows.append(loop_once(args.spec, args.seconds, frm, to, args.sync))
        lit = [r[0] for r in rows if r[0] is not None]
        plan = [r[1] for r in rows if r[1] is not None]
        mode = "in the loop's step" if args.sync else "as the loop runs it"
        print(f"loop ({args.spec}, {args.seconds:g} s a move, thinking {mode}), {len(rows)} moves:")
        print(f"  move stable -> its LED frame: median {pct(lit, 50):.0f} ms, max {max(lit):.0f} ms")
        if plan:
            print(f"  move stable -> computer's move lit: median {pct(plan, 50):.0f} ms, max {max(plan):.0f} ms")
    if args.only != "loop":
        intervals = [None, 0.005, 0.002, 0.001, 0.0005]
        res, rates = commit_under_search(args.samples, intervals, args.seconds)
        print(f"commit (orthodox, opening moves, {args.samples} samples) while a search runs in a thread:")
        print(f"  {'switch interval':>16} {'wall p50':>9} {'wall p99':>9} {'wall max':>9} {'cpu p50':>8} {'search knodes/s':>16}")
        for iv in intervals:
            w = [x[0] for x in res[iv]]
            c = [x[1] for x in res[iv]]
            label = "no search" if iv is None else f"{iv * 1000:g} ms"
            rate = "" if rates[iv] is None else f"{rates[iv] / 1000:.1f}"
            print(f"  {label:>16} {pct(w, 50):9.2f} {pct(w, 99):9.2f} {max(w):9.2f} {pct(c, 50):8.2f} {rate:>16}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
