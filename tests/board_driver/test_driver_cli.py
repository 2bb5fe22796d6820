"""The command line as players and scripts use it: the real CLI in a subprocess."""

import io
import json
import os
import random
import select
import signal
import subprocess
import sys

import chess.pgn
import pytest
from drivertools import random_actions

from board_driver.config import load_variant
from board_driver.sim.choreography import Choreographer, Style
from board_driver.sim.events import Ev
from engine.game import new_game

CLI = [sys.executable, "-m", "board_driver.cli"]
PROMPT = b"fairyboard> "


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["FAIRYBOARD_DATA"] = str(tmp_path / "data")
    e.pop("XDG_DATA_HOME", None)
    return e


def run(args, env, stdin=""):
    return subprocess.run(CLI + args, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def events_file(tmp_path, events, name="game.jsonl"):
    p = tmp_path / name
    p.write_text("".join(e.line() + "\n" for e in events))
    return p


def test_events_json_reports_the_game_and_saves_it(tmp_path, env):
    evs = [Ev(1000, "lift", "e2"), Ev(1300, "place", "e4"), Ev(2000, "lift", "d7"), Ev(2200, "place", "d5"),
           Ev(3000, "lift", "d5"), Ev(3002, "place", "d5"), Ev(3004, "lift", "d5"),   # victim off, with bounce
           Ev(3200, "lift", "e4"), Ev(3400, "place", "d5"),
           Ev(4000, "lift", "d8"), Ev(4100, "place", "d7"), Ev(4150, "lift", "d7"),   # the queen slides...
           Ev(4200, "place", "d6")]                                                   # ... and stops on d6
    r = run(["play", "--variant", "orthodox", "--events", str(events_file(tmp_path, evs)), "--json"], env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["moves"] == ["e2e4", "d7d5", "e4d5", "d8d6"]       # the last move was held, then committed
    assert out["pending"] is None and out["result"] is None
    assert out["fen"].startswith("rnb1kbnr/ppp1pppp/3q4/3P4/")
    assert os.path.exists(out["journal"])
    shown = json.loads(run(["games", "show", "latest", "--json"], env).stdout)
    assert shown["moves"] == out["moves"]


@pytest.mark.slow
def test_events_json_reports_an_open_prompt_and_a_mismatch(tmp_path, env):
    fen = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1"
    evs = [Ev(100, "lift", "a7"), Ev(400, "place", "a8")]
    r = run(["play", "--fen", fen, "--events", str(events_file(tmp_path, evs)), "--json"], env)
    out = json.loads(r.stdout)
    assert out["moves"] == [] and out["pending"]["type"] == "prompt"
    assert out["pending"]["default"] == "a7a8q" and "a7a8n" in out["pending"]["options"]
    evs.append(Ev(900, "input", "choose n"))
    out = json.loads(run(["play", "--fen", fen, "--events", str(events_file(tmp_path, evs)), "--json"], env).stdout)
    assert out["moves"] == ["a7a8n"] and out["pending"] is None
    evs = [Ev(100, "lift", "e1"), Ev(400, "place", "e3")]
    out = json.loads(run(["play", "--fen", fen, "--events", str(events_file(tmp_path, evs)), "--json"], env).stdout)
    assert out["moves"] == [] and out["pending"]["type"] == "mismatch"
    assert out["pending"]["moves"] == [["e3", "e1"]]


@pytest.mark.slow
def test_malformed_event_lines_are_named_and_no_game_is_started(tmp_path, env):
    cases = {
        '{"t": 0, "lift": "e2"}\nnot json\n': "line 2: not JSON",
        '{"t": 0, "lift": "z9"}\n': "line 1: 'z9' is not a square name",
        '{"t": 5, "lift": "e2"}\n\n{"t": 1, "place": "e4"}\n': "line 3: time 1 goes back",
        '{"t": 0, "lift": "e2", "place": "e4"}\n': "line 1: an event has \"t\" and exactly one of",
        '{"lift": "e2"}\n': 'line 1: "t" must be a whole number',
        '{"t": 0, "input": 3}\n': 'line 1: "input" needs a command string',
    }
    for text, msg in cases.items():
        p = tmp_path / "bad.jsonl"
        p.write_text(text)
        r = run(["play", "--events", str(p), "--json"], env)
        assert r.returncode == 2 and msg in r.stderr, (text, r.stderr)
        assert r.stdout == ""
    assert "No games saved yet" in run(["games", "list"], env).stdout


@pytest.mark.slow
def test_interactive_play_help_errors_and_a_clean_quit_on_eof(env):
    r = run(["play"], env, stdin="help\nfly\nlift e5\ne2-e4\nlift g8\nplace f6\n")
    assert r.returncode == 0, r.stderr
    o = r.stdout
    assert "New game" in o and "orthodox" in o
    assert "choose X" in o and "takeback" in o                       # help
    assert "unknown command 'fly'" in o
    assert "there is no piece on e5 to lift" in o
    assert "White: e4" in o and "Black: Nf6" in o
    assert "\x1b[" not in o                                           # no ANSI codes on a pipe
    assert "LEDs: last move" in o
    assert o.rstrip().endswith("fairyboard play resumes it.")
    # the next run resumes the same game
    r = run(["play"], env, stdin="d2-d4\nquit\n")
    assert "Resumed game" in r.stdout
    out = json.loads(run(["games", "show", "latest", "--json"], env).stdout)
    assert out["moves"] == ["e2e4", "g8f6", "d2d4"]
    r = run(["play", "--color", "always"], env, stdin="")
    assert "\x1b[48;2;" in r.stdout


@pytest.mark.slow
def test_new_game_from_the_console_abandons_the_old_one(env):
    r = run(["play"], env, stdin="e2-e4\nnew nosuch\nd7-d5\nnew chego\nplace d4\nchoose knight\n")
    assert "unknown variant 'nosuch'" in r.stdout and "New game" in r.stdout
    games = json.loads(run(["games", "list", "--json"], env).stdout)
    assert [(g["variant"], g["result"], g["actions"]) for g in games] == [("orthodox", "*", 2), ("chego", None, 1)]
    assert json.loads(run(["games", "show", "latest", "--json"], env).stdout)["moves"] == ["N@d4"]


@pytest.mark.slow
def test_games_list_show_and_a_pgn_python_chess_reads_back(tmp_path, env):
    rng = random.Random(7)
    v = load_variant("orthodox")
    acts = random_actions(new_game(v), rng, 60)
    evs = []
    ch = Choreographer(rng, Style(knock=0.0))
    g = new_game(v)
    t = 1000
    for i, a in enumerate(acts):
        e, t = ch.action(g, a, t, last=i == len(acts) - 1)
        evs += e
        g.push(a)
        t += 800
    r = run(["play", "--events", str(events_file(tmp_path, evs)), "--json", "--white", "Ann", "--black", "Bob"], env)
    out = json.loads(r.stdout)
    assert out["moves"] == [a.text for a in acts]
    listing = run(["games", "list"], env).stdout
    assert out["game"] in listing and "Ann - Bob" in listing
    shown = run(["games", "show", out["game"]], env).stdout
    assert "White: Ann" in shown and "1. " in shown
    pgn = run(["games", "export", out["game"], "--format", "pgn"], env).stdout
    assert '[Variant "Standard"]' in pgn and "[FEN " not in pgn and "[SetUp " not in pgn    # the normal start
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert not game.errors
    assert [m.uci() for m in game.mainline_moves()] == out["moves"]
    r = run(["games", "show", "nope"], env)
    assert r.returncode == 2 and "no game 'nope'" in r.stderr


def test_variant_games_export_with_their_variant_and_fen(tmp_path, env):
    evs = [Ev(1000, "place", "d4"), Ev(1200, "input", "choose n")]
    out = json.loads(run(["play", "--variant", "chego", "--events", str(events_file(tmp_path, evs)), "--json"], env).stdout)
    assert out["moves"] == ["N@d4"]
    pgn = run(["games", "export", "latest"], env).stdout
    assert '[Variant "chego"]' in pgn and "[FEN " not in pgn and "1. N@d4 *" in pgn
    fen = "8/8/8/8/8/8/8/8[NNnn] w - - 0 1"
    out = json.loads(run(["play", "--variant", "chego", "--fen", fen, "--events", str(events_file(tmp_path, evs)),
                          "--json"], env).stdout)
    pgn = run(["games", "export", "latest"], env).stdout
    assert '[SetUp "1"]' in pgn and f'[FEN "{fen}"]' in pgn


# -- kill -9 at random points -----------------------------------------------------------------------

class Repl:
    """``fairyboard play`` on a pipe, one line at a time."""

    def __init__(self, env):
        self.p = subprocess.Popen(CLI + ["play"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.out = b""
        self.until_prompt()

    def until_prompt(self) -> bytes:
        fd = self.p.stdout.fileno()
        while not self.out.endswith(PROMPT):
            ready, _, _ = select.select([fd], [], [], 60)
            assert ready, "no prompt within 60 s:\n" + self.out.decode(errors="replace")[-2000:]
            chunk = os.read(fd, 65536)
            assert chunk, "the CLI ended:\n" + self.out.decode(errors="replace")[-2000:] + \
                self.p.stderr.read().decode(errors="replace")
            self.out += chunk
        got, self.out = self.out, b""
        return got

    def send(self, line: str, wait: bool = True) -> None:
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        if wait:
            self.until_prompt()

    def kill(self) -> None:
        os.kill(self.p.pid, signal.SIGKILL)
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                f.close()
            except OSError:
                pass

    def quit(self) -> None:
        self.p.stdin.write(b"quit\n")
        self.p.stdin.close()
        self.p.wait(60)
        self.p.stdout.close()
        self.p.stderr.close()
        assert self.p.returncode == 0


def scripted_game():
    """A random orthodox game with the rare moves preferred, as console lines of single events."""
    rng = random.Random(178)
    v = load_variant("orthodox")
    acts = random_actions(new_game(v), rng, 36)
    ch = Choreographer(rng, Style(knock=0.0, bounce=0.0, choose_before=0.0, rely_on_default=1.0))
    g = new_game(v)
    lines = []
    for i, a in enumerate(acts):
        evs, _ = ch.action(g, a, 0, last=i == len(acts) - 1)
        for e in evs:
            lines.append(e.arg if e.kind == "input" else f"{e.kind} {e.arg}")
        g.push(a)
    return [a.text for a in acts], lines, {a.kind for a in acts}


@pytest.mark.slow
def test_kill_9_at_random_points_then_restart_resumes_the_same_game(env):
    want, lines, kinds = scripted_game()
    assert {"castle", "en-passant", "promotion", "capture"} <= kinds    # the script has the hard cases
    rng = random.Random(99)
    kills = sorted(rng.sample(range(len(lines)), 6))
    repl = Repl(env)
    i = 0
    for k in kills:
        while i < k:
            repl.send(lines[i])
            i += 1
        repl.send(lines[k], wait=rng.random() < 0.3)       # kill during or just after the line
        repl.kill()
        repl = Repl(env)
        repl.send(lines[k])        # a lift or place already made is refused by the board: safe to repeat
        i = k + 1
    while i < len(lines):
        repl.send(lines[i])
        i += 1
    repl.quit()
    got = json.loads(run(["games", "show", "latest", "--json"], env).stdout)
    assert got["moves"] == want
    # the same script without interruption gives the same game
    env2 = dict(env, FAIRYBOARD_DATA=env["FAIRYBOARD_DATA"] + "-uninterrupted")
    r = run(["play"], env2, stdin="\n".join(lines) + "\nquit\n")
    assert r.returncode == 0
    assert json.loads(run(["games", "show", "latest", "--json"], env2).stdout)["moves"] == want


@pytest.mark.slow
def test_a_random_variant_game_resumes_with_the_same_dice(env):
    first = run(["play", "--variant", "random", "--new"], env, stdin="quit\n")
    name = next(w.rstrip(".") for line in first.stdout.splitlines() if line.startswith("New game")
                for w in line.split() if w.startswith("random-"))
    again = run(["play"], env, stdin="quit\n")
    assert "Resumed game" in again.stdout and f"({name})" in again.stdout
    listing = run(["games", "list"], env).stdout
    assert name in listing
