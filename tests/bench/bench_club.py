"""Benchmark: many boards publishing into one broker and one recorder (a script, not a test).

``--boards`` simulated boards (default 200) each play games in virtual time: a move every 5 to
40 s of virtual time (a lift and a place event, then the action with fsync, as the session
writes them), now and then a takeback, a result and a new game. ``--speed`` virtual seconds pass
per real second (default 10: a 200-board hall at ten times its real pace), for ``--seconds`` of
real time. Each board has its own data folder, journal and publisher (its own MQTT connection
and credentials); the boards run in ``--procs`` worker processes. One mosquitto (config,
password file and ACL as in docs/club.md) and one ``fairyboard recorder`` process (the real
command, storing into SQLite) run beside them.

It prints: records written and stored, records lost (written to a journal and absent from the
store when the run has drained) and copies (the store cannot hold any: its key is board, game,
seq), the lag from a record being on disk in the board's journal to its commit in the
recorder's store (p50/p99/max), and the CPU time of the broker, the recorder and the boards.
Goal: nothing lost, lag p99 under 1 s. ``--cut-boards N --cut-seconds S`` routes N boards through a
TCP relay that is cut for S seconds while they play on (their lag then includes the cut);
``--kill-broker S`` kills the broker a third into the run and restarts it S seconds later. Figures depend on the (shared) machine they ran on.

    .venv/bin/python tests/bench/bench_club.py [--boards 200] [--speed 10] [--seconds 60] [--procs 4]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "club"))

from clubtools import OPERA, Broker, SimBoard, TcpProxy  # noqa: E402


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def worker(idx: int, names: list[str], folder: str, ports: list[int], speed: float, seconds: float,
           out: str, seed: int) -> None:
    from board_driver import journal
    rng = random.Random(seed)
    current = [None]
    written: list[tuple[str, str, int, float]] = []

    def observe(gid, seq, rec):
        written.append((current[0].name, gid, seq, time.time()))
    journal.add_observer(observe)
    boards = []
    for name, port in zip(names, ports):
        b = SimBoard(Path(folder) / name, name, port, f"pw-{name}")
        b.start()
        boards.append(b)
    # per board: the next move's real time, its ply in the game
    start = time.monotonic()
    due = [start + rng.uniform(0, 20) / speed for _ in boards]
    ply = [0] * len(boards)
    for b in boards:
        current[0] = b
        b.new_game()
    end = start + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            break
        i = min(range(len(boards)), key=due.__getitem__)
        if due[i] > now:
            time.sleep(min(due[i] - now, end - now))
            continue
        b = boards[i]
        current[0] = b
        if ply[i] >= len(OPERA):
            b.finish("1-0", "checkmate")
            b.journal.close()
            b.new_game()
            ply[i] = 0
        elif ply[i] > 2 and rng.random() < 0.03:           # a takeback
            b.journal.write({"type": "pop", "ply": ply[i], "action": OPERA[ply[i] - 1], "why": "takeback"},
                            sync=True)
            ply[i] -= 1
        else:
            ply[i] += 1
            b.move(OPERA[ply[i] - 1], ply[i])
        due[i] = time.monotonic() + rng.uniform(5, 40) / speed
    cpu = time.process_time()
    pending = 0
    for b in boards:
        b.pub.wait_idle(10)
        pending += b.pub.pending()
    for b in boards:
        b.stop()
    Path(out).write_text(json.dumps({"written": written, "cpu": cpu, "pending": pending}))


def percentile(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", type=int, default=200)
    ap.add_argument("--speed", type=float, default=10.0, help="virtual seconds per real second")
    ap.add_argument("--seconds", type=float, default=60.0, help="real seconds of play")
    ap.add_argument("--procs", type=int, default=4, help="worker processes for the boards")
    ap.add_argument("--drain", type=float, default=30.0, help="seconds to wait for the store to catch up")
    ap.add_argument("--cut-boards", type=int, default=0, help="boards whose network is cut during the run")
    ap.add_argument("--cut-seconds", type=float, default=60.0, help="for how long (real seconds)")
    ap.add_argument("--kill-broker", type=float, default=0.0, metavar="SECONDS",
                    help="kill the broker (SIGKILL, it forgets everything) during the run, restart it after SECONDS")
    args = ap.parse_args()
    names = [f"board-{i:03d}" for i in range(1, args.boards + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-club-") as tmp:
        tmp = Path(tmp)
        broker = Broker(tmp / "broker", {"recorder": "pw-rec", **{n: f"pw-{n}" for n in names}}).start()
        (tmp / "rec.pass").write_text("pw-rec\n")
        db = tmp / "club.sqlite"
        rec = subprocess.Popen([sys.executable, "-m", "board_driver.cli", "recorder", "--broker",
                                f"127.0.0.1:{broker.port}", "--password-file", str(tmp / "rec.pass"),
                                "--db", str(db)], stdout=subprocess.DEVNULL, cwd=ROOT)
        try:
            time.sleep(1.5)
            cpu0 = {"broker": cpu_of(broker.proc.pid), "recorder": cpu_of(rec.pid)}
            proxy = TcpProxy(broker.port) if args.cut_boards else None
            cut = set(names[:args.cut_boards])
            port_of = {n: proxy.port if n in cut else broker.port for n in names}
            t0 = time.monotonic()
            procs = []
            for k in range(args.procs):
                part = names[k::args.procs]
                p = mp.Process(target=worker, args=(k, part, str(tmp / "boards"), [port_of[n] for n in part],
                                                    args.speed, args.seconds, str(tmp / f"w{k}.json"), 1000 + k))
                p.start()
                procs.append(p)
            if proxy is not None:
                time.sleep(min(args.seconds / 4, 10))
                proxy.cut()
                time.sleep(args.cut_seconds)
                proxy.restore()
            if args.kill_broker:
                time.sleep(args.seconds / 3)
                cpu0["broker"] -= cpu_of(broker.proc.pid)
                broker.kill()
                time.sleep(args.kill_broker)
                broker.start()
                cpu0["broker"] += cpu_of(broker.proc.pid)
            for p in procs:
                p.join()
            played = time.monotonic() - t0
            results = [json.loads((tmp / f"w{k}.json").read_text()) for k in range(args.procs)]
            written = {(b, g, s): t for r in results for b, g, s, t in r["written"]}
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            deadline = time.monotonic() + args.drain
            while True:
                stored = {(b, g, s): t for b, g, s, t in
                          con.execute("SELECT board, game, seq, stored_at FROM records")}
                missing = [k for k in written if k not in stored]
                if not missing or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            cpu = {"broker": cpu_of(broker.proc.pid) - cpu0["broker"],
                   "recorder": cpu_of(rec.pid) - cpu0["recorder"],
                   "boards": sum(r["cpu"] for r in results)}
            lags = [stored[k] - t for k, t in written.items() if k in stored]
            extra = [k for k in stored if k not in written]
            games = con.execute("SELECT COUNT(*), SUM(result IS NOT NULL) FROM games").fetchone()
            con.close()
        finally:
            rec.send_signal(signal.SIGTERM)
            rec.wait(20)
            broker.stop()
    n = len(written)
    print(f"boards {args.boards} in {args.procs} processes, speed x{args.speed:g} (virtual seconds per second), "
          f"{played:.0f} s of play" + (f"; {args.cut_boards} boards' network cut for {args.cut_seconds:g} s"
                                       if args.cut_boards else "")
          + (f"; the broker killed and restarted {args.kill_broker:g} s later" if args.kill_broker else ""))
    print(f"records written {n} ({n / max(played, 1e-9):.0f}/s), stored {len(stored)}, "
          f"games {games[0]} ({games[1] or 0} finished)")
    print(f"records lost {len(missing)}, stored without a journal line {len(extra)}, "
          f"unacknowledged at the end {sum(r['pending'] for r in results)}")
    if args.cut_boards:
        ok = [stored[k] - t for k, t in written.items() if k in stored and k[0] not in cut]
        print(f"lag of the boards never cut: p50 {percentile(ok, 50) * 1000:.0f} ms, "
              f"p99 {percentile(ok, 99) * 1000:.0f} ms")
    print(f"lag journal->store: p50 {percentile(lags, 50) * 1000:.0f} ms, p99 {percentile(lags, 99) * 1000:.0f} ms, "
          f"max {max(lags) * 1000 if lags else float('nan'):.0f} ms")
    print(f"CPU seconds: broker {cpu['broker']:.1f}, recorder {cpu['recorder']:.1f}, boards {cpu['boards']:.1f} "
          f"(per 1,000 records: broker {cpu['broker'] / max(n, 1) * 1000:.2f}, "
          f"recorder {cpu['recorder'] / max(n, 1) * 1000:.2f})")
    goal = [stored[k] - t for k, t in written.items() if k in stored and k[0] not in cut]
    if args.kill_broker:
        print(f"{'OK' if not missing else 'GOAL MISSED'}: goal none lost (the lag includes the broker's outage)")
    else:
        print(f"{'OK' if not missing and percentile(goal, 99) < 1.0 else 'GOAL MISSED'}: "
              f"goal none lost, lag p99 < 1 s" + (" (boards never cut)" if cut else ""))
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())
