"""The board profile's broker: section and the recorder's command line: bad input gets a clear
message naming the key or option."""

from __future__ import annotations

import json

import pytest
import yaml

from board_driver.club.broker import broker_of, parse_address
from board_driver.errors import ConfigError
from board_driver.hardware.backends import load_board


def profile(tmp_path, broker) -> str:
    p = tmp_path / "board.yaml"
    p.write_text(yaml.safe_dump({"name": "sim", "broker": broker}))
    return str(p)


def test_a_real_profile_with_two_lines(tmp_path):
    board = load_board(profile(tmp_path, {"host": "club.local", "name": "board-07"}))
    cfg = broker_of(board.data, str(board.path))
    assert (cfg.host, cfg.port, cfg.name, cfg.username, cfg.password, cfg.tls, cfg.prefix) == \
        ("club.local", 1883, "board-07", "board-07", None, None, "fairyboard")
    (tmp_path / "pw").write_text("s3cret\n")
    board = load_board(profile(tmp_path, {"host": "h", "name": "b", "password_file": str(tmp_path / "pw"),
                                          "tls": True}))
    cfg = broker_of(board.data, str(board.path))
    assert (cfg.password, cfg.port, cfg.tls is not None) == ("s3cret", 8883, True)
    assert broker_of(load_board("sim").data, "sim") is None


@pytest.mark.parametrize("broker, words", [
    ({"name": "b1"}, ["broker.host", "missing"]),
    ({"host": "h"}, ["broker.name", "missing"]),
    ({"host": "h", "name": "b 1"}, ["broker.name", "'b 1'"]),
    ({"host": "h", "name": "b1", "port": 70000}, ["broker.port", "70000"]),
    ({"host": "h", "name": "b1", "colour": 1}, ["broker.colour", "unknown key"]),
    ({"host": "h", "name": "b1", "password": "x", "password_file": "/x"}, ["broker.password_file", "not both"]),
    ({"host": "h", "name": "b1", "password_file": "/nonexistent/pw"}, ["broker.password_file", "cannot read"]),
    ({"host": "h", "name": "b1", "tls": {"ca": "/nonexistent/ca.pem"}}, ["broker.tls.ca", "no such file"]),
    ("club.local", ["broker", "must be a mapping"]),
    ({"host": "h", "name": "board-07", "username": "board-7"}, ["broker.username", "'board-7'", "'board-07'", "ACL"]),
])
def test_bad_broker_sections(tmp_path, broker, words):
    board = load_board(profile(tmp_path, broker))
    with pytest.raises(ConfigError) as e:
        broker_of(board.data, str(board.path))
    assert str(tmp_path / "board.yaml") in str(e.value)
    for w in words:
        assert w in str(e.value)


def test_addresses():
    assert parse_address("club.local") == ("club.local", 1883)
    assert parse_address("10.0.0.2:1884") == ("10.0.0.2", 1884)
    assert parse_address("[::1]:8080", 1) == ("::1", 8080)
    for bad in ("host:port", ":1883", "h:0"):
        with pytest.raises(ConfigError):
            parse_address(bad)


def test_round_command_and_rounds(tmp_path, capsys):
    from board_driver.cli import main
    from board_driver.club.store import RecorderStore
    db = tmp_path / "club.sqlite"
    assert main(["round", "R1", "--db", str(db)]) == 0
    assert main(["round", "R 2", "--db", str(db)]) == 2
    assert "round 'R 2'" in capsys.readouterr().err
    st = RecorderStore(db)
    st.add_records([("b1", "g1", 0, json.dumps({"type": "game", "variant": "orthodox"}))])
    st.close()
    assert main(["round", "R2", "--db", str(db)]) == 0
    st = RecorderStore(db)
    assert [n for n, _ in st.rounds()] == ["R1", "R2"]
    assert [g["game"] for g in st.round_games("R1")] == ["g1"] and st.round_games("R2") == []
    assert st.round_games("R3") is None


def test_recorder_rejects_a_bad_web_address(tmp_path, capsys):
    from board_driver.cli import main
    assert main(["recorder", "--web", "here:port", "--db", str(tmp_path / "c.sqlite")]) == 2
    assert "--web 'here:port': the port must be a number" in capsys.readouterr().err
    assert main(["recorder", "--broker", "h:x", "--db", str(tmp_path / "c.sqlite")]) == 2
    assert "--broker 'h:x'" in capsys.readouterr().err
    assert not (tmp_path / "c.sqlite").exists()          # nothing created for a bad command


def test_the_documented_acl_is_the_one_tested():
    """docs/club.md's ACL is the one the fault tests run mosquitto with."""
    from pathlib import Path

    from clubtools import ACL
    doc = (Path(__file__).resolve().parents[2] / "docs" / "club.md").read_text()
    block = doc[doc.index("pattern write fairyboard/%u/#"):]
    block = block[:block.index("```")]
    lines = lambda text: [x.strip() for x in text.splitlines() if x.strip() and not x.startswith("#")]  # noqa: E731
    assert lines(block) == lines(ACL)


@pytest.mark.parametrize("kind", ["text", "directory"])
def test_a_store_that_is_not_sqlite_is_one_clear_line(tmp_path, capsys, kind):
    from board_driver.cli import main
    db = tmp_path / "club.sqlite"
    if kind == "text":
        db.write_text("this is not a database, it is a shopping list\n" * 100)
    else:
        db.mkdir()
    for argv in (["round", "R1", "--db", str(db)], ["recorder", "--broker", "127.0.0.1:1", "--db", str(db)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(db) in err and "Traceback" not in err, err
        assert ("not an SQLite database" if kind == "text" else "is a directory") in err
