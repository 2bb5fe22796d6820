"""Benchmark: perft nodes/s of the engine against python-chess, measured side by side.

Run by hand:  .venv/bin/python tests/bench/bench_perft.py [--repeat N]

Both count the last ply in bulk (python-chess: ``board.legal_moves.count()``; the engine:
``Position.count_legal()``), from orthodox chess's start to depth 4. Then nodes/s for every
Tomorrow's Chess variant at depth 3 (plus courier). Each figure is the best of N runs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import chess  # noqa: E402

from board_driver.config import load_variant  # noqa: E402
from engine.perft import perft  # noqa: E402
from engine.position import Position  # noqa: E402


def chess_perft(board: chess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    n = 0
    for m in board.legal_moves:
        board.push(m)
        n += chess_perft(board, depth - 1)
        board.pop()
    return n


def best(fn, repeat: int) -> tuple[int, float]:
    times = []
    nodes = 0
    for _ in range(repeat):
        t = time.perf_counter()
        nodes = fn()
        times.append(time.perf_counter() - t)
    return nodes, min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    v = load_variant("orthodox")
    ours_n, ours_t = best(lambda: perft(Position.from_fen(v), 4), args.repeat)
    theirs_n, theirs_t = best(lambda: chess_perft(chess.Board(), 4), args.repeat)
    assert ours_n == theirs_n == 197281, (ours_n, theirs_n)
    print(f"orthodox perft 4 ({ours_n} nodes, best of {args.repeat}):")
    print(f"  fairyboard    {ours_t:7.3f} s  {ours_n / ours_t:12,.0f} nodes/s")
    print(f"  python-chess  {theirs_t:7.3f} s  {theirs_n / theirs_t:12,.0f} nodes/s")
    print(f"  ratio (fairyboard speed / python-chess speed): {theirs_t / ours_t:.2f}")
    print()
    print("12x8 variants, perft 3 from the start:")
    for name in ("tomorrow-1", "tomorrow-2", "tomorrow-3", "tomorrow-4", "tomorrow-5", "tomorrow-4-great", "courier"):
        var = load_variant(name)
        n, t = best(lambda: perft(Position.from_fen(var), 3), args.repeat)
        print(f"  {name:18} {n:9,} nodes  {t:7.3f} s  {n / t:12,.0f} nodes/s")


if __name__ == "__main__":
    main()
