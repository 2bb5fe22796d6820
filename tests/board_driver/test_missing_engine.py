"""A game whose engine is gone: the board comes up, says so, and the side is played by hand;
a command naming an engine that cannot start changes nothing. The real CLI in a subprocess,
with a tiny UCI engine written for the test and then deleted."""

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

import pytest

CLI = [sys.executable, "-m", "board_driver.cli"]

ENGINE = """\
import sys
for line in sys.stdin:
    word = line.split()[:1]
    if word == ["uci"]:
        print("id name tiny", "uciok", sep="\\n", flush=True)
    elif word == ["isready"]:
        print("readyok", flush=True)
    elif word == ["go"]:
        print("bestmove e7e5", flush=True)
    elif word == ["quit"]:
        break
"""


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["FAIRYBOARD_DATA"] = str(tmp_path / "data")
    e.pop("XDG_DATA_HOME", None)
    e.pop("FAIRYBOARD_BOARD", None)
    return e


def run(args, env, stdin=""):
    return subprocess.run(CLI + args, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def games(env):
    r = run(["games", "list", "--json"], env)
    assert r.returncode == 0, r.stderr
    return {g["id"]: g["result"] for g in json.loads(r.stdout)}


def data_files(env):
    """The data folder's game files (with their bytes) and the game in progress."""
    root = os.path.join(env["FAIRYBOARD_DATA"])
    files = {n: open(os.path.join(root, "games", n), "rb").read() for n in os.listdir(os.path.join(root, "games"))}
    return files, open(os.path.join(root, "current")).read()


def serve_until(env, line_has: str, args=()):
    """``serve --board sim`` until its output has a line with ``line_has`` (then SIGTERM):
    (exit code, output)."""
    p = subprocess.Popen(CLI + ["serve", "--board", "sim", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)
    out: list[str] = []
    seen = threading.Event()

    def read():
        assert p.stdout is not None
        for ln in p.stdout:
            out.append(ln)
            if line_has in ln:
                seen.set()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    deadline = time.monotonic() + 90
    while not seen.is_set() and p.poll() is None and time.monotonic() < deadline:
        seen.wait(0.1)
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    rc = p.wait(60)
    t.join(10)
    return rc, "".join(out)


@pytest.mark.slow
def test_a_game_whose_engine_is_gone_comes_up_and_goes_on_by_hand(tmp_path, env):
    script = tmp_path / "tiny_engine.py"
    script.write_text(ENGINE)
    spec = f"uci:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    r = run(["play", "--black", spec, "--color", "never"], env, stdin="e2-e4\n")
    assert r.returncode == 0, r.stderr
    assert "Computer (black) plays e5" in r.stdout          # the engine played while it was there
    script.unlink()

    # the service (what the unit runs) comes up and says why the computer does not play
    rc, out = serve_until(env, "cannot start")
    assert rc == 0, out
    notice = next(ln for ln in out.splitlines() if "cannot start" in ln)
    assert f"The engine {spec} for Black cannot start" in notice and "by hand" in notice, notice
    assert "Traceback" not in out

    # the terminal: Black's move is made by hand and played
    r = run(["play", "--color", "never"], env, stdin="e7-e5\nmoves\n")
    assert r.returncode == 0, r.stderr
    assert "for Black cannot start" in r.stdout and "Black's moves are now made on the board by hand" in r.stdout
    assert "1. e4 e5" in r.stdout
    assert "Computer (black)" not in r.stdout
    (gid, result), = games(env).items()
    assert result is None                                   # still the game in progress


def test_a_new_game_whose_engine_cannot_start_leaves_nothing_behind(tmp_path, env):
    r = run(["play", "--white", "Ann", "--color", "never"], env, stdin="e2-e4\n")
    assert r.returncode == 0, r.stderr
    before, on_disk = games(env), data_files(env)
    missing = tmp_path / "no-such-engine"
    for cmd in (["serve", "--board", "sim", "--new", "--white", f"uci:{missing}"],
                ["serve", "--board", "sim", "--white", f"uci:{missing}"],
                ["play", "--new", "--black", f"uci:{missing}", "--color", "never"]):
        r = run(cmd, env)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
        assert str(missing) in lines[0] and "no game was started or left" in lines[0], lines
        assert data_files(env) == on_disk                   # no game made, none left, nothing written
    assert games(env) == before
    # the game in progress is still the one play resumes, with its players
    r = run(["play", "--color", "never"], env, stdin="moves\n")
    assert r.returncode == 0 and "Resumed game" in r.stdout and "1. e4" in r.stdout, r.stdout
    shown = json.loads(run(["games", "show", "latest", "--json"], env).stdout)
    assert shown["players"]["white"] == "Ann"
