"""Playing the computer on the simulated board: its action lit and described, carried out by the
player, the reconciler holding the player to it, silent actions applied, takebacks in pairs."""

from __future__ import annotations

import pytest
from drivertools import Table

from board_driver.opponents.computer import Computer
from board_driver.referee.scene import movers, victims
from board_driver.opponents.players import make_player
from engine.game import new_game

COMPUTER_LAYERS = ("computer from", "computer to")


def _table(variant: str, side: int, *, fen: str | None = None, spec: str = "builtin:1") -> Table:
    t = Table(variant, fen=fen)
    v = t.session.game.variant
    t.session.attach_computer(Computer({side: make_player(spec, v)}, seconds=5.0))
    t.display.update(t.session)
    return t


def _computer_squares(t: Table) -> dict[str, str]:
    return {sq: layer for sq, layer in t.lit().items() if layer in COMPUTER_LAYERS + ("remove",)}


def _carry_out(t: Table):
    """Do the shown action as a player would; returns it."""
    a = t.session.computer.hint()
    assert a is not None, "no computer action is shown"
    name = t.session.name
    lit = _computer_squares(t)
    for sq in movers(a):
        assert lit.get(name(sq)) == "computer from" and t.blinking(name(sq))
    for sq in a.places:
        if sq not in a.lifts:
            assert lit.get(name(sq)) == "computer to"
    for sq in victims(a):
        assert lit.get(name(sq)) == "remove"
    for sq in sorted(victims(a)):
        t.lift(name(sq))
    for sq in sorted(movers(a)):
        t.lift(name(sq))
    for sq in sorted(a.places):
        t.place(name(sq))
    t.wait(1000).settle()
    return a


def _human_move(t: Table):
    """A legal move of the human side, made on the board."""
    g = t.session.game
    a = next(x for x in g.legal_actions() if x.kind == "move")
    name = t.session.name
    frm = next(iter(a.lifts))
    to = next(iter(a.places))
    t.move(name(frm), name(to)).wait(1000).settle()
    return a


@pytest.mark.parametrize("variant", ["orthodox", "tomorrow-1", "courier"])
def test_computer_move_is_lit_described_and_carried_out(variant):
    t = _table(variant, 1)
    _human_move(t)
    notes = t.session.drain_notices()
    said = [n for n in notes if n.startswith("Computer (black) plays")]
    assert said, notes
    a = t.session.computer.hint()
    assert a in t.session.game.legal_actions()
    assert t.session.name(next(iter(a.places))) in said[-1]
    _carry_out(t)
    assert t.session.game.history[-1] == a
    assert t.session.game.turn == 0 and t.session.computer.hint() is None
    assert not {k: v for k, v in t.lit().items() if v in COMPUTER_LAYERS}


def test_computer_plays_white_first_and_its_turn_is_the_only_one_accepted():
    t = _table("orthodox", 0)
    a = t.session.computer.hint()
    assert a is not None and t.session.game.turn == 0
    # the player makes another white move instead: nothing is committed, the board is wrong
    other = next(x for x in t.session.game.legal_actions() if x != a and x.kind == "move"
                 and not (set(x.lifts) & set(a.lifts)) and not (set(x.places) & set(a.places)))
    name = t.session.name
    t.move(name(next(iter(other.lifts))), name(next(iter(other.places)))).wait(1000).settle()
    assert t.session.game.history == []
    assert t.status == "mismatch"
    assert t.pending["type"] == "mismatch"
    # put it back: the computer's move is shown again, and carrying it out is accepted
    t.move(name(next(iter(other.places))), name(next(iter(other.lifts)))).wait(1000).settle()
    assert t.status == "settled" and t.session.computer.hint() == a
    _carry_out(t)
    assert [x.text for x in t.session.game.history] == [a.text]


def test_takeback_of_a_computer_move_takes_back_the_pair():
    t = _table("orthodox", 1)
    _human_move(t)
    _carry_out(t)
    assert len(t.session.game.history) == 2
    replies = t.say("takeback")
    assert t.session.game.history == []
    assert "Taken back" in replies[0]
    # the board must be put back: both moves are shown to undo
    assert t.pending["type"] == "mismatch"
    assert t.session.computer.hint() is None


def test_chego_computer_drops():
    t = _table("chego", 1)
    g = t.session.game
    drop = next(a for a in g.legal_actions() if a.kind == "drop")
    t.place(t.session.name(next(iter(drop.places)))).wait(1000).settle()
    t.say(f"choose {drop.piece}") if t.status == "prompt" else None
    t.wait(1000).settle()
    assert len(g.history) == 1
    a = t.session.computer.hint()
    assert a is not None and a.kind == "drop"
    assert any(n.startswith("Computer (black) plays") and "reserve" in n for n in t.session.drain_notices())
    _carry_out(t)
    assert g.history[-1] == a and g.turn == 0


def test_csipgs_silent_actions_are_announced_and_applied():
    # Black has zorkmids to spend: the computer's purchases and ends of turn need no board
    t = _table("csipgs", 1, fen="4k3/8/8/8/8/8/8/4K3 w - - 0 10")
    g = t.session.game
    g.state.treasury = [g.state.treasury[0], g.state.treasury[1] + 10]
    t.session.invalidate()
    _human_move(t)
    t.say("end")
    notes = t.session.drain_notices()
    hint = t.session.computer.hint()
    if hint is not None:               # it moves or transfers: carry it out, the rest follows
        _carry_out(t)
        notes += t.session.drain_notices()
    silent = [n for n in notes if n.startswith("Computer (black): ")]
    assert silent, notes
    # every silent action was applied by the session, journaled like the player's own
    texts = [a.text for a in g.history[2:]]
    assert any(x.startswith(("buy:", "design:")) or x == "end" for x in texts), texts
    assert g.turn == 0 and g.phase == "action"


def test_cost_progressive_turn_shown_step_by_step():
    # White's eighth turn: 8 points; the knight clears the a-file, then Ra8 mates
    t = _table("cost-progressive", 0, fen="6k1/5ppp/8/8/8/8/N7/R5K1 w - - 0 8")
    c = t.session.computer
    first = c.hint()
    assert first is not None and first.piece == "n"
    assert any("then 1 more" in n for n in t.session.drain_notices())
    _carry_out(t)
    second = c.hint()
    assert second is not None and second.text == "a1a8", second
    _carry_out(t)
    assert t.session.outcome() is not None and t.session.outcome().reason == "checkmate"


def test_movers_and_victims_of_every_kind_of_action():
    from board_driver.config import load_variant
    g = new_game(load_variant("orthodox"), "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1")
    by = {a.text: a for a in g.legal_actions()}
    name = g.geometry.name
    castle = by["e1g1"]
    assert {name(s) for s in movers(castle)} == {"e1", "h1"} and not victims(castle)
    ep = by["e5d6"]
    assert {name(s) for s in movers(ep)} == {"e5"} and {name(s) for s in victims(ep)} == {"d5"}
    cap = by["a1a8"]
    assert {name(s) for s in movers(cap)} == {"a1"} and {name(s) for s in victims(cap)} == {"a8"}
