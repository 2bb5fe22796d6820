"""Benchmark: the built-in search's nodes per second beside the move generator's perft speed, in
CPU time, per family.

Run by hand:  .venv/bin/python tests/bench/bench_search.py [--seconds S] [--rounds N] [--old FILE]

For each variant: perft (leaf nodes a second: perft 3 for the chess family on the Position,
perft 2 over the family's Game for the others) and the search from the start position and
from a position a few random turns in (nodes a second, and the depth reached in S seconds of
CPU time). The two are interleaved round by round and the best round is kept, so other load
on a shared machine counts as little as it can.

``--old FILE``: also the same searches by another copy of engine/search.py (``git show
REV:engine/search.py > FILE``), round by round beside this one: the time each takes to
complete depth 1, 2, ... from the mid-game position, and the ratio.

``--old-tree DIR``: the same, against a whole other checkout (``git worktree add DIR REV``),
its game code included, run in a child process round by round beside this one.
``--variant NAME`` (repeatable): only these variants.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board_driver.config import load_variant  # noqa: E402
from engine.game import new_game  # noqa: E402
from engine.perft import game_perft, perft  # noqa: E402
from engine.search import Searcher, random_turn  # noqa: E402

VARIANTS = ("orthodox", "tomorrow-1", "tomorrow-4", "courier", "csipgs", "chego", "cost-progressive")


def _perft_rate(name: str) -> float:
    game = new_game(load_variant(name))
    t0 = time.process_time()
    if game.family == "chess":
        n = perft(game.position, 3)
    else:
        n = game_perft(game, 2)
    return n / max(1e-9, time.process_time() - t0)


def _search_rate(name: str, seconds: float, plies: int) -> tuple[float, int]:
    game = _mid_game(name, plies)
    r = Searcher().choose(game, clock=time.process_time, seconds=seconds)
    return r.nodes / max(1e-9, r.seconds), r.depth


def _mid_game(name: str, plies: int = 8):
    game = new_game(load_variant(name))
    rng = random.Random(3)
    for _ in range(plies):
        if game.outcome() is not None:
            break
        for a in random_turn(game, rng):
            game.push(a)
    return game


def _depth_times(searcher_class, name: str, max_depth: int, budget: float) -> list[float]:
    """CPU seconds to complete each depth 1..max_depth from the mid-game position (until one
    takes more than ``budget``)."""
    out = []
    for d in range(1, max_depth + 1):
        game = _mid_game(name)
        t0 = time.process_time()
        r = searcher_class().choose(game, clock=time.process_time, seconds=budget * 3, depth=d)
        took = time.process_time() - t0
        if r.depth < d:
            break
        out.append(took)
        if took > budget:
            break
    return out


def _best(kept: list[float], got: list[float]) -> list[float]:
    """Depth by depth, the faster of two rounds (a depth only one of them completed counts)."""
    n = max(len(kept), len(got))
    return [min(x for x in (kept[d:d + 1] + got[d:d + 1])) for d in range(n)]


_CHILD = """
import sys
sys.path[:0] = [{tree!r}, {tree!r} + "/tests/bench"]
import bench_search
from engine.search import Searcher
print(bench_search._depth_times(Searcher, {name!r}, 8, {budget!r}))
"""


def _tree_depth_times(tree: str, name: str, budget: float) -> list[float]:
    """_depth_times of the checkout ``tree`` (its search and its game code), in a child process."""
    import ast
    import subprocess
    out = subprocess.run([sys.executable, "-c", _CHILD.format(tree=tree, name=name, budget=budget)],
                         cwd=tree, capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def compare(old_file: str | None, rounds: int, budget: float, variants, old_tree: str | None = None) -> None:
    import os
    if old_tree:
        what = f"the checkout {old_tree}"

        def old_times(name):
            return _tree_depth_times(old_tree, name, budget)
    else:
        import old_search
        what = old_file or ""
        os.environ[old_search.ENV] = what
        old = old_search.load().Searcher

        def old_times(name):
            return _depth_times(old, name, 8, budget)
    print(f"time to complete each depth from the mid-game position (CPU s; best of {rounds}), "
          f"this search beside {what}")
    print(f"{'variant':18} {'depth':>5} {'this':>8} {'old':>8} {'old/this':>9}")
    for name in variants:
        new_t: list[float] = []
        old_t: list[float] = []
        for _ in range(rounds):
            a = _depth_times(Searcher, name, 8, budget)
            b = old_times(name)
            new_t, old_t = _best(new_t, a), _best(old_t, b)
        for d in range(max(len(new_t), len(old_t))):
            n = f"{new_t[d]:8.3f}" if d < len(new_t) else f"{'-':>8}"
            o = f"{old_t[d]:8.3f}" if d < len(old_t) else f"{'-':>8}"
            ratio = f"{old_t[d] / max(1e-9, new_t[d]):9.2f}" if d < len(new_t) and d < len(old_t) else f"{'':9}"
            print(f"{name:18} {d + 1:5} {n} {o} {ratio}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--old", metavar="FILE", help="a copy of engine/search.py to compare with")
    ap.add_argument("--old-tree", metavar="DIR", help="another checkout to compare with (search and game code)")
    ap.add_argument("--variant", action="append", choices=VARIANTS, help="only this variant (repeatable)")
    args = ap.parse_args()
    variants = args.variant or VARIANTS
    if args.old_tree and not (pathlib.Path(args.old_tree) / "engine" / "search.py").is_file():
        ap.error(f"--old-tree {args.old_tree}: not a checkout of this project (no engine/search.py)")
    if args.old or args.old_tree:
        compare(args.old, args.rounds, args.seconds, variants, args.old_tree)
        return
    print(f"{'variant':18} {'perft nodes/s':>14} {'search nodes/s':>15} {'depth':>6} {'(mid-game)':>11} {'depth':>6}")
    for name in variants:
        p = s0 = s1 = 0.0
        d0 = d1 = 0
        for _ in range(args.rounds):
            p = max(p, _perft_rate(name))
            r0, dd0 = _search_rate(name, args.seconds, 0)
            r1, dd1 = _search_rate(name, args.seconds, 8)
            if r0 > s0:
                s0, d0 = r0, dd0
            if r1 > s1:
                s1, d1 = r1, dd1
        print(f"{name:18} {p:14,.0f} {s0:15,.0f} {d0:6} {s1:11,.0f} {d1:6}", flush=True)


if __name__ == "__main__":
    main()
