"""Noisy physical games: the share of games the driver records exactly, stops for a correction,
or gets wrong (the goal: none).

Games are played by python-chess (orthodox), Fairy-Stockfish through pyffish (the 12x8 arrays
it can express, Courier Chess) and the engine's legal actions (csipgs drops and purchases, Chego
drops and removals, Cost Progressive multi-move turns), then made on the simulated board with
bounces, slides, knocked pieces, late victims, hesitations, capturer hesitations, victims set
aside, victims set down after the capture and takebacks (board_driver/sim/noise.py). After every segment the recorded game must be a
prefix of the game played; a move that was not played is "wrong" (with the noise that caused it).

    .venv/bin/python tests/bench/bench_noisy.py [--games 1200] [--plies 40] [--seed 0] [--only KIND [--rate R]]

Prints one line per family and the totals; CPU time per game (``time.process_time``, a shared
machine: compare runs of one sitting). ``--only KIND`` makes that noise alone (at its usual
rate, or ``--rate``) and adds the figures of the games where it was made.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "board_driver"))

from noisytools import FAMILIES, noisy_game  # noqa: E402

from board_driver.sim.noise import DEFAULT_RATES, KINDS, run_noisy  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=1200, help="games in all, shared among the families")
    ap.add_argument("--plies", type=int, default=40)
    ap.add_argument("--seed", default="0", help="seed prefix (another seed, other games)")
    ap.add_argument("--only", choices=KINDS, help="make this noise alone")
    ap.add_argument("--rate", type=float, help="with --only: its rate (default: the usual one)")
    args = ap.parse_args()
    rates = None
    if args.only:
        rates = {args.only: DEFAULT_RATES[args.only] if args.rate is None else args.rate}
    with_kind = Counter()
    per_family = max(1, args.games // len(FAMILIES))
    total = Counter()
    noise_total = Counter()
    causes = Counter()
    cpu = 0.0
    print(f"{'family':18} {'games':>6} {'equal':>7} {'stopped':>8} {'wrong':>6}   sources")
    for fam, variants in FAMILIES.items():
        c = Counter()
        sources = Counter()
        for k in range(per_family):
            v = variants[k % len(variants)]
            ng = noisy_game(v, f"{args.seed}/{k}", args.plies, rates)
            t0 = time.process_time()
            out = run_noisy(ng)
            cpu += time.process_time() - t0
            c[out.verdict] += 1
            if args.only and ng.noise[args.only]:
                with_kind[out.verdict] += 1
            sources[ng.source] += 1
            noise_total.update(ng.noise)
            if out.verdict != "equal":
                causes[(out.verdict, out.cause)] += 1
            if out.verdict == "wrong":
                print(f"  WRONG {v} seed {args.seed}/{k}: after {out.cause}: {' '.join(out.recorded[-3:])}",
                      flush=True)
        total += c
        n = sum(c.values())
        print(f"{fam:18} {n:6d} {c['equal'] / n:7.1%} {c['stopped'] / n:8.1%} {c['wrong'] / n:6.1%}   "
              + ", ".join(f"{s} {m}" for s, m in sorted(sources.items())), flush=True)
    n = sum(total.values())
    print(f"{'all':18} {n:6d} {total['equal'] / n:7.1%} {total['stopped'] / n:8.1%} {total['wrong'] / n:6.1%}")
    print(f"games: {n}; equal {total['equal']}, stopped for a correction {total['stopped']}, wrong {total['wrong']}")
    print("noise made: " + ", ".join(f"{k} {v}" for k, v in sorted(noise_total.items())))
    print("stops and errors by the noise before them: "
          + (", ".join(f"{v} {c}: {m}" for (v, c), m in causes.most_common()) or "none"))
    if args.only:
        m = sum(with_kind.values())
        print(f"games with {args.only}: {m}; equal {with_kind['equal']}, stopped {with_kind['stopped']}, "
              f"wrong {with_kind['wrong']}")
    print(f"driver CPU time: {cpu / n * 1000:.0f} ms per game")


if __name__ == "__main__":
    main()
