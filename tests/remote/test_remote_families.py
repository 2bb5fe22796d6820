"""Every family's kinds of action over a real mosquitto, two processes (tests/remote/side.py);
in a file of its own so that ``--dist loadfile`` runs it beside test_remote_games.py."""

from __future__ import annotations

import time

import pytest
from clubtools import MOSQUITTO
from test_remote_games import broker, finish, same_game, side  # noqa: F401  (broker: the fixture)

from board_driver.journal import load_any

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]

# Each family's own kinds of action over the broker, in short games: the scripted openings
# carry what must cross (csipgs purchases and the ends of turns as silent actions, a drop that
# is set down on the board; Chego's drops; Cost Progressive's several moves a turn and their
# ends), then seeded random actions until one side resigns.
CSIPGS = "e1f1 end e8f7 end buy:fcFfmW end buy:fcFfmW end P@g1 end P@g8 end".split()
FAMILIES = {
    "tomorrow-1": ([], 8),
    "csipgs": (CSIPGS, 16),
    "chego": ([], 8),
    "cost-progressive": ([], 10),
}


@pytest.mark.parametrize("variant", list(FAMILIES))
def test_each_family_plays_over_the_broker(tmp_path, broker, variant):
    script, plies = FAMILIES[variant]
    white = [a for i, a in enumerate(script) if (i // 2) % 2 == 0]      # two actions a turn (the end)
    black = [a for i, a in enumerate(script) if (i // 2) % 2 == 1]
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--variant", variant, "--moves", " ".join(white),
              "--seed", "11", "--resign-after", str(plies))
    time.sleep(0.3)
    # the variant on both sides: whichever board's invitation is played (a loaded machine may
    # start b2 first), the game is this variant's
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--variant", variant, "--moves", " ".join(black),
              "--seed", "12", "--resign-after", str(plies))
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    h = load_any(tmp_path / "b1" / "games" / f"{r1['game']}.jsonl")
    assert h.header["variant"] == variant and r1["result"] is not None, r1
    assert len(r1["moves"]) >= plies or r1["reason"] != "resignation", r1
    if script:
        assert r1["moves"][:len(script)] == script


def test_a_chego_removal_crosses_the_broker(tmp_path, broker):
    """Chego: White's rook dropped on g6 leaves Black's pawn on h7 without an empty square to
    attack, and the pawn dies. b2's player is told to take it off and to put the rook down; both
    boards record the same capture and the game goes on."""
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--variant", "chego", "--moves", "B@h5 R@g6",
              "--seed", "21", "--resign-after", "8")
    time.sleep(0.3)
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--variant", "chego", "--moves", "P@h7", "--seed", "22",
              "--resign-after", "8")
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    assert r1["moves"][:3] == ["B@h5", "P@h7", "R@g6"] and len(r1["moves"]) >= 8, r1
    said = (tmp_path / "b2.out").read_text()
    assert "b1 (white) plays R@g6: take the black pawn off h7; put a white rook from the reserve on g6." in said, said
    from board_driver.config import load_variant
    from engine.game import new_game
    for name in ("b1", "b2"):
        h = load_any(tmp_path / name / "games" / f"{r1['game']}.jsonl")
        g = new_game(load_variant("chego"), h.header.get("fen"))
        for t in h.actions[:3]:
            g.push(g.parse(t))
        placement, captured = g.fen().split()[0].split("[")[0], g.fen().split()[6]
        assert placement == "8/8/6R1/7B/8/8/8/8" and captured == "p"       # h7 empty, the pawn White's
