"""Takebacks and draw offers asked of the other board's player, over a real mosquitto, each
board a process of its own (tests/remote/side.py): the asking board's player types the command,
the other board says what is asked, and its player answers (the test writes the console lines).
At the end both journals hold the same actions, the same takebacks and the same result."""

from __future__ import annotations

import json

import pytest
from clubtools import MOSQUITTO, OPERA
from test_remote_games import broker, finish, plies_of, same_game, side, wait_for  # noqa: F401  (broker: the fixture)

from board_driver.journal import load_any
from board_driver.pgn import pgn_of

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]


def start(tmp_path, broker, *, plies=14):
    """b1's player plays White (the Opera game's moves) and stops to think at ply 4 (after
    1. e4 e5 2. Nf3 d6): there it asks something of b2's player."""
    c1, c2 = tmp_path / "b1.commands", tmp_path / "b2.commands"
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(OPERA[0::2]), "--hold-at", "4",
              "--hold-for", "8", "--commands", str(c1), "--resign-after", str(plies))
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--moves", " ".join(OPERA[1::2]),
              "--commands", str(c2), "--resign-after", str(plies))
    wait_for(lambda: plies_of(tmp_path, "b1") == 4 and plies_of(tmp_path, "b2") == 4, 30, "four plies on both")
    return b1, b2, c1, c2


def out(tmp_path, name: str) -> str:
    return (tmp_path / f"{name}.out").read_text()


def pops(tmp_path, name: str, gid: str) -> list[tuple[int, str]]:
    path = tmp_path / name / "games" / f"{gid}.jsonl"
    return [(r["ply"], r["action"]) for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "pop"]


def test_a_takeback_accepted_is_made_on_both_boards_and_the_game_goes_on(tmp_path, broker):
    b1, b2, c1, c2 = start(tmp_path, broker)
    c1.write_text("takeback\n")
    wait_for(lambda: "asks to take back" in out(tmp_path, "b2"), 10, "b2's player to be asked")
    assert "b1 (white) asks to take back g1f3, d7d6: say accept or decline." in out(tmp_path, "b2")
    assert plies_of(tmp_path, "b1") == plies_of(tmp_path, "b2") == 4     # nothing taken back before the answer
    c2.write_text("accept\n")
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    # both boards took back Nf3 and d6; White then played its next move, d4, instead of Nf3
    assert pops(tmp_path, "b1", r1["game"]) == pops(tmp_path, "b2", r1["game"]) == [(3, "d7d6"), (2, "g1f3")]
    assert r1["moves"][:3] == ["e2e4", "e7e5", "d2d4"] and len(r1["moves"]) >= 14 and r1["result"] is not None
    assert "b2 accepts your takeback: d7d6, g1f3. Put the pieces back as the LEDs show." in out(tmp_path, "b1")
    assert "Taken back as b1 asked: d7d6, g1f3. Put the pieces back as the LEDs show." in out(tmp_path, "b2")


def test_a_takeback_declined_changes_nothing(tmp_path, broker):
    b1, b2, c1, c2 = start(tmp_path, broker, plies=8)
    c1.write_text("takeback\n")
    wait_for(lambda: "asks to take back" in out(tmp_path, "b2"), 10, "b2's player to be asked")
    c2.write_text("decline\n")
    wait_for(lambda: "b2 declines your takeback request." in out(tmp_path, "b1"), 10, "b1 to be told")
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    assert pops(tmp_path, "b1", r1["game"]) == pops(tmp_path, "b2", r1["game"]) == []
    assert r1["moves"][:6] == OPERA[:6] and len(r1["moves"]) >= 8
    assert "accept: b2 has asked nothing" not in out(tmp_path, "b2")


def test_a_draw_offered_and_accepted_ends_both_games_drawn(tmp_path, broker):
    b1, b2, c1, c2 = start(tmp_path, broker)
    c1.write_text("draw\n")
    wait_for(lambda: "offers a draw" in out(tmp_path, "b2"), 10, "b2's player to be offered a draw")
    assert "b1 (white) offers a draw: say accept or decline." in out(tmp_path, "b2")
    c2.write_text("accept\n")
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    assert r1["moves"] == OPERA[:4]
    assert (r1["result"], r1["reason"]) == (r2["result"], r2["reason"]) == ("1/2-1/2", "agreement")
    for name in ("b1", "b2"):
        rec = load_any(tmp_path / name / "games" / f"{r1['game']}.jsonl")
        assert (rec.result, rec.reason) == ("1/2-1/2", "agreement")
        assert '[Result "1/2-1/2"]' in pgn_of(rec) and pgn_of(rec).rstrip().endswith("1/2-1/2")
    assert "b2 accepts your draw offer: drawn by agreement, 1/2-1/2." in out(tmp_path, "b1")
    assert "b1 and you agree to a draw: drawn by agreement, 1/2-1/2." in out(tmp_path, "b2")
