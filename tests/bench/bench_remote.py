"""Benchmark: how long a move takes from one board to the other in a remote game (a script, not a test).

Two boards (tests/remote/side.py: the real game host on the simulated board, the remote player,
a player who carries out the peer's move as soon as its record arrives) play the Opera game (33 plies) over a real
mosquitto on loopback with the club's ACL, each board a process of its own. Each mode plays
``--games`` games, the modes taking turns game by game so that they share the machine's load:

* ``previews``: as shipped: a move the sender's board holds tentatively goes out as a preview;
* ``records only``: no previews (what a board did before them: a move is sent once committed);
* ``... +1 s``: the same with board b2's link to the broker through a relay that delays
  everything 1 s each way (tests/remote/netdelay.py): 1 s from either board to the other.

Printed per mode, p50/p99 over every move of both boards, in ms, from the completing board
event (the piece set down) on the mover's board to:

* ``first LED``: the first LED frame on the other board that shows the move (its preview, or its
  record when none came first): what the other player sees;
* ``preview LED``: the same, for the moves that were previewed (held on the sender's board);
* ``record``: the other board taking the record in (from then on it accepts the move);

and ``sent->heard``: from the record sent on one board to it arriving on the other's link (the
way through the broker). The players here wait for the record before they carry a move out,
so that ``record`` is the board's, never a hand's (a player already carrying out a preview has
the record taken once the piece is set down; tests/remote/test_remote_preview.py). Goal: first LED p99 under 300 ms on loopback. The machine's load is
printed with them: figures from a shared machine are noisy.

    .venv/bin/python tests/bench/bench_remote.py [--games 2] [--delay-games 1] [--delay 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "club"))
sys.path.insert(0, str(ROOT / "tests" / "remote"))

from clubtools import MOSQUITTO, OPERA, Broker  # noqa: E402
from latency import pct, samples  # noqa: E402
from netdelay import DelayProxy  # noqa: E402

SIDE = ROOT / "tests" / "remote" / "side.py"


def play(folder: Path, port_b1: int, port_b2: int, extra: list[str], timeout: float) -> dict[str, list[float]]:
    """One Opera game, b1 (White) through ``port_b1``, b2 through ``port_b2``: its samples."""
    folder.mkdir(parents=True)
    lat = folder / "latency.jsonl"
    procs = []
    for name, port, spec, moves in (("b1", port_b1, ["--black", "remote:b2"], OPERA[0::2]),
                                    ("b2", port_b2, ["--white", "remote:b1"], OPERA[1::2])):
        args = [sys.executable, str(SIDE), "--data", str(folder / name), "--port", str(port), "--name", name,
                "--password", f"pw-{name}", "--report", str(folder / f"{name}.json"), "--latency", str(lat),
                "--moves", " ".join(moves), "--keepalive", "10", "--records-only", *spec, *extra]
        log = open(folder / f"{name}.out", "w")
        procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                                      env={**os.environ, "PYTHONUNBUFFERED": "1"}))
        time.sleep(0.3)
    end = time.monotonic() + timeout
    try:
        for p in procs:
            p.wait(max(1.0, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        raise SystemExit(f"a game did not end in {timeout} s: see {folder}")
    r1, r2 = (json.loads((folder / f"{n}.json").read_text()) for n in ("b1", "b2"))
    if r1["moves"] != r2["moves"] or r1["moves"] != OPERA or r1["fork"] or r2["fork"]:
        raise SystemExit(f"the boards did not play the same game: see {folder}")
    return samples(lat)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=2, help="games per loopback mode (33 plies each)")
    ap.add_argument("--delay-games", type=int, default=1, help="games per mode with the delayed link (0: none)")
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the relay adds each way")
    args = ap.parse_args()
    if MOSQUITTO is None:
        raise SystemExit("needs mosquitto (scripts/system-deps installs it)")
    modes = [("previews", [], 0.0), ("records only", ["--no-previews"], 0.0)]
    if args.delay_games:
        modes += [(f"previews +{args.delay:g} s", [], args.delay),
                  (f"records only +{args.delay:g} s", ["--no-previews"], args.delay)]
    got: dict[str, dict[str, list[float]]] = {m: {} for m, _, _ in modes}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        broker = Broker(Path(tmp) / "broker", {"b1": "pw-b1", "b2": "pw-b2"}).start()
        try:
            for rnd in range(max(args.games, args.delay_games)):
                for name, extra, delay in modes:
                    if rnd >= (args.delay_games if delay else args.games):
                        continue
                    proxy = DelayProxy(broker.port, up=delay, down=delay) if delay else None
                    try:
                        folder = Path(tmp) / f"{rnd}-{name.replace(' ', '_')}"
                        t0 = time.monotonic()
                        s = play(folder, broker.port, proxy.port if proxy else broker.port, extra,
                                 timeout=120 + 60 * delay)
                        print(f"  game {rnd + 1}, {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
                    finally:
                        if proxy is not None:
                            proxy.close()
                    for k, xs in s.items():
                        got[name].setdefault(k, []).extend(xs)
                    load.append(os.getloadavg()[0])
        finally:
            broker.stop()

    print(f"Remote moves, Opera game over mosquitto on loopback; {os.cpu_count()} CPUs, 1-min load "
          f"{min(load):.1f}-{max(load):.1f}; ms from the piece set down on one board (p50 / p99)")
    head = f"{'mode':<22} {'moves':>5} {'first LED':>15} {'preview LED (moves)':>21} {'record':>15} {'sent->heard':>15}"
    print(head)
    print("-" * len(head))
    for name, _, _ in modes:
        s = got[name]

        def cell(k: str, w: int, count: bool = False) -> str:
            xs = s.get(k, [])
            text = f"{pct(xs, .5):.0f} / {pct(xs, .99):.0f}" if xs else "-"
            return (text + (f" ({len(xs)})" if count else "")).rjust(w)
        n = len(s.get("event_to_led", []))
        print(f"{name:<22} {n:>5} {cell('event_to_led', 15)} {cell('event_to_preview_led', 21, True)} "
              f"{cell('event_to_taken', 15)} {cell('sent_to_heard', 15)}")
    print("goal: first LED p99 under 300 ms on loopback")
    return 0


if __name__ == "__main__":
    sys.exit(main())
