"""The family contract (engine.contract), checked the same way for every variant of every family.

Random legal play from each variant's start: push then pop restores the FEN; an action that
is stale (played already) or from another game is refused with IllegalMoveError and leaves
the game unchanged; the occupancy after an action with a physical effect is exactly
(before - lifts) | places; the typed view agrees with describe(); copy() is independent of
the game it came from; reprs evaluate back. Plus the guard that engine/ imports only the
standard library.
"""

from __future__ import annotations

import ast
import random
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import engine
from board_driver.config import configs_dir, load_variant
from engine.chego import ChegoGame
from engine.contract import ActionKind, BoardState, Game, Termination
from engine.costprog import CostProgressiveGame
from engine.csipgs import CsipgsGame
from engine.csipgs_cost import parse_amount
from engine.errors import IllegalMoveError
from engine.game import ChessGame, MoveCost, Purchase, new_game
from engine.geometry import Geometry
from engine.position import Position
from engine.variant import PieceType, Variant

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = sorted(p.stem for p in (configs_dir() / "variants").glob("*.yaml"))
PLIES = 14
COLORS = ("white", "black")


def _play(name: str, seed: int = 7):
    """A game of ``name`` and the legal actions chosen at random, one per ply."""
    rng = random.Random(f"{name}-{seed}")
    return new_game(load_variant(name)), rng


def _pick(game, rng):
    acts = game.legal_actions()
    if not acts:
        return None
    # prefer actions that move pieces, so the board changes (silent ones still come up)
    physical = [a for a in acts if not a.silent]
    pool = physical if physical and rng.random() < 0.8 else acts
    return rng.choice(pool)


def _army(rank1: int, rank2: int) -> str:
    back = ["R", "N", "B", "BR", "royal-WF", "B", "N", "R"]
    return ",".join([f"{d}@{f}{rank1}" for d, f in zip(back, "abcdefgh")]
                    + [f"fcFfmW@{f}{rank2}" for f in "abcdefgh"])


def _army_setup(game) -> None:
    """Army csipgs: record both armies (the orthodox array, in designs)."""
    game.push(_army(1, 2))
    game.push(_army(8, 7))
    assert game.phase == "action", "both armies recorded"


def test_every_variant_is_covered():
    assert len(VARIANTS) >= 20
    families = {load_variant(n).family for n in VARIANTS}
    assert families == {"chess", "csipgs", "chego", "cost-progressive"}


@pytest.mark.parametrize("name", VARIANTS)
def test_random_play_keeps_the_contract(name):
    game, rng = _play(name)
    assert isinstance(game, Game)
    if name == "csipgs-army":
        _army_setup(game)
    other = new_game(load_variant("orthodox" if game.family != "chess" else "chego"))
    foreign = [a for a in other.legal_actions() if not a.silent][:3]
    played = []
    for _ in range(PLIES):
        a = _pick(game, rng)
        if a is None:
            break
        before_fen, before_occ = game.fen(), game.occupancy()
        game.push(a)
        after_fen = game.fen()
        # the board's view of the action
        if not a.silent and a.kind != ActionKind.SETUP:
            lifts = sum(1 << s for s in a.lifts)
            places = sum(1 << s for s in a.places)
            assert game.occupancy() == (before_occ & ~lifts) | places, a.text
        assert isinstance(a.kind, ActionKind)
        if a.kind == ActionKind.PROMOTION:
            assert a.promotion and a.text.lower().endswith(a.promotion)
        if a.kind == ActionKind.DROP:
            assert a.drop == a.piece and a.drop
        # push/pop restores the position, and push again gives the same one
        assert game.pop() == a
        assert game.fen() == before_fen
        game.push(a)
        assert game.fen() == after_fen
        # a stale action (just played) is refused and changes nothing
        stale = [x for x in played[-2:] + [a] if x not in game.legal_actions()]
        for x in stale:
            with pytest.raises(IllegalMoveError):
                game.push(x)
            assert game.fen() == after_fen
        for x in foreign:
            if x in game.legal_actions():
                continue
            with pytest.raises(IllegalMoveError):
                game.push(x)
            assert game.fen() == after_fen
        played.append(a)
        _check_view(game)
        if game.outcome() is not None:
            assert isinstance(game.outcome().termination, Termination)
            break


@pytest.mark.parametrize("name", VARIANTS)
def test_copy_is_a_snapshot(name):
    game, rng = _play(name, seed=3)
    if name == "csipgs-army":
        _army_setup(game)
    for _ in range(6):
        a = _pick(game, rng)
        if a is None:
            break
        game.push(a)
    if not game.history:
        pytest.skip("no action to take back")
    fen, n = game.fen(), len(game.history)
    snap = game.copy()
    assert snap.fen() == fen and snap.history == game.history
    while snap.history:
        snap.pop()
    assert game.fen() == fen and len(game.history) == n          # the original is untouched
    assert snap.fen().split()[0] == new_game(game.variant).fen().split()[0] or name == "csipgs-army"
    # and the original still plays on
    a = _pick(game, rng)
    if a is not None:
        game.push(a)
        game.pop()
    assert game.fen() == fen


@pytest.mark.parametrize("name", VARIANTS)
def test_cached_answers_equal_fresh_ones(name):
    """What a game keeps between calls (legal actions, the ending, the actions listed ahead
    while deciding a design phase's outcome) equals what a game replayed to the same point
    computes afresh, whatever was asked before: outcome first, actions first, or nothing."""
    game, rng = _play(name, seed=11)
    if name == "csipgs-army":
        _army_setup(game)
    for ply in range(24):
        # ask in a different order each ply: the caches must not depend on it
        if ply % 4 == 0:
            game.outcome()
        elif ply % 4 == 1:
            game.legal_actions()
        a = _pick(game, rng)
        if a is None:
            break
        if ply % 4 == 2:
            game.san(a)             # naming a move may work out what its push will find
        game.push(a)
        fresh = new_game(game.variant)
        for done in game.history:
            fresh.push(done.text)
        assert [x.text for x in game.legal_actions()] == [x.text for x in fresh.legal_actions()], \
            f"after {' '.join(x.text for x in game.history)}"
        assert game.outcome() == fresh.outcome()
        long_way = _drops_after_silent_phase(fresh)
        assert sorted(a.text for a in game.next_drops()) == sorted(a.text for a in long_way)
        # the squares the LEDs light, which some families know without listing the drops
        assert game.next_drop_squares() == {sq for a in long_way for sq in a.places}
        if game.outcome() is not None:
            break


def _drops_after_silent_phase(game) -> list:
    """The drops the next physical action may be, the long way: the legal drops, or when
    only silent actions are legal, those after ``end``."""
    if game.outcome() is not None:
        return []
    legal = game.legal_actions()
    if legal and all(a.silent for a in legal):
        end = [a for a in legal if a.kind == ActionKind.END]
        if not end:
            return []
        game = game.copy()
        game.push(end[0])
        legal = game.legal_actions()
    return [a for a in legal if a.kind == ActionKind.DROP]


def _check_view(game) -> None:
    """The typed view agrees with the board and with describe()."""
    st = game.board_state()
    assert isinstance(st, BoardState)
    d = game.describe()
    g = game.geometry
    assert st.family == game.family and st.turn == game.turn
    assert st.occupancy == game.occupancy()
    assert dict(st.pieces) == game.piece_map()
    assert st.outcome == game.outcome()
    assert tuple(st.checked) == tuple(game.checked_royals())
    if st.outcome is None:
        drops = {sq for a in game.legal_actions() if a.kind == "drop" for sq in a.places}
        assert st.drop_squares == drops
    if game.family == "csipgs":
        assert st.phase == d["phase"] and st.hand_word == "reserve"
        assert st.treasuries == tuple(parse_amount(d["treasury"][c], "t") for c in COLORS)
        for c, colour in enumerate(COLORS):
            by_design = {st.piece_names[letter]: n for letter, n in st.hands[c].items()}
            assert by_design == d["reserve"][colour]
    elif game.family == "chego":
        assert st.points == (d["points"]["white"], d["points"]["black"]) and st.passes == d["passes"]
        for c, colour in enumerate(COLORS):
            assert dict(st.hands[c]) == d["hands"][colour]
            assert st.territory[c] == frozenset(g.parse(n) for n in d["territory"][colour])
    elif game.family == "cost-progressive":
        assert st.points_left == d["points_left"] and st.turn_budget == d["turn_budget"]
        assert st.phase is None and st.treasuries is None
    else:
        assert st.phase is None and st.treasuries is None and st.points is None


def test_stale_actions_of_the_issue_are_refused():
    # re-pushing b1a3 used to erase the knight; re-pushing e1d1 in csipgs erased the king
    g = new_game(load_variant("orthodox"))
    a = g.parse("b1a3")
    g.push(a)
    g.push("e7e5")
    with pytest.raises(IllegalMoveError, match="b1a3"):
        g.push(a)
    assert g.piece_map()[g.geometry.parse("a3")] == ("n", 0)
    c = new_game(load_variant("csipgs"))
    k = c.parse("e1d1")
    c.push(k)
    with pytest.raises(IllegalMoveError, match="e1d1"):
        c.push(k)
    c.push("end")
    assert c.outcome() is None and c.piece_map()[c.geometry.parse("d1")][1] == 0


def test_repr_evaluates_back():
    ns = dict(vars(engine), Variant=Variant, PieceType=PieceType, Geometry=Geometry, Position=Position,
              ChessGame=ChessGame, CsipgsGame=CsipgsGame, ChegoGame=ChegoGame,
              CostProgressiveGame=CostProgressiveGame, Fraction=Fraction)
    for name in ("orthodox", "tomorrow-5", "chego-holes", "cost-progressive", "csipgs", "csipgs-configurable"):
        game, rng = _play(name, seed=11)
        for _ in range(3):
            a = _pick(game, rng)
            if a is not None and game.outcome() is None:
                game.push(a)
        if game.family == "csipgs" and game.phase == "design":
            game.push("end")
        back = eval(repr(game), ns)
        assert type(back) is type(game) and back.variant == game.variant
        assert back.fen() == game.fen()
        if game.family == "csipgs":
            assert back.treasury == game.treasury and back.designs == game.designs
        pos = eval(repr(game.position), ns)
        assert pos.fen() == game.position.fen()


def test_an_action_s_detail_is_the_named_tuple_its_family_and_kind_say():
    cp = new_game(load_variant("cost-progressive"), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 3")
    costs = {a.text: a.detail_as(MoveCost).cost for a in cp.legal_actions() if not a.silent}
    assert costs["e2e4"] == 1 and costs["g1f3"] == 3        # a pawn costs 1, a knight 3
    with pytest.raises(TypeError, match="e2e4.*not a Purchase"):
        cp.parse("e2e4").detail_as(Purchase)
    cs = CsipgsGame(load_variant("csipgs"), "4k3/8/8/8/8/8/8/4K3 w - - 0 1", treasury=(3, 0))
    buys = {a.detail_as(Purchase).design: a.detail_as(Purchase).price
            for a in cs.legal_actions() if a.kind is ActionKind.BUY}
    assert buys and all(price <= 3 for price in buys.values())


def test_enums_read_as_their_text():
    assert ActionKind.DROP == "drop" and f"{ActionKind.EN_PASSANT}" == "en-passant"
    assert str(Termination.CHECKMATE) == "checkmate"


def test_engine_imports_only_the_standard_library():
    stdlib = set(sys.stdlib_module_names)
    bad = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:          # relative: inside engine/
                    continue
                names = [node.module or ""]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top not in stdlib and top != "engine":
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {n}")
    assert not bad, "engine/ must stay pure (standard library only):\n" + "\n".join(bad)


CHECKING = [n for n in VARIANTS if load_variant(n).family in ("chess", "csipgs", "cost-progressive")]


@pytest.mark.parametrize("name", CHECKING)
def test_a_checking_move_named_then_played_ends_as_on_a_copy(name):
    """Naming a checking move looks at what follows it (chess: whether the opponent can reply;
    Cost Progressive and csipgs: the ending after playing it on the side), and the push that
    follows reuses that: the ending must be the one the same move reaches on a copy of the
    game taken before the move was named."""
    game, rng = _play(name, seed=3)
    if name == "csipgs-army":
        _army_setup(game)
    checks = 0
    for _ in range(160):
        acts = game.legal_actions()
        if not acts or game.outcome() is not None:
            break
        reference = game.copy()         # taken before any naming in this state
        moves = [a for a in acts if a.kind in (ActionKind.MOVE, ActionKind.CAPTURE)]
        named = {a: game.san(a) for a in rng.sample(moves, min(6, len(moves)))}
        checking = [a for a, text in named.items() if text.endswith(("+", "#"))]
        a = rng.choice(checking) if checking and rng.random() < 0.7 else _pick(game, rng)
        text = named.get(a)
        game.push(a)
        reference.push(a)
        assert game.outcome() == reference.outcome(), " ".join(x.text for x in game.history)
        if text is not None and text.endswith(("+", "#")):
            checks += 1
            mate = reference.outcome() is not None and reference.outcome().termination is Termination.CHECKMATE
            assert text.endswith("#") == mate, text
    assert checks >= 3
