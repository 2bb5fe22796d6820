"""Previews: while a piece is in the player's hand, the idle loop works out what a commit of
each action the board may be on its way to needs after the push (its name, the ending, the
typed view, the next drops). A game played with them must read exactly as one played
without: the same moves, notices, LED frames and journal."""

import random

import pytest
from drivertools import Table

from board_driver.sim.choreography import Choreographer, Style


class IdleTable(Table):
    """A table whose loop is idle between the player's frames: ``prepare()`` runs each time."""

    def wait(self, ms: int) -> Table:
        super().wait(ms)
        self.session.prepare()
        return self


def _play(table: Table, variant: str, seed: str, plies: int):
    s = table.session
    s.san_notices = True
    rng = random.Random(seed)
    ch = Choreographer(rng, Style(slide=0.0, bounce=0.0))
    geo = s.game.geometry
    seen = []
    for _ in range(plies):
        legal = [a for a in s.game.legal_actions() if not a.silent]
        if not legal or s.outcome() is not None:
            break
        a = rng.choice(legal)
        for kind, sq in ch._order(s.game, a, s.game.occupancy()):
            if kind == "lift":
                table.lift(geo.name(sq))
            elif kind == "place":
                table.place(geo.name(sq))
            seen.append((s.verdict.status, s.leds, tuple(s.drain_notices())))
        table.wait(1000)
        if s.verdict.status == "prompt":
            table.say("choose 1")
            table.wait(1000)
        seen.append((s.verdict.status, s.leds, tuple(s.drain_notices())))
    return [a.text for a in s.game.history], seen


@pytest.mark.parametrize("variant", ["orthodox", "tomorrow-3", "csipgs-power-super", "cost-progressive", "chego"])
def test_a_game_reads_the_same_with_previews(variant):
    plain = Table(variant)
    moves, seen = _play(plain, variant, f"previews/{variant}", 40)
    idle = IdleTable(variant)
    seeded = []
    seed = idle.session.bases.seed
    idle.session.bases.seed = lambda pv: (seeded.append(pv.action.text), seed(pv))
    moves2, seen2 = _play(idle, variant, f"previews/{variant}", 40)
    assert moves2 == moves
    for i, (a, b) in enumerate(zip(seen, seen2)):
        assert a == b, (i, moves[:i])
    assert len(seen2) == len(seen)
    assert len(seeded) >= len(moves) // 3, (len(seeded), len(moves))     # and the previews were used


def test_a_commit_takes_the_preview_made_for_it():
    t = IdleTable("orthodox")
    s = t.session
    t.lift("g1")                                    # the knight in the hand: f3 and h3 are previewed
    b = s.bases
    targets = {a.text: b.preview_of(a) for a in s.game.legal_actions() if a.text in ("g1f3", "g1h3")}
    assert all(pv is not None for pv in targets.values())
    assert targets["g1f3"].san == "Nf3" and targets["g1f3"].outcome is None
    seeded = targets["g1f3"].state
    t.place("f3").wait(500)
    assert [a.text for a in s.game.history] == ["g1f3"]
    assert s.bases.state() is seeded                # the commit used the view worked out ahead
    assert s.bases.state() == s.game.board_state()  # which is the game's own
