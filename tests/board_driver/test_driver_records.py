"""Game records under damage and faults: every ending reaches the journal, `games list/show/
export` and the PGN; damaged journals are listed, named and never stop a new game; the journal
writes whole records or fails loudly; one process per data folder."""

import errno
import io
import json
import os
import subprocess
import sys

import chess.pgn
import pytest
from drivertools import Table

from board_driver.cli import main
from board_driver.host import lifecycle
from board_driver.journal import (
    GameStore,
    Journal,
    JournalError,
    load_record,
    read_records,
)
from board_driver.settings import load_profile, load_settings

CLI = [sys.executable, "-m", "board_driver.cli"]


def fb(capsys, *args):
    """The CLI in this process: exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def script(tmp_path, *steps, name="game.jsonl"):
    """An event file: "e2-e4" (lift, place), "lift e4", "place d4", or a console command."""
    lines, t = [], 1000
    for step in steps:
        words = step.split()
        if "-" in step and len(words) == 1:
            a, b = step.split("-")
            lines += [{"t": t, "lift": a}, {"t": t + 300, "place": b}]
        elif words[0] in ("lift", "place"):
            lines.append({"t": t, words[0]: words[1]})
        else:
            lines.append({"t": t, "input": step})
        t += 1000
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(p)


# -- every ending reaches the records -----------------------------------------------------------------

ENDINGS = [
    # variant, fen, steps, (result, reason) in the journal, PGN Result
    ("orthodox", None, ("e2-e4", "resign"), ("1-0", "resignation"), "1-0"),
    ("orthodox", None, ("e2-e4", "resign white"), ("0-1", "resignation"), "0-1"),
    ("orthodox", None, ("f2-f3", "e7-e5", "g2-g4", "d8-h4"), ("0-1", "checkmate"), "0-1"),
    ("tomorrow-1", "k11/12/1K10/2Q9/12/12/12/12 w - - 0 1", ("c5-c7",), ("3/5-2/5", "stalemate"), "1-0"),
    ("orthodox", "4k3/8/8/8/8/8/8/R3K3 w - - 99 60", ("a1-a2",), ("1/2-1/2", "fifty-move rule"), "1/2-1/2"),
    ("orthodox", None, ("g1-f3", "g8-f6", "f3-g1", "f6-g8", "g1-f3", "g8-f6", "f3-g1", "f6-g8"),
     ("1/2-1/2", "threefold repetition"), "1/2-1/2"),
    ("chego", None, ("place d4", "choose n", "pass", "pass"), ("1-0", None), "1-0"),
    ("orthodox", None, ("e2-e4", "resign", "takeback"), (None, None), "*"),
    ("orthodox", None, ("f2-f3", "e7-e5", "g2-g4", "d8-h4", "takeback"), (None, None), "*"),
]


@pytest.mark.parametrize("variant,fen,steps,want,pgn_result", ENDINGS,
                         ids=[f"{e[0]}-{e[3][1] or e[3][0]}-{i}" for i, e in enumerate(ENDINGS)])
def test_every_ending_reaches_the_journal_list_show_and_pgn(tmp_path, data, capsys, variant, fen, steps, want,
                                                            pgn_result):
    args = ["play", "--variant", variant, "--events", script(tmp_path, *steps), "--json"]
    code, out, err = fb(capsys, *args + (["--fen", fen] if fen else []))
    assert code == 0, err
    report = json.loads(out)
    result, reason = want
    assert report["result"] == result
    rec = load_record(report["journal"])
    assert rec.result == result
    if reason:
        assert rec.reason == reason and report["reason"] == reason
    code, out, _ = fb(capsys, "games", "list", "--json")
    (listed,) = [g for g in json.loads(out) if g["id"] == report["game"]]
    assert listed["status"] == (result or "playing") and listed["result"] == result
    code, out, _ = fb(capsys, "games", "list")
    line = next(x for x in out.splitlines() if x.startswith(report["game"]))
    assert (result or "playing") in line.split()
    code, out, _ = fb(capsys, "games", "show", report["game"])
    shown = next(x for x in out.splitlines() if x.startswith("Result:"))
    assert shown == ("Result: in progress" if result is None else f"Result: {result} ({rec.reason})")
    code, pgn, _ = fb(capsys, "games", "export", report["game"])
    assert f'[Result "{pgn_result}"]' in pgn and pgn.rstrip().endswith(pgn_result)
    # the standard's Termination values; the ending in words is the last comment
    assert f'[Termination "{"unterminated" if rec.reason is None else "normal"}"]' in pgn
    if rec.reason:
        assert " ".join(pgn.split()).endswith(f"{{{rec.reason}}} {pgn_result}")
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None and game.headers["Termination"] in ("normal", "unterminated")
    if variant == "orthodox":
        assert game.end().comment == (rec.reason or "")
        assert not game.errors and game.headers["Result"] == pgn_result
        board = game.end().board()
        if reason == "checkmate":
            assert board.is_checkmate()
        if reason and "rule" in reason:
            assert board.can_claim_fifty_moves()
        if reason == "threefold repetition":
            assert board.can_claim_threefold_repetition()


def test_a_resignation_the_old_version_journaled_without_its_result_still_ends_the_game(tmp_path):
    store = GameStore(tmp_path)
    gid, j = store.create("orthodox", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    j.write({"type": "push", "ply": 1, "action": "e2e4", "w": 0}, sync=False)
    j.write({"type": "resign", "color": "black"}, sync=True)
    j.close()
    rec = store.load(gid)
    assert (rec.result, rec.reason, rec.status) == ("1-0", "resignation", "1-0")


def test_new_after_a_resignation_keeps_the_resignation(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    t.say("resign")
    gid = t.session.game_id
    t.session.close()
    s, resumed = _opened(lifecycle.open_game(t.store, profile=load_profile("sim"), settings=load_settings(), new=True))
    s.close()
    assert not resumed and t.store.load(gid).result == "1-0" and t.store.load(gid).reason == "resignation"


# -- the journal's own faults ---------------------------------------------------------------------------

def test_a_whole_last_record_without_its_newline_is_kept(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    path = t.store.path(t.session.game_id)
    t.session.close()
    data = path.read_bytes()
    assert data.endswith(b"\n") and b'"e2e4"' in data.splitlines()[-1]
    path.write_bytes(data[:-1])                       # the newline never reached the disk
    t.session = lifecycle.resume(t.store, t.session.game_id, profile=t.profile, settings=t.settings,
                               now=t.clock())
    assert t.moves == ["e2e4"]
    t.board.queue.append(t.board.current())
    t.move("e7", "e5").move("g1", "f3")
    t.session.close()
    assert load_record(path).actions == ["e2e4", "e7e5", "g1f3"]


def _short_writes(monkeypatch, plan):
    """os.write, for the journal's descriptor, following ``plan``: an int writes that many bytes
    at most, an exception is raised; then normal writes."""
    real = os.write
    plan = list(plan)

    def write(fd, data):
        if plan:
            step = plan.pop(0)
            if isinstance(step, BaseException):
                raise step
            return real(fd, bytes(data[:step]))
        return real(fd, data)
    monkeypatch.setattr(os, "write", write)


def test_short_writes_still_write_whole_records(tmp_path, monkeypatch):
    j = Journal(tmp_path / "g.jsonl")
    j.write({"type": "game", "id": "g"}, sync=True)
    _short_writes(monkeypatch, [5, 1, 7])
    j.write({"type": "push", "ply": 1, "action": "e2e4"}, sync=True)
    j.write({"type": "push", "ply": 2, "action": "e7e5"}, sync=True)
    j.close()
    assert [r.get("action") for r in read_records(tmp_path / "g.jsonl")] == [None, "e2e4", "e7e5"]


def test_a_full_disk_fails_loudly_and_leaves_no_half_record(tmp_path, monkeypatch):
    j = Journal(tmp_path / "g.jsonl")
    j.write({"type": "game", "id": "g"}, sync=True)
    _short_writes(monkeypatch, [9, OSError(errno.ENOSPC, "No space left on device")])
    with pytest.raises(JournalError, match="No space left on device"):
        j.write({"type": "push", "ply": 1, "action": "e2e4"}, sync=True)
    assert (tmp_path / "g.jsonl").read_bytes().endswith(b'"g"}\n')       # the half record is gone
    j.write({"type": "push", "ply": 1, "action": "e2e4"}, sync=True)    # the disk has room again
    j.close()
    assert [r.get("action") for r in read_records(tmp_path / "g.jsonl")] == [None, "e2e4"]


def test_a_move_the_disk_refuses_is_an_error_and_the_record_stays_readable(tmp_path, monkeypatch):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    real = os.write
    calls = []

    def full(fd, data):
        if b'"push"' in bytes(data) or calls:
            calls.append(len(data))
            if len(calls) == 1:
                return real(fd, bytes(data[:10]))              # part of the record, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)
    monkeypatch.setattr(os, "write", full)
    with pytest.raises(JournalError, match="No space left on device"):
        t.move("e7", "e5")
    monkeypatch.setattr(os, "write", real)
    path = t.store.path(t.session.game_id)
    assert load_record(path).actions == ["e2e4"]
    assert t.moves == ["e2e4"]                        # the game holds what the journal holds
    t.wait(1200).settle()                             # the disk has room again: the move goes in
    assert t.moves == ["e2e4", "e7e5"] and load_record(path).actions == ["e2e4", "e7e5"]


def test_the_observer_hears_every_record_after_its_fsync(tmp_path, monkeypatch):
    synced = {}                      # inode -> file size at its last fsync
    real_fsync = os.fsync

    def fsync(fd):
        real_fsync(fd)
        st = os.fstat(fd)
        synced[st.st_ino] = st.st_size
    monkeypatch.setattr(os, "fsync", fsync)
    heard = []

    def on_record(gid, seq, record):
        path = store.path(gid)
        lines = path.read_bytes().split(b"\n")
        end = sum(len(x) + 1 for x in lines[:seq + 1])
        assert synced.get(path.stat().st_ino, 0) >= end, f"record {seq} heard before its fsync"
        heard.append((gid, seq, record))
    store = GameStore(tmp_path, on_record=on_record)
    t = Table(data=tmp_path)
    t.session.close()
    t.store = store
    t.session = lifecycle.start(store, "orthodox", profile=t.profile, settings=t.settings)
    t.move("e2", "e4").move("e7", "e5")
    t.say("resign")
    t.session.close()
    gid = t.session.game_id
    lines = store.path(gid).read_bytes().splitlines()
    assert [seq for _, seq, _ in heard] == list(range(len(lines)))      # every line, in order, once
    for g, seq, record in heard:
        assert g == gid and json.loads(lines[seq]) == record
    assert heard[0][2]["type"] == "game" and heard[-1][2]["type"] == "result"
    # an observer that fails does not stop the game
    store.on_record = lambda *a: 1 / 0
    s = lifecycle.resume(store, gid, profile=t.profile, settings=t.settings)
    s.command("takeback")
    s.close()
    assert store.load(gid).result is None


def test_a_kill_between_creating_a_game_and_pointing_current_at_it_leaves_no_empty_game(tmp_path, monkeypatch):
    store = GameStore(tmp_path)
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    first = t.session.game_id
    t.session.close()

    def killed(self, gid):
        raise KeyboardInterrupt("killed")
    monkeypatch.setattr(GameStore, "set_current", killed)
    with pytest.raises(KeyboardInterrupt):
        _opened(lifecycle.open_game(store, profile=load_profile("sim"), settings=load_settings(), variant="chego"))
    monkeypatch.undo()
    assert [r.id for r in store.list()] == [first]
    assert store.current() == first


def test_game_ids_are_checked_so_show_cannot_read_outside_the_games_folder(tmp_path, data, capsys):
    outside = tmp_path / "x.jsonl"
    outside.write_text('{"type":"game","id":"x","variant":"orthodox","start_fen":'
                       '"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","players":{"white":"SECRET"}}\n')
    (data / "games").mkdir(parents=True)
    for cmd in ("show", "export"):
        code, out, err = fb(capsys, "games", cmd, "../../x")
        assert code == 2 and "SECRET" not in out and "is not a game id" in err
    with pytest.raises(JournalError):
        GameStore(data).path("../x")


@pytest.mark.slow
def test_a_second_process_on_the_same_data_folder_is_refused(tmp_path):
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)
    first = subprocess.Popen(CLI + ["play", "--color", "never"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = ""
        while "New game" not in line:
            line = first.stdout.readline()
            assert line, first.stderr.read()
        second = subprocess.run(CLI + ["play", "--color", "never"], input="e2-e4\n", capture_output=True,
                                text=True, env=env, timeout=60)
        assert second.returncode == 2
        assert f"in use by process {first.pid} (fairyboard play)" in second.stderr
        assert "New game" not in second.stdout
    finally:
        first.communicate("quit\n", timeout=60)
    assert first.returncode == 0
    again = subprocess.run(CLI + ["play", "--color", "never"], input="quit\n", capture_output=True, text=True,
                           env=env, timeout=60)
    assert again.returncode == 0 and "Resumed game" in again.stdout


def _opened(o):
    return o.session, o.resumed
