"""Benchmark: the native Fairy-Stockfish that ``fairyboard install-engine`` builds against the
WebAssembly build under node (and the distribution's Fairy-Stockfish 11 where it can play), on
the same position, side by side (a script, not a test).

* ``search`` (default) -- each engine searches the start of ``--variant`` (default tomorrow-3,
  loaded from the variants.ini our rules export; the distribution's 11 cannot load its custom
  piece and plays orthodox only) for ``--seconds`` (default 10) on one thread with a 16 MB hash,
  the engines taking turns for ``--rounds`` rounds (default 3; the best round of each is
  printed, so that a busy moment of a shared machine hurts neither alone): nodes searched,
  nodes per second, depth reached, and the engine process's peak resident memory (VmHWM; for
  the WebAssembly build that is node's), and the ratios to native.
* ``--build`` -- also compiles the engine in a fresh cache (nothing reused) with ``--jobs``
  compiles at once (default: the CPUs) and prints the wall time, the CPU time, the peak memory
  of one compiler process and the peak of all of them together (their summed RSS, sampled every
  20 ms).

The native binary is ``--native PATH``, else build/engines/fairy-stockfish (what
scripts/engine-deps writes), else the one installed in the data folder.

    .venv/bin/python tests/bench/bench_engines.py [--variant V] [--seconds S] [--rounds N] [--native PATH]
                                                  [--build [--jobs N]]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board_driver.config import load_variant  # noqa: E402
from board_driver.opponents import native_build  # noqa: E402
from board_driver.opponents.players import FSF_DEFAULT, find_fsf_wasm, installed_native  # noqa: E402
from engine.fsf import fsf_name, variants_ini  # noqa: E402


def vm_hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def search(command: list[str], variant: str | None, seconds: float) -> dict:
    """Search ``variant``'s start (None: orthodox startpos) for ``seconds``; nodes, nps, depth, peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        lines = ["uci", "setoption name Threads value 1", "setoption name Hash value 16"]
        if variant is not None:
            v = load_variant(variant)
            ini = Path(tmp) / "v.ini"
            ini.write_text(variants_ini(v))
            lines += [f"setoption name VariantPath value {ini}", f"setoption name UCI_Variant value {fsf_name(v.name)}",
                      f"position fen {v.start_fen}"]
        else:
            lines += ["position startpos"]
        lines += ["isready"]
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert proc.stdin and proc.stdout
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        for ln in proc.stdout:
            if ln.startswith("readyok"):
                break
        proc.stdin.write(f"go movetime {int(seconds * 1000)}\n")
        proc.stdin.flush()
        last = ""
        for ln in proc.stdout:
            if " nodes " in ln:
                last = ln
            if ln.startswith("bestmove"):
                break
        hwm = vm_hwm_kb(proc.pid)
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
    nodes = int(re.search(r" nodes (\d+)", last)[1]) if " nodes " in last else 0      # type: ignore[index]
    nps = int(re.search(r" nps (\d+)", last)[1]) if " nps " in last else 0              # type: ignore[index]
    depth = int(re.search(r" depth (\d+)", last)[1]) if " depth " in last else 0        # type: ignore[index]
    return {"nodes": nodes, "nps": nps, "depth": depth, "rss_mb": hwm / 1024}


def measure_build(jobs: int | None) -> None:
    jobs = jobs or (os.cpu_count() or 1)
    sdist = native_build.fetch_sdist(native_build.cache_dir() / "sdist", log=None)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["FAIRYBOARD_CACHE"] = cache
        p = native_build.plan(sdist)
        peak_total = [0]
        done = threading.Event()
        me = os.getpid()

        def sample() -> None:
            while not done.is_set():
                total = 0
                for d in os.listdir("/proc"):
                    if not d.isdigit():
                        continue
                    try:
                        with open(f"/proc/{d}/stat", encoding="ascii") as f:
                            fields = f.read().rsplit(")", 1)[1].split()
                        ppid, rss_pages = int(fields[1]), int(fields[21])
                    except (OSError, IndexError, ValueError):
                        continue
                    if ppid == me or _ancestor(int(d), me):
                        total += rss_pages * os.sysconf("SC_PAGE_SIZE")
                peak_total[0] = max(peak_total[0], total)
                time.sleep(0.02)

        t = threading.Thread(target=sample, daemon=True)
        t.start()
        t0, c0 = time.monotonic(), os.times()
        native_build.build_plan(p, jobs=jobs, log=None)
        wall = time.monotonic() - t0
        c1 = os.times()
        done.set()
        t.join()
        del os.environ["FAIRYBOARD_CACHE"]
    cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    one = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"build ({p.compiler}, {p.arch}, {jobs} jobs): {wall:.0f} s wall, {cpu:.0f} s CPU, "
          f"one compiler process at most {one:.0f} MB, all at once at most {peak_total[0] / 2**20:.0f} MB")


def _ancestor(pid: int, of: int) -> bool:
    for _ in range(4):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
        if pid == of:
            return True
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="tomorrow-3")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--native", type=Path)
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--jobs", type=int)
    args = ap.parse_args()
    if args.build:
        measure_build(args.jobs)
    native = args.native or (ROOT / "build" / "engines" / "fairy-stockfish")
    if not native.is_file():
        native = installed_native()
    engines: list[tuple[str, list[str], str | None]] = []
    if native is not None:
        engines.append((f"native ({native.name})", [str(native)], args.variant))
    else:
        print("no native build: bash scripts/engine-deps (or fairyboard install-engine) builds it")
    wasm = find_fsf_wasm()
    if isinstance(wasm, list):
        engines.append(("WebAssembly (node)", wasm, args.variant))
    else:
        print(f"no WebAssembly build: {wasm}")
    if os.access(FSF_DEFAULT, os.X_OK) and native is not None:
        # the distribution's 11 loads no custom pieces: orthodox chess, beside the native build's
        engines.append(("native, orthodox", [str(native)], None))
        engines.append(("distribution's 11, orthodox", [FSF_DEFAULT], None))
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for name, command, variant in engines:
            r = search(command, variant, args.seconds)
            if name not in best or r["nps"] > best[name]["nps"]:
                best[name] = r
    rows = [(name, best[name]) for name, _, _ in engines]
    if not rows:
        return
    base = rows[0][1]
    print(f"{args.variant} start (orthodox where said), {args.seconds:g} s, 1 thread, 16 MB hash, best of "
          f"{args.rounds} rounds:")
    print(f"{'engine':34} {'nodes':>10} {'nodes/s':>9} {'depth':>5} {'peak RSS':>9} {'nps vs native':>14} {'RSS vs native':>14}")
    for name, r in rows:
        print(f"{name:34} {r['nodes']:>10} {r['nps']:>9} {r['depth']:>5} {r['rss_mb']:>7.0f} MB "
              f"{r['nps'] / max(1, base['nps']):>13.2f}x {r['rss_mb'] / max(1, base['rss_mb']):>13.2f}x")


if __name__ == "__main__":
    main()
