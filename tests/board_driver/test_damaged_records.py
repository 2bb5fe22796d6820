"""Damage that must never stop a start: a header this install cannot play, a `current`
pointer that is a directory, a board record that cannot be read, a game file half made by a
kill. Through the real CLI, as a player meets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board_driver.journal import load_any

pytestmark = pytest.mark.slow      # every test runs the CLI, several times

CLI = [sys.executable, "-m", "board_driver.cli"]


def run(data: Path, *args: str, stdin: str = "quit\n") -> subprocess.CompletedProcess:
    env = dict(os.environ, FAIRYBOARD_DATA=str(data))
    env.pop("XDG_DATA_HOME", None)
    return subprocess.run(CLI + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=120)


def a_game(data: Path, moves: str = "e2-e4\ne7-e5\n") -> Path:
    r = run(data, "play", "--new", "--color", "never", stdin=moves + "quit\n")
    assert r.returncode == 0, r.stderr
    (path,) = (data / "games").glob("*.jsonl")
    return path


def status_of(data: Path) -> dict[str, str]:
    r = run(data, "games", "list", "--json")
    assert r.returncode == 0, r.stderr
    return {g["id"]: g["status"] for g in json.loads(r.stdout)}


def test_a_header_naming_an_unknown_variant_is_damaged_and_a_new_game_starts(tmp_path):
    data = tmp_path / "data"
    path = a_game(data)
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    head["variant"] = "renamed-in-an-upgrade"
    path.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    before = path.read_bytes()
    r = run(data, "play", "--color", "never")
    assert r.returncode == 0, r.stderr
    assert "New game" in r.stdout and "renamed-in-an-upgrade" in r.stderr
    r = run(data, "play", "--color", "never")           # the next start goes on with the new game
    assert r.returncode == 0 and "Resumed game" in r.stdout, r.stderr
    assert path.read_bytes() == before                   # the damaged file is left as it is
    assert not list((data / "games").glob("*-recovered.jsonl"))   # no copy that could not be played either
    st = status_of(data)
    assert st[path.stem] == "damaged" and list(st.values()).count("playing") == 1


def test_a_bad_start_position_in_the_header_is_damage_too(tmp_path):
    data = tmp_path / "data"
    path = a_game(data)
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    head["start_fen"] = "not a position"
    path.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    r = run(data, "play", "--color", "never")
    assert r.returncode == 0 and "New game" in r.stdout, r.stderr
    assert status_of(data)[path.stem] == "damaged"


def test_a_current_pointer_that_is_a_directory_is_named_and_ignored(tmp_path):
    data = tmp_path / "data"
    a_game(data)
    (data / "current").unlink()
    (data / "current").mkdir()
    r = run(data, "play", "--color", "never")
    assert r.returncode == 0, r.stderr
    assert f"{data / 'current'}: a directory" in r.stderr and "New game" in r.stdout
    assert (data / "current").is_dir()


def test_a_board_record_that_cannot_be_read_lists_the_game_as_damaged(tmp_path):
    data = tmp_path / "data"
    path = a_game(data)
    with path.open("a") as f:
        f.write(json.dumps({"type": "event", "t": 5, "sq": "zz9", "placed": True, "occ": "ff"}) + "\n")
    assert status_of(data)[path.stem] == "damaged"


def test_a_half_made_game_file_is_removed_at_start(tmp_path):
    data = tmp_path / "data"
    a_game(data)
    orphan = data / "games" / ".20250101-000000.jsonl.new"
    orphan.write_text('{"type": "game"')
    r = run(data, "play", "--color", "never")
    assert r.returncode == 0, r.stderr
    assert not orphan.exists() and f"removed {orphan}" in r.stderr


def test_an_events_line_without_end_is_refused_without_reading_it_whole(tmp_path):
    r = subprocess.run(CLI + ["play", "--events", "/dev/zero"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, FAIRYBOARD_DATA=str(tmp_path)))
    assert r.returncode == 2 and "/dev/zero line 1: longer than 4096 characters" in r.stderr


def test_deeply_nested_json_in_an_events_file_is_a_clear_error(tmp_path):
    events = tmp_path / "deep.jsonl"
    events.write_text('{"t": 0, "lift": ' + "[" * 2000 + "]" * 2000 + "}\n")
    r = run(tmp_path / "data", "play", "--events", str(events))
    assert r.returncode == 2 and "line 1: JSON nested too deeply" in r.stderr and "Traceback" not in r.stderr


def test_a_journal_line_too_long_to_be_a_record_is_damage(tmp_path):
    data = tmp_path / "data"
    path = a_game(data)
    with path.open("a") as f:
        f.write('{"type": "event", "pad": "' + "x" * 100_000 + '"}\n')
    assert status_of(data)[path.stem] == "damaged"


def test_a_record_of_an_unknown_type_is_damage_and_the_game_before_it_goes_on(tmp_path):
    data = tmp_path / "data"
    path = a_game(data)
    lines = path.read_text().splitlines()
    assert json.loads(lines[4])["action"] == "e2e4"
    bad = 6                                      # after White's move, before Black's
    lines.insert(bad - 1, json.dumps({"type": "castle", "side": "king"}))
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()
    r = run(data, "play", "--color", "never")
    assert r.returncode == 0, r.stderr
    assert f"line {bad}: an unknown record type 'castle'" in r.stderr
    assert f"Resumed game {path.stem}-recovered" in r.stdout
    assert load_any(data / "games" / f"{path.stem}-recovered.jsonl").actions == ["e2e4"]
    assert path.read_bytes() == before
    assert status_of(data)[path.stem] == "damaged"
