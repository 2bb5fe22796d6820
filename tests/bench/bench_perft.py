"""Benchmark: perft of the engine against python-chess, interleaved, in CPU time.

Run by hand:  .venv/bin/python tests/bench/bench_perft.py [--rounds N] [--depth D]

1. Whole processes: ``fairyboard perft --variant orthodox D`` (the installed command, start-up
   included) against python-chess counting the same perft in a process of its own, in its
   fastest correct way (bulk count at the last ply: ``len(list(board.legal_moves))``). The two
   alternate, N rounds; each process's CPU time (user + system, from ``wait4``) is taken, so
   other load on a shared machine counts against neither side.
2. In one process, perft 4 from the start, interleaved:
   * bulk count: the engine's ``count_legal()`` (counts legal moves without listing them)
     against python-chess's ``len(list(board.legal_moves))`` at the last ply;
   * equal work: the engine lists the last ply's moves too (``len(legal_moves())``).
3. Nodes/s of the 12x8 variants at perft 3 (CPU time, best of N).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))           # chess_reference

import chess  # noqa: E402

from board_driver.config import load_variant  # noqa: E402
from chess_reference import chess_perft  # noqa: E402
from engine.perft import perft  # noqa: E402
from engine.position import Position  # noqa: E402

PERFT = {1: 20, 2: 400, 3: 8902, 4: 197281, 5: 4865609, 6: 119060324}

CHESS_SCRIPT = """
import sys, chess
def perft(b, d):
    if d == 1:
        return len(list(b.legal_moves))
    n = 0
    for m in b.legal_moves:
        b.push(m)
        n += perft(b, d - 1)
        b.pop()
    return n
print(perft(chess.Board(), int(sys.argv[1])))
"""


def listed_perft(pos: Position, depth: int) -> int:
    """The engine's perft listing every move at the last ply (the work python-chess does)."""
    if depth == 1:
        return len(pos.legal_moves())
    n = 0
    for m in pos.legal_moves():
        pos.push(m)
        n += listed_perft(pos, depth - 1)
        pos.pop()
    return n


def fairyboard_command() -> list[str]:
    exe = pathlib.Path(sys.executable).parent / "fairyboard"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("fairyboard")
    return [found] if found else [sys.executable, "-m", "board_driver.cli"]


def run_child(cmd: list[str]) -> tuple[str, float]:
    """Run a process to its end; (stdout, CPU seconds of the process: user + system)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return proc.stdout, cpu


def processes(depth: int, rounds: int) -> None:
    ours = fairyboard_command() + ["perft", "--variant", "orthodox", str(depth)]
    theirs = [sys.executable, "-c", CHESS_SCRIPT, str(depth)]
    t_ours, t_theirs = [], []
    for i in range(rounds):
        order = ((ours, t_ours), (theirs, t_theirs)) if i % 2 == 0 else ((theirs, t_theirs), (ours, t_ours))
        for cmd, into in order:
            out, cpu = run_child(cmd)
            n = int(out.split()[-1])
            assert n == PERFT[depth], (cmd, n)
            into.append(cpu)
    mo, mt = statistics.median(t_ours), statistics.median(t_theirs)
    print(f"orthodox perft {depth} ({PERFT[depth]:,} nodes) as whole processes, {rounds} interleaved rounds, "
          f"CPU s (user+system):")
    print(f"  fairyboard perft    median {mo:7.3f}  best {min(t_ours):7.3f}   "
          f"runs {' '.join(f'{t:.2f}' for t in t_ours)}")
    print(f"  python-chess        median {mt:7.3f}  best {min(t_theirs):7.3f}   "
          f"runs {' '.join(f'{t:.2f}' for t in t_theirs)}")
    print(f"  ratio (python-chess CPU / fairyboard CPU): median {mt / mo:.2f}, best {min(t_theirs) / min(t_ours):.2f}")


def in_process(rounds: int) -> None:
    v = load_variant("orthodox")
    runs = {"bulk": [], "listed": [], "chess": []}
    fns = {
        "bulk": lambda: perft(Position.from_fen(v), 4),
        "listed": lambda: listed_perft(Position.from_fen(v), 4),
        "chess": lambda: chess_perft(chess.Board(), 4),
    }
    for i in range(rounds):
        names = list(fns) if i % 2 == 0 else list(fns)[::-1]
        for name in names:
            t = time.process_time()
            n = fns[name]()
            runs[name].append(time.process_time() - t)
            assert n == PERFT[4], (name, n)
    b, l, c = (min(runs[k]) for k in ("bulk", "listed", "chess"))
    print(f"orthodox perft 4 in one process, {rounds} interleaved rounds, best CPU s:")
    print(f"  fairyboard count_legal()      {b:7.3f}  {PERFT[4] / b:12,.0f} nodes/s")
    print(f"  fairyboard len(legal_moves()) {l:7.3f}  {PERFT[4] / l:12,.0f} nodes/s")
    print(f"  python-chess len(list(...))   {c:7.3f}  {PERFT[4] / c:12,.0f} nodes/s")
    print(f"  ratio bulk count: {c / b:.2f}   ratio equal work (both list the last ply): {c / l:.2f}")


def variants(rounds: int) -> None:
    print("12x8 variants, perft 3 from the start (best CPU time):")
    for name in ("tomorrow-1", "tomorrow-2", "tomorrow-3", "tomorrow-4", "tomorrow-5", "tomorrow-4-great",
                 "courier"):
        var = load_variant(name)
        ts = []
        for _ in range(rounds):
            t = time.process_time()
            n = perft(Position.from_fen(var), 3)
            ts.append(time.process_time() - t)
        t = min(ts)
        print(f"  {name:18} {n:9,} nodes  {t:7.3f} s  {n / t:12,.0f} nodes/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--depth", type=int, default=5, choices=sorted(PERFT), help="process perft depth (default 5)")
    ap.add_argument("--skip-processes", action="store_true")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; figures are CPU time")
    if not args.skip_processes:
        processes(args.depth, args.rounds)
        print()
    in_process(args.rounds)
    print()
    variants(args.rounds)


if __name__ == "__main__":
    main()
