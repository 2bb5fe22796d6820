"""Random legal games, played physically, come back as exactly the same games.

For every variant in configs/variants/ (and two random dice arrays), random games from the
engine -- and, for the variants Fairy-Stockfish can express, random games from Fairy-Stockfish
-- are turned into realistic event streams by the choreographer: captures in both lift
orders, castling either way round, en passant, promotions answered before, after or left
to the default, drops with prompts, Chego removals, multi-move turns ended by "end" or by
the opponent's move, slides with short and long stops, contact bounce, knocked pieces put
back. The driver must rebuild the very same list of actions. Illegal moves and impossible
pieces appended to such a stream end in a mismatch, never in another game.
"""

import functools
import random

import pytest
from drivertools import random_actions, replay_script
from noisytools import opening

from board_driver.config import load_variant, variant_names
from board_driver.sim.choreography import script_game
from board_driver.sim.events import Ev
from engine.fsf import expressible, variants_ini
from engine.game import new_game

VARIANTS = variant_names() + ["random-1-2-3", "random-3-4-6"]
PLIES = 40


@functools.lru_cache(maxsize=None)
def game_and_script(variant: str, seed: int, plies: int = PLIES):
    rng = random.Random(f"{variant}/{seed}")
    v = load_variant(variant)
    g = new_game(v)
    acts = opening(g)
    acts += random_actions(g, rng, plies)
    events = script_game(new_game(v), acts, rng)
    return acts, events


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_engine_games_come_back_the_same(variant):
    for seed in range(2):
        acts, events = game_and_script(variant, seed)
        t = replay_script(variant, events)
        assert t.moves == [a.text for a in acts], (variant, seed)
        assert t.pending is None, (variant, seed, t.pending)


def test_the_streams_contain_the_physical_variety():
    """The scripts of the test above really contain what it claims to cover."""
    seen = set()
    for variant in VARIANTS:
        for seed in range(2):
            acts, events = game_and_script(variant, seed)
            seen |= {a.kind for a in acts}
            seen |= {"kill" for a in acts if a.kind == "drop" and a.lifts}
            seen |= {"victim first" for i, e in enumerate(events[1:], 1)
                     if e.kind == "lift" and events[i - 1].kind == "lift"}
            for e in events:
                if e.kind == "input":
                    seen.add(e.arg.split()[0].split(":")[0])
            last = {}
            for e in events:
                if e.kind != "input":
                    if e.arg in last and e.t - last[e.arg] < 10:
                        seen.add("bounce")
                    last[e.arg] = e.t
            for i in range(2, len(events)):
                a, b = events[i - 1], events[i]
                if a.kind == "place" and b.kind == "lift" and a.arg == b.arg and b.t - a.t > 400:
                    seen.add("long stop")
                if a.kind == "lift" and b.kind == "place" and a.arg == b.arg and b.t - a.t > 100:
                    seen.add("knocked piece put back")
    for must in ("capture", "castle", "en-passant", "promotion", "drop", "kill", "buy", "end", "pass",
                 "setup", "choose", "victim first", "bounce", "long stop", "knocked piece put back"):
        assert must in seen, must


FSF_VARIANTS = [n for n in VARIANTS if expressible(load_variant(n))]


@pytest.fixture(scope="module")
def fsf():
    pyffish = pytest.importorskip("pyffish")
    pyffish.load_variant_config("\n".join(variants_ini(load_variant(n), "fbd-" + n) for n in FSF_VARIANTS))
    return pyffish


@pytest.mark.parametrize("variant", FSF_VARIANTS)
def test_random_fairy_stockfish_games_come_back_the_same(fsf, variant):
    v = load_variant(variant)
    for seed in range(2):
        rng = random.Random(f"fsf/{variant}/{seed}")
        moves: list[str] = []
        for _ in range(PLIES):
            legal = sorted(fsf.legal_moves("fbd-" + variant, v.start_fen, moves))
            if not legal:
                break
            moves.append(rng.choice(legal))
        g = new_game(v)
        acts = []
        for m in moves:
            a = g.parse(m)
            acts.append(a)
            g.push(a)
        events = script_game(new_game(v), acts, rng)
        t = replay_script(variant, events)
        assert t.moves == moves, (variant, seed)


def _illegal_move(game, rng):
    """A piece of the side to move carried to an empty square no legal action takes it to."""
    g = game.geometry
    occ = game.occupancy()
    legal = game.legal_actions()
    ends = [a for a in legal if a.kind == "end"]
    if ends:
        game.push(ends[0])
        legal = legal + game.legal_actions()
        game.pop()
    pm = game.piece_map()
    mine = [sq for sq, (_, c) in pm.items() if c == game.turn]
    empty = [sq for sq in g.squares() if not occ >> sq & 1]
    rng.shuffle(mine)
    for f in mine:
        reach = {to for a in legal if f in a.lifts for to in a.places}
        targets = [x for x in empty if x not in reach]
        if targets:
            return [("lift", f), ("place", rng.choice(targets))]
    return None


def _impossible_piece(game, rng):
    """A piece appearing on a square where nothing may be dropped (or in a game without drops)."""
    g = game.geometry
    occ = game.occupancy()
    legal = game.legal_actions()
    drops = {sq for a in legal if a.kind in ("drop", "promotion") for sq in a.places}   # pieces from outside
    empty = [sq for sq in g.squares() if not occ >> sq & 1 and sq not in drops]
    return [("place", rng.choice(empty))] if empty else None


@pytest.mark.parametrize("variant", ["orthodox", "tomorrow-4", "chego", "csipgs", "cost-progressive"])
def test_illegal_and_impossible_streams_end_in_a_mismatch_never_another_game(variant):
    v = load_variant(variant)
    for seed in range(4):
        rng = random.Random(f"bad/{variant}/{seed}")
        g = new_game(v)
        acts = random_actions(g, rng, rng.randint(0, 20))
        if g.outcome() is not None:
            continue
        make = _illegal_move if seed % 2 == 0 else _impossible_piece
        bad = make(g, rng)
        if bad is None:
            continue
        events = script_game(new_game(v), acts, rng)
        t = (events[-1].t if events else 0) + 2000
        for kind, sq in bad:
            events.append(Ev(t, kind, g.geometry.name(sq)))
            t += 300
        table = replay_script(variant, events)
        assert table.moves == [a.text for a in acts], (variant, seed)
        assert table.pending is not None and table.pending["type"] == "mismatch", (variant, seed, table.pending)
        # and the fix the LEDs show is exactly the undoing of the bad events
        undo = {g.geometry.name(sq) for _, sq in bad}
        shown = {s for pair in table.pending["moves"] for s in pair} | set(table.pending["clear"]) | set(table.pending["fill"])
        assert shown == undo
