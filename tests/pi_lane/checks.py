"""The ARM lane's checks, run inside a Debian root of a Raspberry Pi's architecture (under
emulation) by scripts/pi-lane, with the Python of the venv the wheel was installed into.

The standard library and the installed fairyboard only: the root has what a Pi has after the
install that docs/hardware.md gives, nothing of the test extra. Each check drives the installed
``fairyboard`` command as a user does and prints one line: ``ok   NAME (S s)`` or
``FAIL NAME (S s): WHY``. The exit code is the number of failed checks (at most 100).

    python checks.py --expected FILE [--engine FILE] [--pi5 DIR] [--only TEXT]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

BIN = Path(sys.executable).parent
FAIRYBOARD = str(BIN / "fairyboard")
TIMEOUT = 900                   # one command under emulation on a loaded machine: generous


class Failed(Exception):
    pass


def data_env(tmp: str) -> dict[str, str]:
    env = dict(os.environ)
    env["FAIRYBOARD_DATA"] = tmp
    env.pop("XDG_DATA_HOME", None)
    return env


def fb(*args: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT,
       stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([FAIRYBOARD, *args], capture_output=True, text=True, env=env, timeout=timeout,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def expect(cond: bool, why: str) -> None:
    if not cond:
        raise Failed(why)


def last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


# -- perft ------------------------------------------------------------------------------------

def perft_check(variant: str, depth: int, nodes: int, source: str) -> Callable[[], str]:
    def check() -> str:
        with tempfile.TemporaryDirectory() as tmp:
            r = fb("perft", "--variant", variant, str(depth), env=data_env(tmp))
        expect(r.returncode == 0, f"exit {r.returncode}: {last_line(r.stderr)}")
        got = last_line(r.stdout)
        expect(got == str(nodes), f"counted {got}, expected {nodes} ({source})")
        return f"{nodes} nodes, as {source}"
    return check


# -- a scripted game per family -----------------------------------------------------------------

def script(*tokens: str) -> list[dict]:
    """Events as a player makes them: "e2-e4" lifts and places (300 ms apart), "+d4" places a
    piece from the hand, "!choose n" is a console command; 700 ms between actions."""
    t, out = 1000, []
    for tok in tokens:
        if tok.startswith("!"):
            out.append({"t": t, "input": tok[1:]})
        elif tok.startswith("+"):
            out.append({"t": t, "place": tok[1:]})
        else:
            a, b = tok.split("-")
            out += [{"t": t, "lift": a}, {"t": t + 300, "place": b}]
            t += 300
        t += 700
    return out


GAMES = {
    # family: (variant, events, moves expected, result expected)
    "chess": ("orthodox", script("f2-f3", "e7-e5", "g2-g4", "d8-h4"),
              ["f2f3", "e7e5", "g2g4", "d8h4"], ("0-1", "checkmate")),
    "tomorrow": ("tomorrow-3", script("e2-e4", "e7-e5", "f2-f4"), ["e2e4", "e7e5", "f2f4"], (None, None)),
    "courier": ("courier", script("e2-e4", "e7-e5"), ["e2e4", "e7e5"], (None, None)),
    "csipgs": ("csipgs", script("e1-e2", "!end"), ["e1e2", "end"], (None, None)),
    "chego": ("chego", script("+d4", "!choose n", "+a8", "!choose q", "!pass", "!pass"),
              ["N@d4", "Q@a8", "pass", "pass"], ("0-1", "both players passed: 6-19 points")),
    "cost-progressive": ("cost-progressive", script("e2-e4", "e7-e5", "d2-d4"),
                         ["e2e4", "e7e5", "d2d4"], (None, None)),
}


def game_check(family: str) -> Callable[[], str]:
    variant, events, moves, (result, reason) = GAMES[family]

    def check() -> str:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "game.jsonl"
            path.write_text("".join(json.dumps(e) + "\n" for e in events))
            r = fb("play", "--variant", variant, "--events", str(path), "--json", env=data_env(tmp))
            expect(r.returncode == 0, f"exit {r.returncode}: {last_line(r.stderr)}")
            out = json.loads(r.stdout)
            expect(out["moves"] == moves, f"moves {out['moves']}, expected {moves}")
            expect(out["pending"] is None, f"the board is left waiting: {out['pending']}")
            expect((out["result"], out["reason"]) == (result, reason),
                   f"result {out['result']} ({out['reason']}), expected {result} ({reason})")
            expect(not out["warnings"], f"warnings: {out['warnings']}")
            shown = fb("games", "show", "latest", "--json", env=data_env(tmp))
            expect(shown.returncode == 0 and json.loads(shown.stdout)["moves"] == moves,
                   f"games show latest: {last_line(shown.stdout + shown.stderr)}")
        return f"{variant}: {' '.join(moves)}" + (f", {result} {reason}" if result else "")
    return check


# -- the service on the simulated board, with its page ----------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, body: object | None = None, timeout: float = 60) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def serve_web() -> str:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        log = open(Path(tmp) / "serve.log", "w+")
        p = subprocess.Popen([FAIRYBOARD, "serve", "--board", "sim", "--web", f"127.0.0.1:{port}",
                              "--variant", "orthodox", "--new"], stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, env=data_env(tmp))
        try:
            deadline = time.monotonic() + 600
            status, state = 0, {}
            while time.monotonic() < deadline and p.poll() is None:
                try:
                    status, state = http(base + "/api/state", timeout=10)
                    if status == 200:
                        break
                except (OSError, ValueError):
                    pass
                time.sleep(0.5)             # polling a server that is starting: the event is its answer
            log.seek(0)
            expect(status == 200, f"GET /api/state never answered 200 (last {status}); the log: "
                                  f"{last_line(log.read())}")
            expect(state["variant"] == "orthodox" and state["moves"] == [] and state["sim"] is True,
                   f"the first state: {state.get('variant')} {state.get('moves')}")
            status, answer = http(base + "/api/sim", {"t": 0, "move": "e2-e4"}, timeout=120)
            expect(status == 200 and answer.get("ok"), f"POST /api/sim answered {status}: {answer}")
            expect(answer["state"]["moves"] == ["e2e4"], f"after e2-e4: {answer['state']['moves']}")
            status, state = http(base + "/api/state")
            expect(state["moves"] == ["e2e4"] and state["turn"] == "black",
                   f"GET /api/state after the move: {state['moves']} {state['turn']}")
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            code = p.wait(timeout=300)
            log.seek(0)
            text = log.read()
            log.close()
        expect(code == 0, f"serve exited {code} on SIGTERM: {last_line(text)}")
        expect("the game is saved" in text, f"serve did not say the game is saved: {last_line(text)}")
    return "GET /api/state, POST /api/sim e2-e4, stopped by SIGTERM"


# -- the service's install, the GPIO board without a Pi's GPIO, the extras ------------------------

def install_service() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        r = fb("install-service", "--dry-run", "--create-user", env=data_env(tmp))
        expect(r.returncode == 0, f"--dry-run exit {r.returncode}: {last_line(r.stderr)}")
        expect("would write  /etc/systemd/system/fairyboard.service" in r.stdout,
               f"--dry-run did not name the unit: {last_line(r.stdout)}")
        expect("would run systemctl enable --now fairyboard.service" in r.stdout, "--dry-run would not enable it")
        expect(not Path("/etc/systemd/system/fairyboard.service").exists(), "--dry-run wrote the unit")
        r = fb("install-service", "--root", tmp, "--user", "root", env=data_env(tmp))
        expect(r.returncode == 0, f"--root exit {r.returncode}: {last_line(r.stderr)}")
        unit = (Path(tmp) / "etc/systemd/system/fairyboard.service").read_text()
        expect(f"ExecStart={FAIRYBOARD} serve" in unit, "the unit does not run this venv's fairyboard serve")
    return "--dry-run names the unit and changes nothing; --root writes ExecStart=" + FAIRYBOARD


def gpio_message(bin_dir: Path = BIN) -> str:
    expect(not Path("/dev/gpiomem").exists(), "this root has /dev/gpiomem: not the case checked")
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([str(bin_dir / "fairyboard"), "serve", "--board", "gpio-12x8"], capture_output=True,
                           text=True, env=data_env(tmp), timeout=300, stdin=subprocess.DEVNULL)
    err = r.stderr.strip()
    expect(r.returncode == 2, f"exit {r.returncode}, expected 2: {last_line(err)}")
    expect("Traceback" not in err, "a traceback:\n" + err)
    expect(len(err.splitlines()) == 1, f"{len(err.splitlines())} lines, expected one:\n" + err)
    expect("this machine has no GPIO" in err, f"the line does not say there is no GPIO: {err}")
    return err


REGISTERS = """
import struct, sys, tempfile
from pathlib import Path
from board_driver.hardware.gpio_registers import MappedRegisters, open_registers
with tempfile.TemporaryDirectory() as tmp:
    mem = Path(tmp) / "gpiomem"
    mem.write_bytes(bytes(0x34) + struct.pack("<I", 0x80000001) + bytes(4096 - 0x38))
    regs = MappedRegisters(mem)
    regs.set(1 << 31 | 1 << 2)
    regs.clear(1 << 17)
    level = regs.levels()
    regs.close()
    data = mem.read_bytes()
    print(hex(level), hex(struct.unpack_from("<I", data, 0x1C)[0]), hex(struct.unpack_from("<I", data, 0x28)[0]),
          open_registers((2, 3), dev=Path(tmp)))
"""


def registers() -> str:
    """The GPIO bank's 32-bit words through this architecture's memoryview (a file for /dev/gpiomem),
    and no registers where no device tree names a Pi 1-4 (this root)."""
    r = subprocess.run([str(BIN / "python"), "-c", REGISTERS], capture_output=True, text=True, timeout=TIMEOUT)
    expect(r.returncode == 0, last_line(r.stderr))
    expect(r.stdout.split() == ["0x80000001", "0x80000004", "0x20000", "None"],
           f"GPLEV0, GPSET0, GPCLR0, open_registers: {r.stdout.strip()}")
    return "GPLEV0 read, GPSET0 and GPCLR0 written as 32-bit words; no registers off a Pi 1-4"


def extras(bin_dir: Path = BIN, gpio_dist: str = "RPi.GPIO") -> str:
    """What `pip install 'fairyboard[pi,leds]'` (or `[pi5,leds]`) put in reach of the venv
    (RPi.GPIO may refuse to be imported off a Pi, so it is found, not imported)."""
    code = ("import importlib.metadata as m, importlib.util as u, sys; "
            "print(m.version(sys.argv[1]), m.version('spidev'), u.find_spec('RPi.GPIO').origin, "
            "u.find_spec('spidev').origin)")
    r = subprocess.run([str(bin_dir / "python"), "-c", code, gpio_dist], capture_output=True, text=True,
                       timeout=TIMEOUT)
    expect(r.returncode == 0, last_line(r.stderr))
    version, spidev, gpio_file, spidev_file = r.stdout.split()
    if gpio_dist != "RPi.GPIO":         # rpi-lgpio's RPi.GPIO, in the venv, before the distribution's
        expect(gpio_file.startswith(str(bin_dir.parent)), f"RPi.GPIO is {gpio_file}, not {gpio_dist}'s")
    return f"{gpio_dist} {version} and spidev {spidev} ({gpio_file}, {spidev_file})"


def pi5(bin_dir: Path) -> Callable[[], str]:
    def check() -> str:
        return extras(bin_dir, "rpi-lgpio") + "; " + gpio_message(bin_dir)
    return check


# -- the native engine -----------------------------------------------------------------------

def engine_check(engine: str) -> Callable[[], str]:
    def check() -> str:
        with tempfile.TemporaryDirectory() as tmp:
            r = fb("fsf", "--variant", "tomorrow-3", env=data_env(tmp))
            expect(r.returncode == 0, f"fairyboard fsf: {last_line(r.stderr)}")
            ini = Path(tmp) / "variants.ini"
            ini.write_text(r.stdout)
            commands = (f"setoption name VariantPath value {ini}\n"
                        "setoption name UCI_Variant value fairyboard-tomorrow-3\n"
                        "isready\nposition startpos\ngo perft 3\nisready\nposition startpos moves e2e4\n"
                        "go depth 6\n")
            p = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write(commands)
            p.stdin.flush()
            lines: list[str] = []
            try:
                for line in p.stdout:            # read until the search's answer (or the engine ends)
                    lines.append(line.strip())
                    if line.startswith("bestmove"):
                        break
            finally:
                p.stdin.write("quit\n")
                p.stdin.close()
                p.wait(timeout=120)
        expect("Nodes searched: 27266" in lines,
               f"go perft 3 on tomorrow-3: {[ln for ln in lines if ln.startswith('Nodes')] or lines[-3:]}")
        best = lines[-1].split() if lines else []
        expect(len(best) >= 2 and best[0] == "bestmove" and best[1] != "(none)", f"go depth 6: {lines[-3:]}")
        depth = [ln for ln in lines if ln.startswith("info depth 6 ")]
        expect(bool(depth), "no 'info depth 6' line")
        return f"tomorrow-3: go perft 3 = 27266, go depth 6 after e2e4: {best[1]}"
    return check


def engine_installed_check(engine: str) -> Callable[[], str]:
    """The cross-built engine where docs/engine.md has it copied (DATA/engines/NAME), found by
    fsf, and playing a game of tomorrow-3 through fairyboard."""
    def check() -> str:
        from board_driver.opponents import native_build       # the installed package's names
        name = f"{native_build.BINARY}-{native_build.PYFFISH_VERSION}-{native_build.machine_arch()}"
        with tempfile.TemporaryDirectory() as tmp:
            env = data_env(tmp)
            target = Path(tmp) / "engines" / name
            target.parent.mkdir()
            subprocess.run(["install", "-m", "755", engine, str(target)], check=True)
            r = fb("install-engine", "--status", env=env)
            expect(r.returncode == 0, f"install-engine --status exit {r.returncode}: {last_line(r.stderr)}")
            expect(str(target) in r.stdout, f"install-engine --status does not name {target}: {r.stdout}")
            r = fb("match", "--variant", "tomorrow-3", "--white", "fsf", "--black", "random", "--games", "1",
                   "--time", "0.2", "--seed", "1", "--no-progress", env=env)
            expect(r.returncode == 0, f"match exit {r.returncode}: {last_line(r.stderr)}")
            score = last_line(r.stdout)
            expect(score.startswith("score 1-0-0"), f"fsf against random moves: {score}")
        return f"{name} in DATA/engines: install-engine --status names it; fsf beat random at tomorrow-3 ({score})"
    return check


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--expected", required=True, help="perft counts, one JSON object a line (expected.py)")
    ap.add_argument("--engine", help="the native Fairy-Stockfish built for this architecture")
    ap.add_argument("--prefix", default="", help="put before every check's name (the architecture)")
    ap.add_argument("--pi5", metavar="DIR", help="the bin folder of a venv with fairyboard[pi5,leds] to check too")
    ap.add_argument("--only", metavar="TEXT", help="run only the checks whose name contains TEXT")
    args = ap.parse_args()
    checks: list[tuple[str, Callable[[], str]]] = []
    for line in Path(args.expected).read_text().splitlines():
        row = json.loads(line)
        checks.append((f"perft {row['variant']} {row['depth']}",
                       perft_check(row["variant"], row["depth"], row["nodes"], row["source"])))
    checks += [(f"game {family}", game_check(family)) for family in GAMES]
    checks += [("serve --board sim --web", serve_web), ("install-service", install_service),
               ("extras pi,leds", extras), ("serve --board gpio-12x8 (no /dev/gpiomem)", gpio_message),
               ("GPIO registers a word at a time", registers)]
    if args.pi5:
        checks.append(("extras pi5,leds (rpi-lgpio)", pi5(Path(args.pi5))))
    if args.engine:
        checks.append(("native engine: go perft, go depth", engine_check(args.engine)))
        checks.append(("native engine: installed, fsf plays with it", engine_installed_check(args.engine)))
    failed = 0
    for name, check in checks:
        if args.only and args.only not in name:
            continue
        start = time.monotonic()
        try:
            detail, ok = check(), True
        except Failed as exc:
            detail, ok = str(exc), False
        except Exception as exc:            # a check that broke is a failure, said in one line
            detail, ok = f"{type(exc).__name__}: {exc}", False
        failed += not ok
        secs = time.monotonic() - start
        label = f"{args.prefix}{name}"
        print(f"ok   {label} ({secs:.1f} s): {detail}" if ok else f"FAIL {label} ({secs:.1f} s): {detail}",
              flush=True)
    return min(failed, 100)


if __name__ == "__main__":
    sys.exit(main())
