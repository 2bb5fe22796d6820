"""The ``hint`` command: the engine's best move for the side to move, said in words, lit on the
LEDs like the computer's move until the game moves on, and journaled as a hint."""

from __future__ import annotations

import json

import pytest
from drivertools import Table

from board_driver.opponents.computer import Computer, Hinter, attach
from board_driver.opponents.players import find_fsf_wasm, make_player
from board_driver.referee.commands import CommandError

# 1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6??: White mates with Qxf7
SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"


def _records(t: Table) -> list[dict]:
    return [json.loads(ln) for ln in t.session.journal.path.read_text().splitlines()]


def test_hint_is_said_lit_and_journaled_until_the_move_is_made(tmp_path):
    t = Table("orthodox", fen=SCHOLAR, data=tmp_path)
    assert attach(t.session) is None and isinstance(t.session.hinter, Hinter)   # no computer, a hinter
    t.session.attach_hinter(Hinter(t.session.game.variant, spec="builtin:2"))
    out = t.say("hint")
    assert len(out) == 1 and out[0].startswith("Hint for white (#1): Qxf7#: "), out
    assert "take the black pawn off f7" in out[0] and "move the queen from h5 to f7" in out[0]
    lit = t.lit()
    assert lit.get("h5") == "computer from" and t.blinking("h5") and lit.get("f7") in ("computer to", "remove")
    hint = [r for r in _records(t) if r["type"] == "hint"]
    assert hint == [{"type": "hint", "ply": 0, "color": "white", "actions": ["h5f7"], "engine": "builtin:2",
                     "cp": hint[0]["cp"], "mate": 1}]
    # the player makes another move: the hint goes out
    t.move("b1", "c3").wait(1000).settle()
    assert [a.text for a in t.session.game.history] == ["b1c3"]
    assert not {sq for sq, layer in t.lit().items() if layer.startswith("computer")}
    # the journal still reads as a game (the hint record is no action)
    from board_driver.journal import load_any
    assert load_any(t.session.journal.path).actions == ["b1c3"]


def test_hint_refuses_when_the_computer_is_to_move_or_the_game_is_over(tmp_path):
    t = Table("orthodox", fen=SCHOLAR)
    v = t.session.game.variant
    t.session.attach_computer(Computer({0: make_player("builtin:1", v)}, seconds=0.1))
    t.session.attach_hinter(Hinter(v, spec="builtin:1"))
    with pytest.raises(CommandError, match="computer is to move"):
        t.say("hint")
    t2 = Table("orthodox")
    with pytest.raises(CommandError, match="no engine"):
        t2.say("hint")
    t2.session.attach_hinter(Hinter(v, spec="builtin:1"))
    t2.say("resign")
    with pytest.raises(CommandError, match="game is over"):
        t2.say("hint")


@pytest.mark.slow
def test_hint_in_tomorrows_chess_comes_from_fairy_stockfish(tmp_path):
    if isinstance(find_fsf_wasm(), str):
        pytest.skip(str(find_fsf_wasm()))
    t = Table("tomorrow-3")
    attach(t.session)
    try:
        out = t.say("hint")
        assert out and out[0].startswith("Hint for white ("), out
        assert t.session.hinter.player.spec.text == "fsf"
        assert any(layer == "computer from" for layer in t.lit().values())
    finally:
        t.session.close()


def test_the_hint_and_the_evaluation_say_one_score_from_one_search():
    """A hint asked where the live evaluation has judged the position is that search, said from
    White's point of view (as the bar); Chego's score is the game's own count."""
    from drivertools import Table

    from board_driver.opponents.computer import Hinter, recall, remember, white_score
    from board_driver.opponents.players import Evaluation
    t = Table("orthodox")
    t.move("e2", "e4")
    g = t.session.game
    e5 = next(a for a in g.legal_actions() if a.text == "e7e5")
    ev = Evaluation(cp=-24, mate=None, best=(e5,), depth=14)    # Black to move: -0.24 for Black
    hinter = Hinter(g.variant, spec="builtin:1")
    remember(hinter._player().spec.text, g, ev)
    assert recall(hinter._player().spec.text, g) is ev
    found = hinter(t.session)
    assert found.words.startswith("Hint for black (+0.24):") and "e7" in found.words    # White +0.24, as the bar
    assert white_score(g, ev) == (24, None)
    c = Table("chego").session.game
    w, b = c.points()
    assert white_score(c, Evaluation(cp=-700, mate=None, best=())) == (100 * (w - b), None)
    hinter.close()
