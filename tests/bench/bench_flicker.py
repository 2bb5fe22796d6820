"""Per-event cost of a flickering piece: a sensor that keeps changing (a loose piece, a bad
reed switch) must cost the same for the 16,000th event as for the first.

Plays 1.e4, then flickers the pawn on e4 (the piece that just moved: the reconciler also tries
a takeback and a replacement of 1.e4) and, separately, Black's pawn on d7, for 2,000 and 16,000
debounced events each, and prints the CPU time (``time.process_time``) per event, overall and
for the last thousand events. Figures are from a shared machine: compare runs of one sitting.

    .venv/bin/python tests/bench/bench_flicker.py [--events 2000 16000]
"""

from __future__ import annotations

import argparse
import time

from board_driver.config import load_variant
from board_driver.referee.layout import Layout
from board_driver.referee.runner import pump
from board_driver.referee.session import Session
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import SimulatedBoard, VirtualClock
from engine.game import new_game


def run(n: int, square: str) -> tuple[float, float]:
    settings = load_settings()
    v = load_variant("orthodox")
    game = new_game(v)
    s = Session(game, variant_name="orthodox", layout=Layout.place(load_profile("sim"), v.geometry),
                settings=settings, san_notices=False)
    clock = VirtualClock(0)
    board = SimulatedBoard(s.layout, clock=clock, closed=s.layout.closed_sensors(game.occupancy()))
    t = 100
    for kind, sq in (("lift", "e2"), ("place", "e4")):
        clock.advance_to(t)
        getattr(board, kind)(sq, t)
        pump(s, board, None, t)
        t += 200
    t += 1000
    pump(s, board, None, t)
    assert [a.text for a in game.history] == ["e2e4"], game.history
    last_k = max(0, n - 1000)
    start = time.process_time()
    t_last = start
    for i in range(n):
        if i == last_k:
            t_last = time.process_time()
        clock.advance_to(t)
        (board.lift if i % 2 == 0 else board.place)(square, t)
        pump(s, board, None, t)
        t += 100
    end = time.process_time()
    assert [a.text for a in game.history] == ["e2e4"]
    return (end - start) / n, (end - t_last) / (n - last_k)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, nargs="*", default=[2000, 16000])
    args = ap.parse_args()
    print(f"{'square':8} {'events':>7} {'total s':>9} {'us/event':>9} {'us/event (last 1000)':>21}")
    for sq in ("e4", "d7"):
        for n in args.events:
            per, last = run(n, sq)
            print(f"{sq:8} {n:7d} {per * n:9.2f} {per * 1e6:9.0f} {last * 1e6:21.0f}", flush=True)


if __name__ == "__main__":
    main()
