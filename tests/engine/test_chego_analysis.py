"""Chego's drop analysis (computed in bulk: bit-sliced attack counts, each piece's reach, the
squares that would kill it) against the rules applied one candidate drop at a time, on random
games of every Chego variant and on crowded random positions with every kind of capture
(lame, initial-rank, hopping, bent, limited and oblique riders; holes)."""

import random

import pytest

from board_driver.config import load_variant, variant_names
from engine.contract import ActionKind
from engine.game import new_game
from engine.moves import decode
from engine.position import Position
from engine.variant import Variant

CHEGO = [n for n in variant_names() if load_variant(n).family == "chego"]



def _pick(actions, rng):
    """A random action, killing drops half the time when there are some, passing rarely."""
    killing = [a for a in actions if a.lifts]
    if killing and rng.random() < 0.5:
        return rng.choice(killing)
    if len(actions) > 1 and rng.random() < 0.9:
        return rng.choice(actions[:-1])
    return actions[-1]

def fairy_chego(holes=("e4", "b6")):
    return Variant.from_dict({
        "name": "fairy-chego", "family": "chego", "board": {"files": 9, "ranks": 7, "holes": list(holes)},
        "pieces": {"king": {"royal": False, "castles": False}, "horse": {"letter": "x", "betza": "nN"},
                   "cannon": {}, "griffin": {}, "aanca": {}, "shortrook": {"letter": "s", "betza": "R2"},
                   "jumper": {"letter": "j", "betza": "icnDfcF"}, "pawn": {},
                   "nightrider": {"letter": "v", "betza": "NN"}, "hopper": {"letter": "h", "betza": "pB"},
                   "tiger": {}, "rook": {}, "bishop": {}},
        "rules": {"unlimited": True},
        "castling": False, "promotion": "none",
        "start_fen": empty_fen(9, 7, holes)}, "<test>")


def empty_fen(files, ranks, holes=()):
    rows = []
    for rank in range(ranks, 0, -1):
        row = "".join("*" if f"{'abcdefghijklmnop'[f]}{rank}" in holes else "1" for f in range(files))
        for k in range(16, 1, -1):
            row = row.replace("1" * k, str(k))
        rows.append(row)
    return "/".join(rows) + " w - - 0 1"


def reference(game):
    """(legal drops {(type, square): killed squares}, (neutral, white, black) empty squares),
    by the rules text: every count and condition worked out for one candidate drop at a time,
    with the piece put on the board and taken off again."""
    pos = game.position
    geo = game.geometry
    us = pos.turn
    occ = pos.occ[0] | pos.occ[1]
    empty = ~occ & geo.mask
    attacks = {p: pos.attacks_of(p) for p in geo.squares_of(occ)}
    count = {s: [0, 0] for s in geo.squares_of(empty)}
    for p, att in attacks.items():
        for s in geo.squares_of(att & empty):
            count[s][pos.board[p] & 1] += 1
    areas = tuple([s for s, (w, b) in count.items() if cond(w, b)]
                  for cond in (lambda w, b: w == b, lambda w, b: w > b, lambda w, b: b > w))
    legal = {}
    for sq in areas[0]:
        free = empty & ~(1 << sq)
        for t in range(len(game.variant.pieces)):
            if not game.in_hand(us, t):
                continue
            pos.put_code(sq, (t + 1) * 2 + us)
            att = pos.attacks_of(sq)
            dead, suicide = [], False
            for p, before in attacks.items():
                if before & empty and not pos.attacks_of(p) & free:
                    dead.append(p)
                    suicide |= pos.board[p] & 1 == us
            pos.take_code(sq)
            if att & free and not att & occ and not suicide:
                legal[(t, sq)] = tuple(dead)
    return legal, areas


def check(game):
    legal, (neutral, white, black) = reference(game)
    name = game.geometry.name
    if game.outcome() is not None:
        legal = {}                       # the game is over: territory and points only
    acts = [a for a in game.legal_actions() if a.kind == ActionKind.DROP]
    ours = {}
    for a in acts:
        t, sq, _, _ = decode(a.code)
        ours[(t, sq)] = tuple(sorted(a.lifts))
        # the action object (possibly one made for an earlier position) says what it does now
        letter = game.variant.pieces[t].letter
        assert a.text == f"{letter.upper()}@{name(sq)}" and a.places == frozenset({sq})
        assert a.detail == tuple((k, game._letter(game.position.board[k])) for k in sorted(a.lifts))
        assert game.why_illegal(a.text) == ""
    assert ours == legal, game.fen()
    assert [decode(a.code)[:2] for a in acts] == sorted(legal), "drops listed by type, then square"
    assert game.territory() == {"neutral": [name(s) for s in neutral], "white": [name(s) for s in white],
                                "black": [name(s) for s in black]}
    st = game.board_state()
    assert st.territory == (frozenset(white), frozenset(black))
    assert st.points == game.points() == (len(white) + len(game.captured[0]), len(black) + len(game.captured[1]))
    for t in range(len(game.variant.pieces)):
        letter = game.variant.pieces[t].letter
        squares = sorted(sq for (u, sq) in legal if u == t)
        if game.in_hand(game.turn, t) or not squares:
            assert game.drop_squares(letter) == squares
        for sq in game.geometry.squares():
            if (t, sq) not in legal:
                assert game.why_illegal(f"{letter}@{name(sq)}") != "", (letter, name(sq), game.fen())
    return sum(1 for v in legal.values() if v)


@pytest.mark.slow
@pytest.mark.parametrize("variant", CHEGO + ["fairy"])
def test_analysis_agrees_with_the_rules_drop_by_drop_along_random_games(variant):
    v = fairy_chego() if variant == "fairy" else load_variant(variant)
    rng = random.Random(variant)
    kills = 0
    for _ in range(3):
        game = new_game(v)
        while game.outcome() is None:
            kills += check(game)
            actions = game.legal_actions()
            a = _pick(actions, rng)
            game.push(a)
        check(game)


def crowded(v, rng, n):
    """A FEN with n random pieces, several of them with a single empty attacked square (a
    drop may kill them, or be suicide), and the side to move at random."""
    while True:
        pos = Position(v)
        codes = range(2, 2 * len(v.pieces) + 2)
        for sq in rng.sample(v.geometry.squares(), n):
            pos.put_code(sq, rng.choice(codes))
        empty = ~(pos.occ[0] | pos.occ[1]) & v.geometry.mask
        libs = [pos.attacks_of(sq) & empty for sq in v.geometry.squares_of(~empty & v.geometry.mask)]
        if sum(1 for x in libs if x and not x & (x - 1)) >= 3:
            pos.turn = rng.choice((0, 1))
            return pos.fen()


@pytest.mark.slow
@pytest.mark.parametrize("variant", CHEGO + ["fairy", "fairy-no-holes"])
def test_analysis_agrees_with_the_rules_on_crowded_positions(variant):
    if variant.startswith("fairy"):
        v = fairy_chego(() if variant == "fairy-no-holes" else ("e4", "b6"))
    else:
        v = load_variant(variant)
        v = Variant.from_dict({**_as_dict(v), "rules": {"unlimited": True}}, "<test>")
    rng = random.Random(variant)
    kills = 0
    for i in range(60):
        n = len(v.geometry.squares())
        game = new_game(v, crowded(v, rng, rng.randint(n // 6, n // 3)))
        kills += check(game)
    assert kills >= 10


def _as_dict(v):
    g = v.geometry
    return {"name": v.name, "family": "chego",
            "board": {"files": g.files, "ranks": g.ranks, "holes": [g.name(h) for h in sorted(g.holes)]},
            "pieces": {p.name: {"royal": False, "castles": False} if p.name == "king" else {} for p in v.pieces},
            "castling": False, "promotion": "none",
            "start_fen": empty_fen(g.files, g.ranks, [g.name(h) for h in g.holes])}


def test_drop_actions_are_made_once_and_found_again_only_for_the_same_victims():
    # Black's N@b1 kills the white piece on a1 in both positions: the king whose only empty
    # square b1 is, then a rook whose b1-g1 it cuts off. The knights on a2 and b2 wall a1 in.
    v = load_variant("chego")
    king = new_game(v, "8/8/8/8/8/8/NN6/K6r[n] b - - 0 1")
    # copies of a game share the drop actions made so far, as the second game does here
    rook = new_game(v, "8/8/8/8/8/8/NN6/R6r[n] b - - 0 1")
    rook._drop_rows, rook._drop_kills = king._drop_rows, king._drop_kills
    a, b = king.parse("N@b1"), rook.parse("N@b1")
    assert a.detail == ((0, "K"),) and b.detail == ((0, "R"),)
    assert a.lifts == b.lifts == frozenset({0})
    quiet = {x.text: x for x in king.legal_actions() if not x.lifts}
    for x in rook.legal_actions():
        if not x.lifts and x.text in quiet:
            assert x is quiet[x.text]


def _strip(planes):
    out = list(planes)
    while out and not out[-1]:
        out.pop()
    return out


def same_analysis(derived, full, game):
    """The analysis worked out from the previous position's equals the one from nothing."""
    assert derived.attacks == full.attacks
    assert [_strip(p) for p in derived.planes] == [_strip(p) for p in full.planes]
    for field in ("neutral", "white", "black", "legal", "kills", "killing", "doomed"):
        assert getattr(derived, field) == getattr(full, field), field
    # blocked squares: whatever each kept, it holds the same for the same piece
    for code in derived.blocked.keys() & full.blocked.keys():
        assert derived.blocked[code] == full.blocked[code], code
    assert all(full.blocked.get(code, derived.blocked[code]) == derived.blocked[code]
               for code in derived.blocked)


@pytest.mark.parametrize("variant", CHEGO + ["fairy", "fairy-crowded", "chego-crowded"])
def test_the_analysis_after_an_action_equals_the_analysis_from_nothing(variant):
    if variant.startswith("fairy"):
        v = fairy_chego()
    else:
        v = load_variant(variant.removesuffix("-crowded"))
        v = Variant.from_dict({**_as_dict(v), "rules": {"unlimited": True}}, "<test>")
    rng = random.Random(variant)
    derived = kills = 0
    for _ in range(4):
        n = len(v.geometry.squares())
        game = new_game(v, crowded(v, rng, n // 5) if variant.endswith("crowded") else None)
        game.legal_actions()
        while game.outcome() is None:
            actions = game.legal_actions()
            a = _pick(actions, rng)
            kills += bool(a.lifts)
            game.push(a)
            derived += game._after is not None
            fresh = game.copy()
            fresh._analysis = fresh._legal = fresh._after = None
            same_analysis(game._analyse(), fresh._analyse(), game)
            assert game.legal_actions() == fresh.legal_actions()
            if rng.random() < 0.1 and len(game.history) > 1:
                game.pop()                       # from nothing again after a takeback
                game.push(a)
    assert derived > 40 and (kills >= 3 or not variant.endswith("crowded")), (derived, kills)
