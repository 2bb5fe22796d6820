"""Benchmark: the CPU an idle service burns, ``serve --board sim`` without and with the page.

Run by hand:  .venv/bin/python tests/bench/bench_idle.py [--seconds S]

Starts each service in a data folder of its own, waits for its game to be set up, then reads
its CPU time (user + system, from /proc) over ``S`` seconds in which nothing happens on the
board, and prints the share of one core each used and their ratio. Goal: an idle board uses
under 2% of a core, with or without the page (a Pi Zero 2 W has four slow cores).
"""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAIRYBOARD = Path(sys.executable).with_name("fairyboard")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS       # utime, stime


def idle_share(extra: list[str], seconds: float) -> float:
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "FAIRYBOARD_DATA": data}
        proc = subprocess.Popen([str(FAIRYBOARD), "serve", "--board", "sim", "--new", *extra],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        try:
            assert proc.stdout is not None
            end = time.monotonic() + 60
            said = b""
            while b"New game" not in said:          # the game is set up: from here on nothing happens
                if time.monotonic() > end or proc.poll() is not None:
                    raise RuntimeError("serve did not start: " + said.decode(errors="replace"))
                if select.select([proc.stdout], [], [], 0.5)[0]:
                    said += os.read(proc.stdout.fileno(), 4096)
            time.sleep(1.0)                         # start-up work (the first LED frame, the caches) settles
            c0, t0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(seconds)
            c1, t1 = cpu_seconds(proc.pid), time.monotonic()
            return (c1 - c0) / (t1 - t0)
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    plain = idle_share([], args.seconds)
    web = idle_share(["--web", "127.0.0.1:0"], args.seconds)
    print(f"idle for {args.seconds:.0f} s, share of one core:")
    print(f"  serve --board sim          {100 * plain:6.2f}%")
    print(f"  serve --board sim --web    {100 * web:6.2f}%")
    print(f"  ratio plain/web            {plain / web if web else float('inf'):6.2f}")


if __name__ == "__main__":
    main()
