"""Benchmark: time from a stable occupancy to the LED frame, per variant (a script, not a test).

For every variant in configs/variants/, a seeded random game gives a *typical* position
(about move 10 of each side) and the *busiest* one (the most legal actions seen). In each,
the driver gets the frame that completes a physical change and the clock runs until the LED
frame is ready (debouncing set to 0 ms: the occupancy is stable when the frame arrives):

* ``lift``   -- a piece with the most legal moves is picked up: reconcile, targets shown;
* ``commit`` -- the last event of a legal action: reconcile, engine push, journal write and
  fsync, check and game end, the new scene (the service loop calls ``Session.prepare()``
  between a player's frames, as it does whenever no frame arrives within its poll interval,
  and so does this benchmark: the next position's action list and the previews of the
  actions the board is on its way to are made there, not timed; while it says there is
  more to do, the loop steps again without waiting, and so does this benchmark). A move
  that could still go on is held for hold_ms and committed by the clock: that tick is
  timed too (the frame's time plus the tick's). Actions that end in a prompt wait for the
  player and are left out; the ``n`` column says how many of the samples committed.

The journal goes to real storage (a folder in the system's temp folder, or --journal-dir;
--ram puts it on /dev/shm), written and fsynced as the service does. The start-up objects
are frozen out of the garbage collector's passes before each variant, and the collector runs
between samples, never inside one, as the service loop runs it between steps
(board_driver.referee.runner.settle_memory, collect_garbage). Each case is measured
--samples times (default 200, so that the 99th percentile is not simply the slowest run).
CPU time is this thread's own time, which other load on a shared machine does not inflate;
wall time includes being preempted. Goal: the commit's CPU p99 under 1 ms for every variant
(a Pi Zero 2 W is 5-10x slower than a desktop core).

    .venv/bin/python tests/bench/bench_driver.py [--samples N] [--variant NAME ...] [--ram]

Each case first runs WARMUP samples that are not counted (the service's first commit of a
game pays for lazily built tables once; a p99 of 200 samples is their 3rd slowest, so a
cold first sample would be the figure). The process is pinned to one CPU (--cpu, default
the last one) so that a sample is never moved between CPUs halfway.

How far apart two runs of the same code land is the benchmark's noise: on a shared 2-core
VM a row's p99 moved between processes by a median of 1.24-1.30x and up to 1.9x, more than
the margins it is meant to show. So ``--rounds R`` measures every variant in R processes of their own (fresh hash
seed, fresh memory layout) and prints, per row, the median over the rounds of the p50 and
of the p99, and the spread (slowest / fastest round's p99). ``--against DIR`` measures this
checkout and another one (``DIR``: e.g. a ``git worktree`` of an earlier commit) the same
way, variant by variant in alternating order, and prints the ratios of the medians (this /
other) and the rows under the goal on each side; ``--against .`` (the same code on both
sides) shows what ratio is noise.

    .venv/bin/python tests/bench/bench_driver.py --rounds 3
    .venv/bin/python tests/bench/bench_driver.py --against ../old --rounds 3

``--wait``: before a move's first frame and between its frames the loop really waits (its
poll interval per idle step, FRAME_GAP_MS each time), as on a board, instead of running its
idle steps back to back. The processor's caches then go cold as they do in play, and the
commit (the fsync above all: 0.04 ms of kernel CPU back to back, about 0.19 ms after 0.2 s
idle here) costs what it costs a player. It takes FRAME_GAP_MS per frame per sample: use it
on a few variants, with fewer samples.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def _code_root(argv: list[str]) -> Path:
    """The checkout whose packages are measured: ``--code DIR``, else this one (read before
    the imports below)."""
    if "--code" in argv[:-1]:
        return Path(argv[argv.index("--code") + 1]).resolve()
    return HERE


ROOT = _code_root(sys.argv)
sys.path.insert(0, str(ROOT))

import board_driver.referee.runner as _runner  # noqa: E402
from board_driver.config import load_variant, variant_names  # noqa: E402
from board_driver.devices import RawFrame  # noqa: E402
from board_driver.journal import Journal  # noqa: E402
from board_driver.referee.layout import Layout  # noqa: E402
from board_driver.referee.runner import collect_garbage, settle_memory  # noqa: E402
from board_driver.referee.session import Session  # noqa: E402
from board_driver.settings import DriverSettings, load_profile, load_settings  # noqa: E402
from board_driver.sim.choreography import Choreographer, Style  # noqa: E402
from engine.game import new_game  # noqa: E402


def positions(variant: str, plies: int = 60):
    """(typical, busiest): action lists leading to them."""
    v = load_variant(variant)
    rng = random.Random(f"bench/{variant}")
    g = new_game(v)
    acts = []
    if g.family == "csipgs" and getattr(g.state, "phase", "") == "setup":
        for home, second in (("1", "2"), ("8", "7")):
            text = ("royal-WF@e" + home + "," + ",".join(f"fcFfmW@{f}{second}" for f in "abcdefgh") + ","
                    + ",".join(f"fcFfmW@{f}{home}" for f in "abcdfgh"))
            a = g.parse(text)
            acts.append(a)
            g.push(a)
    best, best_n = list(acts), -1
    typical = None
    for ply in range(plies):
        legal = g.legal_actions()
        physical = [a for a in legal if not a.silent]
        if not legal:
            break
        if len(physical) > best_n:
            best, best_n = list(acts), len(physical)
        if ply == 20 and physical:
            typical = list(acts)
        a = rng.choice(physical) if physical and rng.random() < 0.85 else rng.choice(legal)
        acts.append(a)
        g.push(a)
    return (typical if typical is not None else best), best


WARMUP = 3                                # samples per case not counted (see above)
FRAME_GAP_MS = 200                        # between the frames of a move (frame_after)
POLL = getattr(_runner, "POLL", 0.05)     # the service loop's wait for a frame (s)
IDLE_POLLS = FRAME_GAP_MS // int(POLL * 1000)   # the loop's idle steps in that time


def build(variant, prefix, journal_dir):
    v = load_variant(variant)
    g = new_game(v)
    for a in prefix:
        g.push(a)
    settings = DriverSettings(board="sim", debounce_ms=0, hold_ms=350, palette=load_settings().palette)
    layout = Layout.place(load_profile("sim"), v.geometry)
    journal = Journal(Path(journal_dir) / f"{variant}.jsonl") if journal_dir else None
    s = Session(g, variant_name=variant, layout=layout, settings=settings, journal=journal)   # SAN notices on, as play and serve have them
    s.update(0)              # the service computes the position's actions while it waits ...
    s.prepare()               # ... and what a takeback or replacement would need
    return s


def physical_steps(game, action, rng):
    ch = Choreographer(rng, Style(slide=0.0, bounce=0.0))
    return [(k, sq) for k, sq in ch._order(game, action, game.occupancy()) if k != "slide"]


def frame_after(session, steps, closed, t):
    lay = session.layout
    for kind, sq in steps:
        s = lay.sensor_of(sq)
        if kind == "lift":
            closed.discard(s)
        else:
            closed.add(s)
        yield RawFrame(t, frozenset(closed))
        t += FRAME_GAP_MS


WAIT = False        # --wait: sleep the poll interval at each idle step (see above)


def idle_step(s, t) -> None:
    """One idle step of the service loop (runner._loop): tick, prepare, collect; while
    prepare() says there is more work ahead, the loop finds no frame waiting and steps again
    at once (here for at most one poll interval of wall time: the frame may come then)."""
    if WAIT:
        time.sleep(POLL)
    end = time.perf_counter() + POLL
    while True:
        s.tick(t)
        more = s.prepare()
        collect_garbage()
        if not more or time.perf_counter() >= end:
            return


def measure(variant, prefix, kind, samples, journal_dir, rng):
    times = []
    for i in range(samples + WARMUP):
        s = build(variant, prefix, journal_dir)
        g = s.game
        physical = [a for a in g.legal_actions() if not a.silent]
        if not physical:
            return None
        if kind == "lift":
            movers = {}
            for a in physical:
                for sq in a.lifts - a.places:
                    movers[sq] = movers.get(sq, 0) + 1
            if not movers:
                return None
            sq = max(movers, key=movers.get)
            steps = [("lift", sq)]
        else:
            steps = physical_steps(g, rng.choice(physical), rng)
        closed = set(s.layout.closed_sensors(s.occupancy))
        frames = list(frame_after(s, steps, closed, 1000))
        if WAIT:
            for _ in range(IDLE_POLLS):     # the player reaches for the board (a drop is one frame)
                idle_step(s, frames[0].t - FRAME_GAP_MS)
        for f in frames[:-1]:
            s.on_frame(f)
            collect_garbage()
            for _ in range(IDLE_POLLS):     # the loop's idle polls until the next frame
                idle_step(s, f.t)
        n0 = len(g.history)
        c0, t0 = time.thread_time(), time.perf_counter()
        s.on_frame(frames[-1])
        _ = s.leds
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        if kind == "commit" and len(g.history) == n0:
            # not committed yet: a move that could go on (a capture, a slide) is held for
            # hold_ms, then committed by the clock; a prompt waits for the player (not timed)
            deadline = s.next_deadline()
            if deadline is not None:
                c0, t0 = time.thread_time(), time.perf_counter()
                s.tick(deadline)
                _ = s.leds
                wall += time.perf_counter() - t0
                cpu += time.thread_time() - c0
            if len(g.history) == n0:
                s.close()
                collect_garbage()
                continue
        if i >= WARMUP:
            times.append((wall * 1000, cpu * 1000))
        s.close()
        collect_garbage()           # as the service loop does after each step
    return times


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def fsync_cost(directory, n=200):
    j = Journal(Path(directory) / "fsync.jsonl")
    ts = []
    for i in range(n):
        t0 = time.perf_counter()
        j.write({"type": "push", "ply": i, "action": "e2e4", "w": i}, sync=True)
        ts.append((time.perf_counter() - t0) * 1000)
    j.close()
    return ts


def filesystem_of(path: str) -> str:
    """The type of the filesystem holding ``path`` (from /proc/mounts), or '?'."""
    best, kind = "", "?"
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and os.path.realpath(path).startswith(parts[1]) and len(parts[1]) > len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def _default_cpu() -> int:
    """The last CPU this process may run on (the first one takes more of the system's work)."""
    try:
        return max(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return -1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--variant", action="append", help="only these variants (repeatable)")
    ap.add_argument("--journal-dir", help="write the journals in a temporary folder here")
    ap.add_argument("--ram", action="store_true", help="journals on /dev/shm (the software's cost alone)")
    ap.add_argument("--wait", action="store_true",
                    help="really wait between a move's frames, as on a board (slow: see above)")
    ap.add_argument("--against", metavar="DIR", help="another checkout to measure side by side with this one")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure each variant in this many processes of their own; print medians and spread")
    ap.add_argument("--code", metavar="DIR", help="measure the packages of this checkout (default: this one's)")
    ap.add_argument("--cpu", type=int, default=_default_cpu(),
                    help="pin the measuring process to this CPU (default: %(default)s; -1: do not pin)")
    args = ap.parse_args(argv)
    names = args.variant or (variant_names() + ["random-1-2-3"])
    if not hasattr(os, "sched_setaffinity"):
        args.cpu = -1                   # not on this system: not pinned
    if args.cpu >= 0 and args.cpu not in os.sched_getaffinity(0):
        ap.error(f"--cpu {args.cpu}: this process may run on CPUs {sorted(os.sched_getaffinity(0))} only")
    if args.against or args.rounds > 1:
        sides = [("this", HERE)] + ([("other", Path(args.against).resolve())] if args.against else [])
        return compare(sides, names, args)
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})     # checked above
    global WAIT
    WAIT = args.wait
    where = "/dev/shm" if args.ram else args.journal_dir
    rng = random.Random(1)
    gc.disable()            # the service loop's collector policy (board_driver.referee.runner.run_realtime)
    worst = worst_wall = 0.0
    worst_commit, worst_commit_case = 0.0, ""
    with tempfile.TemporaryDirectory(dir=where) as jdir:
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; code: {ROOT}; "
              f"pinned to CPU {sorted(os.sched_getaffinity(0))}")
        print(f"journal in {jdir} ({filesystem_of(jdir)}), fsynced; {args.samples} samples each; times in ms; "
              f"{'the loop waits between frames (--wait)' if WAIT else 'idle steps back to back'}")
        print("wall: elapsed time (includes being preempted by other processes); cpu: this thread's own time")
        print(f"{'variant':28} {'position':8} {'actions':>7}   {'lift p50/p99 wall':>17} {'(cpu)':>11}"
              f"   {'commit p50/p99 wall':>19} {'(cpu)':>11} {'n':>4}")
        for name in names:
            typical, busiest = positions(name)
            settle_memory()       # as the service does once it has started (see runner.py)
            for label, prefix in (("typical", typical), ("busiest", busiest)):
                g = new_game(load_variant(name))
                for a in prefix:
                    g.push(a)
                n = sum(1 for a in g.legal_actions() if not a.silent)
                row = [f"{name:28} {label:8} {n:7}"]
                for kind in ("lift", "commit"):
                    ts = measure(name, prefix, kind, args.samples, jdir, rng)
                    w = 17 if kind == "lift" else 19
                    if not ts:
                        row.append(f"  {'-':>{w}} {'':>11}")
                        continue
                    wall = [a for a, _ in ts]
                    cpu = [b for _, b in ts]
                    worst = max(worst, pct(cpu, 99))
                    worst_wall = max(worst_wall, pct(wall, 99))
                    if kind == "commit" and pct(cpu, 99) > worst_commit:
                        worst_commit, worst_commit_case = pct(cpu, 99), f"{name} {label}"
                    row.append(f"  {pct(wall, 50):{w - 9}.2f} /{pct(wall, 99):6.2f} "
                               f"({pct(cpu, 50):4.2f}/{pct(cpu, 99):4.2f})" +
                               (f" {len(ts):4}" if kind == "commit" else ""))
                print(" ".join(row), flush=True)
        fd = fsync_cost(jdir)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=shm) as ddir:
        fs = fsync_cost(ddir)
    print(f"fsync of one journal line (wall): journal folder p50 {pct(fd, 50):.3f} p99 {pct(fd, 99):.3f}; "
          f"{'RAM disk' if shm else 'temp folder'} p50 {pct(fs, 50):.3f} p99 {pct(fs, 99):.3f}")
    print(f"worst p99: cpu {worst:.2f} ms, wall {worst_wall:.2f} ms")
    print(f"worst commit cpu p99: {worst_commit:.2f} ms ({worst_commit_case}) -- goal < 1 ms: "
          f"{'met' if worst_commit < 1 else 'NOT met'}")
    return 0


_ROW = re.compile(r"(\S+)\s+(typical|busiest)\s+\d+.*\(([\d.]+)/([\d.]+)\)\s+\d+\s*$")


def _commit_rows(text: str) -> dict[tuple[str, str], tuple[float, float]]:
    """{(variant, position): (commit cpu p50, p99)} from this benchmark's printed table."""
    return {(m.group(1), m.group(2)): (float(m.group(3)), float(m.group(4)))
            for m in map(_ROW.match, text.splitlines()) if m}


def compare(sides: list[tuple[str, Path]], names: list[str], args) -> int:
    """Every variant measured ``args.rounds`` times per checkout in ``sides`` ([("this", dir)]
    and maybe ("other", dir)), each time in a process of its own, the checkouts in alternating
    order; prints per row the medians over the rounds, the spread of the p99 (slowest / fastest
    round) and, for two checkouts, the ratios this / other."""
    for label, tree in sides:
        if not (tree / "board_driver" / "referee" / "session.py").exists():
            print(f"{tree}: no board_driver/referee/session.py there (give the top folder of a checkout)", file=sys.stderr)
            return 2
    extra = ["--samples", str(args.samples), "--cpu", str(args.cpu)] + (["--ram"] if args.ram else []) + \
        (["--wait"] if args.wait else []) + \
        (["--journal-dir", args.journal_dir] if args.journal_dir else [])
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{args.samples} samples (+{WARMUP} not counted), {args.rounds} round(s) per variant"
          f"{' of each checkout' if len(sides) > 1 else ''}, pinned to CPU {args.cpu}"
          f"{'; the loop waits between frames' if args.wait else ''}")
    for label, tree in sides:
        print(f"{label}: {tree}")
    print("commit CPU p50/p99 in ms, medians over the rounds; spread: slowest / fastest round's p99")
    head = "".join(f" {label + ' p50/p99':>13} {'spread':>6}" for label, _ in sides)
    print(f"{'variant':28} {'position':8}{head}" + ("   ratio p50 p99" if len(sides) > 1 else ""))
    ratios, under, spreads = [], [0] * len(sides), []
    for i, name in enumerate(names):
        got: dict = {label: [] for label, _ in sides}
        for r in range(args.rounds):
            order = list(sides)
            if (i + r) % 2:
                order.reverse()
            for label, tree in order:
                out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--code", str(tree),
                                      "--variant", name] + extra, capture_output=True, text=True, cwd=tree)
                if out.returncode:
                    print(f"{label} ({tree}) failed on {name}:\n{out.stderr}", file=sys.stderr)
                    return 1
                got[label].append(_commit_rows(out.stdout))
        for pos in ("typical", "busiest"):
            key = (name, pos)
            med = []
            for label, _ in sides:
                xs = [rows[key] for rows in got[label] if key in rows]
                if xs:
                    p99s = [x[1] for x in xs]
                    med.append((statistics.median(x[0] for x in xs), statistics.median(p99s),
                                max(p99s) / min(p99s)))
            if len(med) < len(sides):
                continue
            cells = "".join(f" {m50:6.2f}/{m99:5.2f} {sp:6.2f}" for m50, m99, sp in med)
            spreads += [sp for _, _, sp in med]
            for k, (_, m99, _) in enumerate(med):
                under[k] += m99 < 1
            tail = ""
            if len(sides) > 1:
                (t50, t99, _), (o50, o99, _) = med
                ratios.append((t50 / o50, t99 / o99))
                tail = f"   {t50 / o50:5.2f} {t99 / o99:5.2f}"
            print(f"{name:28} {pos:8}{cells}{tail}", flush=True)
    n = len(spreads) // len(sides)
    print(f"rows: {n}; with the median p99 < 1 ms: " +
          ", ".join(f"{label} {u}" for (label, _), u in zip(sides, under)))
    if spreads:
        print(f"spread of a row's p99 between rounds: median {statistics.median(spreads):.2f}, "
              f"largest {max(spreads):.2f}")
    if ratios:
        print(f"median ratio this / other over {len(ratios)} rows: p50 {statistics.median(r for r, _ in ratios):.2f}, "
              f"p99 {statistics.median(r for _, r in ratios):.2f} (range {min(r for _, r in ratios):.2f}"
              f"-{max(r for _, r in ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
