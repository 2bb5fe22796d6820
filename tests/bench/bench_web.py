"""Benchmark: the page's push latency and the cost of a snapshot (a script, not a test).

1. Push latency: the board loop, the web server and a simulated board run in this process (as
   `play --web` runs them); a WebSocket client lifts and puts back a piece through `/api/sim`
   ``--rounds`` times. For each change it takes the moment the LED frame went to the board's LED
   sink and the moment the client received the snapshot showing it: the goal is under 100 ms.
2. Snapshot cost: CPU time (time.process_time) of building one snapshot for an orthodox, a
   12x8, a csipgs and a Chego position, interleaved.

Figures depend on the (shared) machine they ran on.

    .venv/bin/python tests/bench/bench_web.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import queue
import statistics
import tempfile
import threading
import time
from pathlib import Path

import aiohttp

from board_driver.host.lifecycle import open_game
from board_driver.journal import GameStore
from board_driver.referee.runner import run_realtime
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import SimulatedBoard
from board_driver.web.board_io import OverlaySink, WebSource
from board_driver.web.service import start_web
from board_driver.web.state import snapshot


def clock() -> int:
    return int(time.monotonic() * 1000)


class TimedSink:
    """The simulated board's LEDs, with the moment each frame was shown."""

    def __init__(self, board):
        self.board = board
        self.led_count = board.led_count
        self.shown: list[tuple[float, object]] = []

    def show(self, frame) -> None:
        self.shown.append((time.monotonic(), frame))
        self.board.show(frame)

    def close(self) -> None:
        pass


def open_session(root: Path, variant: str):
    store = GameStore(root)
    settings = load_settings()
    profile = load_profile("sim")
    opening = open_game(store, profile=profile, settings=settings, variant=variant, new=True, now=clock())
    return store, opening.session


def push_latency(rounds: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        store, session = open_session(Path(tmp), "orthodox")
        board = SimulatedBoard(session.layout, clock=clock, closed=session.layout.closed_sensors(session.occupancy))
        commands: queue.Queue = queue.Queue()
        bridge, server = start_web("127.0.0.1:0", store=store, commands=commands, sim=True, password=None,
                                   data_root=None, say=lambda line: None)
        timed = TimedSink(board)
        sink = OverlaySink(timed)
        bridge.attach(session, board=board, sink=sink)
        stop = threading.Event()
        loop = threading.Thread(target=run_realtime, args=(session, WebSource(board, bridge, wakeable=True), sink, clock),
                                kwargs=dict(commands=commands, stop=stop.is_set, on_notice=bridge.notice,
                                            on_update=bridge.on_update), daemon=True)
        loop.start()
        lags: list[float] = []

        async def client() -> None:
            async with aiohttp.ClientSession() as http:
                async with http.ws_connect(server.url + "api/ws") as ws:
                    await ws.receive(timeout=5)
                    for i in range(rounds):
                        for kind in ("lift", "place"):
                            asyncio.ensure_future(http.post(server.url + "api/sim", json={kind: "g1"}))
                            want = kind == "lift"
                            while True:
                                msg = json.loads((await ws.receive(timeout=5)).data)["state"]
                                got = time.monotonic()
                                if ("g1" in msg["lifted"]) == want and (msg["leds"] != {} or not want):
                                    break
                            shown = [t for t, _ in timed.shown if t <= got]
                            if shown and kind == "lift":
                                lags.append((got - shown[-1]) * 1000)
                            await asyncio.sleep(0.12)
        asyncio.run(client())
        stop.set()
        loop.join(5)
        server.stop()
        session.close()
        return lags


def snapshot_cost(reps: int) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sessions = {}
        for v in ("orthodox", "tomorrow-1", "csipgs-power-standard", "chego"):
            _, s = open_session(Path(tmp) / v, v)
            sessions[v] = s
        for _ in range(reps):
            for v, s in sessions.items():
                t = time.process_time()
                json.dumps(snapshot(s, sim=True, version=1, notices=[]))
                out.setdefault(v, []).append(time.process_time() - t)
        for s in sessions.values():
            s.close()
    return {v: statistics.median(ts) * 1000 for v, ts in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    lags = push_latency(args.rounds)
    lags.sort()
    print(f"push after the LED frame (ms, {len(lags)} changes): median {statistics.median(lags):.1f}, "
          f"p90 {lags[int(len(lags) * 0.9) - 1]:.1f}, max {lags[-1]:.1f} (goal: under 100)")
    for v, ms in snapshot_cost(args.reps).items():
        print(f"snapshot + JSON, {v}: {ms:.2f} ms CPU (median of {args.reps})")


if __name__ == "__main__":
    main()
