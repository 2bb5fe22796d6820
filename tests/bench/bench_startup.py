"""Benchmark: start-up CPU time of the ``fairyboard`` command, as a user's install has it.

Run by hand:  .venv/bin/python tests/bench/bench_startup.py [--runs N] [--venv DIR]

Builds a wheel of this checkout, installs it (not editable) with its dependencies into a fresh
virtual environment (pip byte-compiles it, as on a user's machine), then runs each command N
times, the commands interleaved, and prints the CPU time (user + system) of each process:
median, best and 90th percentile. Goals: ``--help`` < 80 ms, ``variants`` < 150 ms.
``--venv DIR`` reuses (or creates) that environment instead of a temporary one.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = (
    ("python -c pass", ["{python}", "-c", "pass"]),
    ("python -S -c pass", ["{python}", "-S", "-c", "pass"]),
    ("fairyboard --help", ["{fairyboard}", "--help"]),
    ("fairyboard variants", ["{fairyboard}", "variants"]),
    ("fairyboard perft 1", ["{fairyboard}", "perft", "1"]),
    ("fairyboard replay --json", ["{fairyboard}", "replay", "--moves", "e2e4", "--json"]),
)
GOALS = {"fairyboard --help": 0.080, "fairyboard variants": 0.150}


def install(venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    with tempfile.TemporaryDirectory() as wheels:
        subprocess.run([str(py), "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, str(ROOT)], check=True,
                       stdout=subprocess.DEVNULL)
        wheel = next(Path(wheels).glob("fairyboard-*.whl"))
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--force-reinstall", str(wheel)], check=True,
                       stdout=subprocess.DEVNULL)


def cpu_of(cmd: list[str], cwd: str, env: dict | None = None) -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def measure(venv: Path, runs: int) -> None:
    py, fb = venv / "bin" / "python", venv / "bin" / "fairyboard"
    cmds = [(label, [a.format(python=py, fairyboard=fb) for a in argv]) for label, argv in COMMANDS]
    times: dict[str, list[float]] = {label: [] for label, _ in cmds}
    env = dict(os.environ)
    has_configs = subprocess.run([str(py), "-c", "from board_driver.config import variant_names as v; "
                                  "raise SystemExit(0 if v() else 1)"], cwd=str(venv), env=env).returncode == 0
    if not has_configs:     # a wheel without its configs: point at the checkout's
        env["FAIRYBOARD_CONFIGS"] = str(ROOT / "configs")
        print(f"(the installed package has no configs: FAIRYBOARD_CONFIGS={env['FAIRYBOARD_CONFIGS']})")
    with tempfile.TemporaryDirectory() as cwd:   # not the checkout: import the installed package
        for label, cmd in cmds:                  # warm the file cache once
            cpu_of(cmd, cwd, env)
        for i in range(runs):
            for label, cmd in (cmds if i % 2 == 0 else cmds[::-1]):
                times[label].append(cpu_of(cmd, cwd, env))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{runs} interleaved runs each; CPU ms (user + system) of the whole process")
    print(f"{'command':28} {'median':>7} {'best':>7} {'p90':>7}   goal")
    for label, ts in times.items():
        ts = sorted(ts)
        p90 = ts[min(len(ts) - 1, int(round(0.9 * (len(ts) - 1))))]
        goal = GOALS.get(label)
        verdict = "" if goal is None else (f"< {goal * 1000:.0f}: " +
                                           ("met" if statistics.median(ts) < goal else "NOT met"))
        print(f"{label:28} {statistics.median(ts) * 1000:7.1f} {ts[0] * 1000:7.1f} {p90 * 1000:7.1f}   {verdict}")


def serve_ready(fb: Path, cwd: str, env: dict) -> tuple[float, float, int]:
    """(wall s, CPU s, VmRSS kB) of ``serve --board sim --web`` when ``/api/state`` first answers."""
    import socket
    import time
    import urllib.request
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as data:
        env = dict(env, FAIRYBOARD_DATA=data)
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(fb), "serve", "--board", "sim", "--web", f"127.0.0.1:{port}"], cwd=cwd,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"serve stopped ({proc.returncode}) before its page answered")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
                        r.read()
                    break
                except OSError:
                    time.sleep(0.005)
            wall = time.perf_counter() - t0
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            status = Path(f"/proc/{proc.pid}/status").read_text()
            rss = int(status.split("VmRSS:")[1].split()[0])
        finally:
            proc.terminate()
            proc.wait(10)
    return wall, cpu, rss


def measure_serve(venv: Path, runs: int) -> None:
    fb = venv / "bin" / "fairyboard"
    env = dict(os.environ)
    env.setdefault("FAIRYBOARD_CONFIGS", str(ROOT / "configs"))
    with tempfile.TemporaryDirectory() as cwd:
        serve_ready(fb, cwd, env)                # warm the file cache once
        got = [serve_ready(fb, cwd, env) for _ in range(runs)]
    wall = sorted(g[0] for g in got)
    cpu = sorted(g[1] for g in got)
    rss = sorted(g[2] for g in got)
    print(f"serve --board sim --web, start to /api/state answering, {runs} runs: wall median "
          f"{statistics.median(wall) * 1000:.0f} ms (best {wall[0] * 1000:.0f}), the service's CPU median "
          f"{statistics.median(cpu) * 1000:.0f} ms (clock ticks of 10 ms), VmRSS median {statistics.median(rss) / 1024:.1f} MB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--venv", type=Path, help="install into (or reuse) this environment")
    args = ap.parse_args()
    if args.venv:
        if not (args.venv / "bin" / "fairyboard").exists():
            install(args.venv)
        measure(args.venv, args.runs)
        measure_serve(args.venv, max(3, args.runs // 4))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        install(venv)
        measure(venv, args.runs)
        measure_serve(venv, max(3, args.runs // 4))
    return 0


if __name__ == "__main__":
    sys.exit(main())
