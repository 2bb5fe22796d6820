"""Benchmark: the memory of the whole service playing against Fairy-Stockfish with the hint and
the live evaluation on (a script, not a test).

For each variant (orthodox: the native Fairy-Stockfish; tomorrow-3, 12x8: the WebAssembly build
under node) and each arrangement -- ``shared`` (one engine per board, the default) and ``own``
(``FAIRYBOARD_ENGINE_POOL=0``: the computer, the hint and the evaluation each start their own,
as before) -- it runs ``fairyboard serve --board sim --web 127.0.0.1:0 --new --variant V
--black fsf`` with a data folder of its own, pairs as a player, switches the live evaluation
on, and plays ``--moves`` moves: a hint, the hinted move on the simulated board, the computer's
move carried out. Every 20 ms it reads the resident memory (VmRSS) of the service's process and
of each of its descendants (the engines), and prints the peaks: the service's Python, the
engines, and the peak of their sum. The goal: under 150 MB for the service with the computer,
the hint and the evaluation on, with a native engine at Hash 16 MB and 1 thread (the pool's
settings); the WebAssembly build alone is over it.

Then where the memory goes: a bare Python, Python with the service's modules imported, and each
engine alone (started; after a 1 s search at Hash 16 and at Hash 1).

    .venv/bin/python tests/bench/bench_memory.py [--moves 3] [--variants orthodox tomorrow-3]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "board_driver"))

from webtools import pair_when_ready, start_serve, until  # noqa: E402

GOAL_MB = 150
BEFORE_MB = 956         # tomorrow-3 against fsf with hints and the evaluation, three node processes, measured before


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                out |= {int(x) for x in (task / "children").read_text().split()}
            except OSError:
                pass
    except OSError:
        pass
    return out


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for c in children(todo.pop()):
            if c not in found:
                found.add(c)
                todo.append(c)
    return found


class Sampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.py = self.engines = self.total = 0     # peaks, kB
        self.most = 0                               # engine processes at once
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            py = rss_kb(self.pid)
            kids = descendants(self.pid)
            eng = sum(rss_kb(k) for k in kids)
            self.py, self.engines = max(self.py, py), max(self.engines, eng)
            self.total = max(self.total, py + eng)
            self.most = max(self.most, len(kids))


def play(s, text: str, st: dict) -> None:
    s.move(text[:2], text[2:4], capture=text[2:4] in st["pieces"])


def serve_game(variant: str, shared: bool, moves: int) -> Sampler:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FAIRYBOARD_DATA=str(Path(tmp) / "data"), FAIRYBOARD_ENGINE_POOL="1" if shared else "0")
        env.pop("XDG_DATA_HOME", None)
        proc, s, _ = start_serve(["--board", "sim", "--web", "127.0.0.1:0", "--new", "--variant", variant,
                                  "--black", "fsf", "--move-time", "0.5"], env)
        sampler = Sampler(proc.pid)
        sampler.start()
        try:
            token = pair_when_ready(s)
            assert s.post("/api/eval", {"on": True, "seconds": 1.0}, token=token)[0] == 200
            for ply in range(0, 2 * moves, 2):
                until(lambda: (x := s.wait_state())["eval"] and x["eval"]["state"] == "done", timeout=120,
                      what="the evaluation")
                # the first hint of the old arrangement starts its engine in the loop: the page's
                # request may time out meanwhile (the hint comes all the same)
                s.post("/api/command", {"text": "hint"}, token=token)
                st = until(lambda: (x := s.wait_state())["hint"] and x, timeout=120, what="the hint")
                play(s, st["hint"]["move"], st)
                st = until(lambda: (x := s.wait_state())["computer"] and x, timeout=120, what="the computer's move")
                play(s, st["computer"]["move"], st)
                until(lambda: len(s.wait_state()["moves"]) >= ply + 2, timeout=60, what="the computer's move made")
            until(lambda: (x := s.wait_state())["eval"] and x["eval"]["state"] == "done", timeout=120,
                  what="the last evaluation")
        finally:
            sampler.done.set()
            sampler.join()
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return sampler


def alone_kb(argv: list[str]) -> int:
    """The RSS of a Python process that ran ``argv`` (its code prints its own VmRSS)."""
    out = subprocess.run([sys.executable, "-c", *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    return int(out.stdout.split()[-1])


RSS = "import re; print(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read()).group(1))"
SERVICE_IMPORTS = ("import board_driver.cli, board_driver.web.server, board_driver.web.service, "
                   "board_driver.host.game_host, board_driver.opponents.computer, "
                   "board_driver.opponents.engine_pool, chess.engine, aiohttp; ")


def engine_alone(command: list[str], ini: str | None, uci_variant: str | None, hash_mb: int) -> tuple[int, int]:
    """(kB started, kB after a 1 s search) of one engine at Hash ``hash_mb``, Threads 1."""
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None

    def say(line: str) -> None:
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def until_line(word: str) -> None:
        while True:
            line = p.stdout.readline()
            if not line or line.startswith(word):
                return
    try:
        say("uci")
        until_line("uciok")
        with tempfile.TemporaryDirectory() as tmp:
            if ini is not None:
                path = Path(tmp) / "variants.ini"
                path.write_text(ini)
                say(f"setoption name VariantPath value {path}")
            if uci_variant:
                say(f"setoption name UCI_Variant value {uci_variant}")
            say(f"setoption name Hash value {hash_mb}")
            say("setoption name Threads value 1")
            say("isready")
            until_line("readyok")
            started = rss_kb(p.pid)
            say("position startpos")
            say("go movetime 1000")
            until_line("bestmove")
            return started, rss_kb(p.pid)
    finally:
        say("quit")
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


def mb(kb: int) -> str:
    return f"{kb / 1024:6.0f} MB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moves", type=int, default=3, help="moves of each side (default 3)")
    ap.add_argument("--variants", nargs="+", default=["orthodox", "tomorrow-3"])
    args = ap.parse_args()
    from board_driver.config import load_variant
    from board_driver.opponents.players import fsf_command
    from engine import fsf

    print(f"The service against fsf (--move-time 0.5), the hint and the live evaluation (1 s) on, "
          f"{args.moves} moves a side; peaks of VmRSS:")
    print(f"{'variant':12} {'engine':32} {'engines':>9} {'python':>9} {'engine':>9} {'engines':>9} {'sum':>9}  goal")
    print(f"{'':12} {'':32} {'':>9} {'':>9} {'':>9} {'at once':>9} {'':>9}")
    results = {}
    for variant in args.variants:
        found = fsf_command(load_variant(variant))
        if isinstance(found, str):
            print(f"{variant:12} skipped: {found}")
            continue
        command, build = found
        label = f"{build}: {Path(command[0]).name}" + (f" {Path(command[1]).name}" if build == "wasm" else "")
        for shared in (True, False):
            s = serve_game(variant, shared, args.moves)
            results[(variant, shared)] = s
            verdict = ("met" if s.total / 1024 < GOAL_MB else "over") if shared else ""
            print(f"{variant:12} {label:32} {'shared' if shared else 'own':>9} {mb(s.py)} {mb(s.engines)} "
                  f"{s.most:>9} {mb(s.total)}  {verdict}", flush=True)
        shared_s, own = results[(variant, True)], results[(variant, False)]
        print(f"{'':12} shared / own: {shared_s.total / max(1, own.total):.2f} of the memory, "
              f"{shared_s.most} engine process(es) against {own.most}")
    print(f"(before: tomorrow-3 against fsf with the hint and the evaluation peaked at {BEFORE_MB} MB, three node "
          f"processes; goal: under {GOAL_MB} MB with a native engine at Hash 16, Threads 1 -- the WebAssembly "
          "build alone is above it)")

    print("\nWhere it goes (VmRSS):")
    print(f"  python, bare                           {mb(alone_kb([RSS]))}")
    print(f"  python with the service's modules      {mb(alone_kb([SERVICE_IMPORTS + RSS]))}")
    for variant in args.variants:
        v = load_variant(variant)
        found = fsf_command(v)
        if isinstance(found, str):
            continue
        command, build = found
        ini = fsf.variants_ini(v) if variant != "orthodox" else None
        name = fsf.fsf_name(v.name) if ini else None
        for hash_mb in (16, 1):
            started, searched = engine_alone(command, ini, name, hash_mb)
            print(f"  {build} engine ({variant}), Hash {hash_mb:2} MB: {mb(started)} started, "
                  f"{mb(searched)} after a 1 s search")
    return 0


if __name__ == "__main__":
    sys.exit(main())
