"""Which game `play` plays: a damaged journal never stops a new game, an events script plays a
game of its own, leaving a game says so, any unfinished game resumes by id, players' names
are kept. The CLI's own code, run in this process (and as a subprocess where it matters)."""

import hashlib
import io
import json
import os
import subprocess
import sys

import pytest
from drivertools import Table

from board_driver.cli import main
from board_driver.journal import GameStore, load_any

CLI = [sys.executable, "-m", "board_driver.cli"]


def script(tmp_path, *steps, name="game.jsonl"):
    lines, t = [], 1000
    for step in steps:
        if "-" in step:
            a, b = step.split("-")
            lines += [{"t": t, "lift": a}, {"t": t + 300, "place": b}]
        else:
            lines.append({"t": t, "input": step})
        t += 1000
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(p)


def game_with_moves(data, *moves):
    """A game in progress in ``data`` (the one `play` resumes), with these moves made."""
    t = Table(data=data)
    for m in moves:
        a, b = m.split("-")
        t.move(a, b)
    t.session.close()
    return t.session.game_id, t.store.path(t.session.game_id)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def damage(path, line_no, text=b"\x00garbage\xff"):
    lines = path.read_bytes().split(b"\n")
    lines.insert(line_no - 1, text)
    path.write_bytes(b"\n".join(lines))


def push_line(path, nth):
    """The 1-based line number of the nth push record."""
    pushes = [i for i, raw in enumerate(path.read_bytes().split(b"\n"), 1) if b'"push"' in raw]
    return pushes[nth]


# -- damaged journals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [[], ["--new"], ["--variant", "chego"], ["--events", "EVENTS"]],
                         ids=["play", "new", "variant", "events"])
def test_a_damaged_current_game_never_stops_a_new_game(tmp_path, data, fb, args):
    gid, path = game_with_moves(data, "e2-e4", "e7-e5", "g1-f3")
    bad = push_line(path, 2)                 # garbage before the third move
    damage(path, bad)
    before = digest(path)
    args = [script(tmp_path, "d2-d4") if a == "EVENTS" else a for a in args]
    code, out, err = fb("play", "--color", "never", *args, stdin="quit\n")
    assert code == 0, err
    assert digest(path) == before                                   # the damaged file is left as it is
    store = GameStore(data)
    copy = f"{gid}-recovered"
    if "--events" in args:                                          # a game of its own: nothing touched
        assert store.current() == gid and not store.path(copy).exists()
    else:
        named = [line for line in err.splitlines() if str(path) in line]
        assert len(named) == 1 and f"line {bad}:" in named[0]
        # the readable part is kept (the third move's board events come before the damage:
        # the move is seen again on resumption) and offered
        assert store.load(copy).actions[:2] == ["e2e4", "e7e5"]
        assert f"--resume {copy}" in err or f"goes on as game {copy}" in err
    if not args:
        assert f"Resumed game {copy}" in out and store.current() == copy
        assert store.load(copy).actions == ["e2e4", "e7e5", "g1f3"]
    code, out, _ = fb("games", "list", "--json")
    listed = {g["id"]: g for g in json.loads(out)}
    assert listed[gid]["status"] == "damaged" and f"line {bad}" in listed[gid]["damage"]
    code, out, err = fb("games", "list")
    assert any(line.startswith(gid + " ") and "damaged" in line for line in out.splitlines())
    code, out, _ = fb("games", "show", gid)
    assert code == 1 and f"{path}: line {bad}" in out and "Moves: 1. e4 e5\n" in out


def test_an_illegal_move_in_a_journal_is_named_by_show_and_the_rest_goes_on(data, fb):
    gid, path = game_with_moves(data, "e2-e4", "e7-e5", "g1-f3")
    line = push_line(path, 1)
    path.write_bytes(path.read_bytes().replace(b'"e7e5"', b'"e7e2"'))
    code, out, _ = fb("games", "show", gid)
    assert code == 1 and f"Damaged: {path}: line {line}: 'e7e2'" in out
    code, out, _ = fb("games", "show", gid, "--json")
    assert json.loads(out)["moves"] == ["e2e4"] and json.loads(out)["status"] == "damaged"
    code, out, err = fb("games", "list", "--json")
    (listed,) = json.loads(out)
    assert listed["status"] == "damaged" and f"line {line}: 'e7e2'" in listed["damage"]
    code, pgn, err = fb("games", "export", gid)
    assert code == 1 and "1. e4" in pgn and '[Result "*"]' in pgn and f"line {line}" in err
    code, out, err = fb("play", "--color", "never", stdin="quit\n")
    assert code == 0 and f"line {line}" in err
    assert f"Resumed game {gid}-recovered" in out
    # the board events of Black's move come before its damaged record: seen again as e7e5
    assert GameStore(data).load(f"{gid}-recovered").actions == ["e2e4", "e7e5"]


def test_a_current_pointer_of_random_bytes_is_named_and_ignored(data, fb):
    data.mkdir(parents=True)
    (data / "current").write_bytes(bytes(range(256))[::7] + b"\xff\xfe")
    for args in ([], ["--new"]):
        code, out, err = fb("play", "--color", "never", *args, stdin="quit\n")
        assert code == 0, err
        assert f"{data / 'current'}: not a game id" in err and "New game" in out
        (data / "current").write_bytes(b"\xff\xfe../../etc/passwd")


def test_an_empty_game_file_is_listed_damaged_not_playing_and_a_new_game_starts(data, fb):
    (data / "games").mkdir(parents=True)
    empty = data / "games" / "20250101-120000.jsonl"
    empty.write_bytes(b"")
    (data / "current").write_text("20250101-120000\n")
    code, out, _ = fb("games", "list", "--json")
    assert [(g["id"], g["status"]) for g in json.loads(out)] == [("20250101-120000", "damaged")]
    code, out, err = fb("play", "--color", "never", stdin="quit\n")
    assert code == 0 and "New game" in out and f"{empty}: line 1: no game header" in err
    assert empty.read_bytes() == b""
    code, out, err = fb("play", "--color", "never", stdin="quit\n")
    assert "Resumed game" in out and not err


# -- events scripts, leaving and resuming games --------------------------------------------------------

def test_an_events_script_plays_a_game_of_its_own(tmp_path, data, fb):
    live, _ = game_with_moves(data, "e2-e4")
    code, out, err = fb("play", "--events", script(tmp_path, "d2-d4"), "--json")
    assert code == 0, err
    own = json.loads(out)
    assert own["game"] != live and own["moves"] == ["d2d4"]
    store = GameStore(data)
    assert store.current() == live and store.load(live).result is None        # untouched, not abandoned
    code, out, err = fb("play", "--color", "never", stdin="e7-e5\nquit\n")
    assert f"Resumed game {live}" in out and store.load(live).actions == ["e2e4", "e7e5"]
    # --resume ID: the script goes on with that game
    code, out, err = fb("play", "--events", script(tmp_path, "g1-f3"), "--resume", live, "--json")
    assert code == 0, err
    assert json.loads(out)["game"] == live and store.load(live).actions == ["e2e4", "e7e5", "g1f3"]
    assert store.load(own["game"]).actions == ["d2d4"]


def test_another_variant_says_which_game_it_left_and_resume_takes_it_up_again(data, fb):
    live, _ = game_with_moves(data, "e2-e4", "e7-e5")
    code, out, err = fb("play", "--color", "never", "--variant", "nosuch", stdin="quit\n")
    assert code == 2 and "unknown variant 'nosuch'" in err and GameStore(data).load(live).result is None
    code, out, err = fb("play", "--color", "never", "--variant", "chego", stdin="quit\n")
    assert code == 0 and f"left game {live} (orthodox, 2 actions) unfinished" in err
    assert f"fairyboard play --resume {live}" in err
    store = GameStore(data)
    chego = store.current()
    assert chego != live and store.load(live).status == "abandoned"
    code, out, err = fb("play", "--color", "never", "--resume", live, stdin="g1-f3\nquit\n")
    assert code == 0, err
    assert f"Resumed game {live}" in out and f"left game {chego} (chego, 0 actions)" in err
    rec = store.load(live)
    assert rec.actions == ["e2e4", "e7e5", "g1f3"] and rec.result is None and store.current() == live
    code, out, err = fb("play", "--resume", "nosuch-1")
    assert code == 2 and "no such game" in err
    code, out, err = fb("play", "--resume", "../x")
    assert code == 2 and "is not a game id" in err


def test_a_finished_game_is_not_resumed_by_id(tmp_path, data, fb):
    code, out, _ = fb("play", "--events", script(tmp_path, "e2-e4", "resign"), "--json")
    gid = json.loads(out)["game"]
    code, out, err = fb("play", "--resume", gid, stdin="quit\n")
    assert code == 2 and "is over (1-0, resignation)" in err


def test_leaving_a_game_asks_on_a_terminal(data, fb, monkeypatch):
    live, _ = game_with_moves(data, "e2-e4")

    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(sys, "stdin", Tty("n\n"))
    code = main(["play", "--color", "never", "--variant", "chego"])
    assert code == 2 and GameStore(data).current() == live and GameStore(data).load(live).result is None
    monkeypatch.setattr(sys, "stdin", Tty("y\nquit\n"))
    assert main(["play", "--color", "never", "--variant", "chego"]) == 0
    assert GameStore(data).load(live).status == "abandoned"


def test_player_names_are_kept_in_the_journal_and_the_pgn(tmp_path, data, fb):
    code, out, _ = fb("play", "--events", script(tmp_path, "e2-e4"), "--white", "Ann", "--black", "Bob", "--json")
    gid = json.loads(out)["game"]
    code, pgn, _ = fb("games", "export", gid)
    assert '[White "Ann"]' in pgn and '[Black "Bob"]' in pgn
    code, out, err = fb("play", "--events", script(tmp_path, "e7-e5"), "--resume", gid, "--black", "Cy", "--json")
    assert code == 0, err
    code, pgn, _ = fb("games", "export", gid)
    assert '[White "Ann"]' in pgn and '[Black "Cy"]' in pgn
    assert load_any(GameStore(data).path(gid)).header["players"] == {"white": "Ann", "black": "Cy"}


def test_new_with_an_unknown_variant_is_an_error_and_the_game_goes_on(data, fb):
    code, out, err = fb("play", "--color", "never", stdin="e2-e4\nnew nosuch\ne7-e5\nquit\n")
    assert code == 0 and "error: new: unknown variant 'nosuch'" in out
    store = GameStore(data)
    assert [r.actions for r in store.list()] == [["e2e4", "e7e5"]]


def test_the_cli_subprocess_keeps_the_live_game_through_an_events_script(tmp_path, data):
    env = dict(os.environ)
    live = subprocess.run(CLI + ["play", "--color", "never"], input="e2-e4\nquit\n", capture_output=True,
                          text=True, env=env, timeout=60)
    assert live.returncode == 0
    gid = GameStore(data).current()
    r = subprocess.run(CLI + ["play", "--events", script(tmp_path, "d2-d4"), "--json"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["game"] != gid
    again = subprocess.run(CLI + ["play", "--color", "never"], input="quit\n", capture_output=True, text=True,
                           env=env, timeout=60)
    assert f"Resumed game {gid} (orthodox), 1 actions so far." in again.stdout
