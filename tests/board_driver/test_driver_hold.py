"""A held move (one that could still slide on) is answered from the verdict that held it while
nothing changes, and committed at its deadline: the answers must be those reconcile() gives
when asked afresh at the same moment."""

import random

import pytest
from drivertools import Table

from board_driver.referee.reconcile import Board, reconcile
from board_driver.sim.choreography import Choreographer, Style


def _fresh(s, now):
    return reconcile(s.bases.base, Board(s.occupancy, s.events), now, hold_ms=s.settings.hold_ms,
                     prefs=s.bases.prefs(s.choice), end_base=s.bases.end_base)


@pytest.mark.parametrize("variant", ["orthodox", "tomorrow-1", "cost-progressive", "courier"])
def test_a_held_move_is_answered_as_reconcile_answers_it(variant):
    rng = random.Random(variant)
    t = Table(variant)
    s = t.session
    geo = s.game.geometry
    ch = Choreographer(rng, Style(slide=0.0, bounce=0.0))
    held = 0
    for _ in range(30):
        legal = [a for a in s.game.legal_actions() if not a.silent]
        if not legal or s.outcome() is not None:
            break
        a = rng.choice(legal)
        n = len(s.game.history)
        for kind, sq in ch._order(s.game, a, s.game.occupancy()):
            if kind == "lift":
                t.lift(geo.name(sq))
            elif kind == "place":
                t.place(geo.name(sq))
        if s.verdict.status == "hold":
            held += 1
            deadline = s.verdict.deadline
            for now in (t.clock(), deadline - 1, deadline):
                assert s._verdict(now) == _fresh(s, now), (a.text, now)
        t.wait(1000)
        if len(s.game.history) == n:        # a prompt: take its default or the first option
            t.say("choose 1")
            t.wait(1000)
        assert s.verdict.status == "settled", (a.text, s.verdict)
    assert held >= 5


@pytest.mark.parametrize("variant", ["orthodox", "tomorrow-3", "courier", "csipgs-power-super", "tomorrow-5"])
def test_whether_a_move_may_slide_on_is_the_same_by_the_short_way(variant):
    # a move of one piece asks only for destinations further along its line; every move
    # is also asked the long way (every source and every other destination of its moves)
    from board_driver.config import load_variant
    from board_driver.referee.reconcile import Base, _extendable, _extendable_general
    from engine.game import new_game
    rng = random.Random(f"slide/{variant}")
    g = new_game(load_variant(variant))
    yes = no = 0
    for _ in range(60):
        legal = g.legal_actions()
        if not legal or g.outcome() is not None:
            break
        base = Base(0, g.occupancy(), tuple(legal), g.geometry.files)
        for i, a in enumerate(legal):
            lm, pm = base.masks[i]
            if not (lm & ~pm and pm & ~lm) or lm & pm:
                continue
            short = _extendable(base, i)
            assert short == _extendable_general(base, i), (a.text, g.fen())
            yes += short
            no += not short
        physical = [a for a in legal if not a.silent]
        g.push(rng.choice(physical if physical and rng.random() < 0.9 else legal))
    assert yes > 10 and no > 10
