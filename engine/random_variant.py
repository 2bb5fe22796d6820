"""Random Variant Chess, Simplified: three dice pick a Tomorrow's Chess array.

Three ordinary dice give 56 distinct outcomes (order does not matter). Each outcome is one
of the base arrays of Tomorrow's Chess with some pieces replaced:

- all three equal (6 outcomes): variant 1, the Queen replaced by the number;
- a pair (30 outcomes): the 4th/5th variant array; the pair decides the Princess, the
  Bishops and the Man, the odd die the Queen (a 6 there repeats the pair's number);
- three consecutive numbers (4 outcomes): variant 2 with replacements;
- the other all-different outcomes (16): variant 3, split by lowest and highest number
  into "1 and 6" (the Queen), "differ by four" (Tigers and Cannon) and "differ by
  three" (Cannon and Man).

Back ranks are white's first rank, files a..l; black mirrors them on rank 8 file for file.
Names are those of ``PIECE_NAMES``. ``physical`` gives, square by square, the piece of the
set recommended to stand for each piece (the text's parentheses), else the piece itself.

Readings of the text chosen here:

- Variant 4 is the first arrangement given for variants 4 and 5 (Rook, Giraffe, Princess,
  Knight, Bishop, Queen, Griffin, Man, King, Bishop, Knight, Rook), not the Great Chess
  re-arrangement offered later under "Some Further Amendments".
- A replacement applies to every piece of that kind in the array (both Bishops become
  Alfils, both Tigers become Camels). Replacing a piece by itself ("1 Queen",
  "2 or 5 Cannon", "1 5 Tiger") changes nothing.
- Pair case: the pair sets the piece on the Princess's square, on both Bishops' squares and
  on the Man's square; the odd die 1..5 picks the Queen's replacement; an odd 6 uses the
  pair's number (which is then 1..5, since 6-6-6 is a triple).
- "Differ by four": the lowest/highest pair (1 5 or 2 6) picks the Tigers' replacement and
  the middle number the Cannon's. "Differ by three": the pair (1 4, 2 5, 3 6) picks the
  Cannon's replacement and the middle number the Man's.
- Stand-ins: Amazon by a Queen, Camel Empress and Giraffe Empress by an Empress, Aanca by a
  Griffin, Fers by a Queen, Giraffe Princess by a Princess (the text names none; it is
  the Princess it replaces). Wazir is stood for by an Empress where it replaces the Man in
  the variant 3 array (the text's parentheses) and by the Man in the 4th/5th array (the text:
  "the Queen, the Bishop, and the Man can still be used in the fifth variant to represent
  the Fers, the Alfil, and the Wazir"). The Alfil is stood for by the Bishop it replaces,
  also in 4-5-6 where the text gives no parentheses. A Camel replacing a Tiger is a Camel.
- The set holds one Griffin, yet pair outcomes with the Queen replaced by a Griffin or an
  Aanca (e.g. 1-1-2, 1-1-4) need two Griffin-looking pieces; ``physical`` reports the text's
  recommendation regardless.

Match schedule (the text's table): a variant is drawn before every odd-numbered game, colours
alternate before every even-numbered game, so player A is White in games 1, 4, 5, 8, 9, ...
and each variant is played twice, once with each player as White.
"""

from __future__ import annotations

import itertools
import operator
import random
from dataclasses import dataclass

PIECE_NAMES: tuple[str, ...] = (
    "king", "queen", "rook", "bishop", "knight", "pawn", "camel", "giraffe", "princess",
    "empress", "cannon", "tiger", "man", "griffin", "aanca", "amazon", "camel-empress",
    "giraffe-empress", "giraffe-princess", "fers", "alfil", "wazir", "courier", "sneak",
)

_BASE_RANKS: dict[int, tuple[str, ...]] = {
    1: ("rook", "giraffe", "camel", "knight", "bishop", "queen",
        "king", "bishop", "knight", "camel", "giraffe", "rook"),
    2: ("rook", "princess", "camel", "knight", "bishop", "queen",
        "king", "bishop", "knight", "camel", "empress", "rook"),
    3: ("rook", "tiger", "cannon", "man", "tiger", "knight",
        "bishop", "queen", "king", "bishop", "knight", "rook"),
    4: ("rook", "giraffe", "princess", "knight", "bishop", "queen",
        "griffin", "man", "king", "bishop", "knight", "rook"),
}

# All three dice equal: what replaces the Queen of variant 1.
_TRIPLE_QUEEN = {1: "queen", 2: "griffin", 3: "amazon", 4: "empress",
                 5: "camel-empress", 6: "giraffe-empress"}

# A pair: what stands on the Princess's, the Bishops' and the Man's squares of variant 4.
_PAIR_PIECES = {
    1: ("princess", "bishop", "man"),
    2: ("giraffe-princess", "bishop", "man"),
    3: ("cannon", "bishop", "man"),
    4: ("princess", "alfil", "wazir"),
    5: ("giraffe-princess", "alfil", "wazir"),
    6: ("cannon", "alfil", "wazir"),
}
# A pair: the odd die 1..5 replaces the Queen (6 defers to the pair's number).
_PAIR_QUEEN = {1: "queen", 2: "griffin", 3: "empress", 4: "aanca", 5: "fers"}

# Three consecutive numbers, on variant 2: (old, new) replacements by lowest die.
_CONSECUTIVE = {
    1: (),
    2: (("princess", "giraffe-princess"), ("empress", "giraffe-empress")),
    3: (("queen", "griffin"),),
    4: (("queen", "fers"), ("bishop", "alfil")),
}

# Variant 3, lowest 1 and highest 6: the middle die replaces the Queen.
_ONE_SIX_QUEEN = {2: "griffin", 3: "empress", 4: "aanca", 5: "fers"}
# Variant 3, differ by four: lowest die picks the Tigers', middle the Cannon's replacement.
_FOUR_TIGER = {1: "tiger", 2: "camel"}
_FOUR_CANNON = {2: "cannon", 3: "princess", 4: "aanca", 5: "cannon"}
# Variant 3, differ by three: lowest die picks the Cannon's, middle the Man's replacement.
_THREE_CANNON = {1: "cannon", 2: "princess", 3: "aanca"}
_THREE_MAN = {2: "wazir", 3: "giraffe", 4: "wazir", 5: "giraffe"}

# Recommended physical pieces for pieces the set lacks. The Wazir's depends on the array.
_STAND_IN = {"amazon": "queen", "camel-empress": "empress", "giraffe-empress": "empress",
             "aanca": "griffin", "fers": "queen", "giraffe-princess": "princess",
             "alfil": "bishop"}
_WAZIR_STAND_IN = {3: "empress", 4: "man"}


@dataclass(frozen=True, slots=True)
class RandomVariant:
    """The array selected by one throw of three dice."""

    dice: tuple[int, int, int]
    base: int
    description: str
    back_rank: tuple[str, ...]
    physical: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """One game of a match: who is White and whether a new variant is drawn first."""

    game: int
    white: str
    draw: bool
    variant: int


def select(dice) -> RandomVariant:
    """The variant for a throw: three ints 1..6 in any order, or a string like ``"3-1-6"``."""
    return _build(_parse_dice(dice))


def all_outcomes() -> list[RandomVariant]:
    """The 56 distinct outcomes, in ascending order of their sorted dice."""
    return [_build(d) for d in itertools.combinations_with_replacement(range(1, 7), 3)]


def roll(rng: random.Random) -> tuple[int, int, int]:
    """Throw three dice with ``rng``; the values come back in the order thrown."""
    return (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))


def schedule(n_games: int) -> list[ScheduleEntry]:
    """Colours and variant draws for the first ``n_games`` games of a match between A and B."""
    if isinstance(n_games, bool):
        raise ValueError(f"number of games must be an int >= 0, not {n_games!r}")
    try:
        n = operator.index(n_games)
    except TypeError:
        raise ValueError(f"number of games must be an int >= 0, not {n_games!r}") from None
    if n < 0:
        raise ValueError(f"number of games must be >= 0, not {n}")
    return [
        ScheduleEntry(game=g, white="A" if g % 4 in (0, 1) else "B", draw=g % 2 == 1,
                      variant=(g + 1) // 2)
        for g in range(1, n + 1)
    ]


def _parse_dice(dice) -> tuple[int, int, int]:
    if isinstance(dice, str):
        values = []
        for part in dice.split("-"):
            try:
                values.append(int(part.strip()))
            except ValueError:
                raise ValueError(f"bad die {part!r} in {dice!r}: expected a number 1..6") from None
    else:
        try:
            items = list(dice)
        except TypeError:
            raise ValueError(f"dice must be three ints 1..6 or a string like '3-1-6', "
                             f"not {dice!r}") from None
        values = []
        for v in items:
            if isinstance(v, bool):
                raise ValueError(f"bad die {v!r} in {dice!r}: expected an int 1..6")
            try:
                values.append(operator.index(v))
            except TypeError:
                raise ValueError(f"bad die {v!r} in {dice!r}: expected an int 1..6") from None
    if len(values) != 3:
        raise ValueError(f"expected 3 dice, got {len(values)}: {dice!r}")
    for v in values:
        if not 1 <= v <= 6:
            raise ValueError(f"bad die {v!r} in {dice!r}: a die shows 1..6")
    a, b, c = sorted(values)
    return (a, b, c)


def _display(name: str) -> str:
    return name.replace("-", " ").title()


def _swap(old: str, new: str) -> str:
    return f"{_display(old)} stays" if old == new else f"{_display(old)} -> {_display(new)}"


def _replace(rank: tuple[str, ...], old: str, new: str) -> tuple[str, ...]:
    return tuple(new if p == old else p for p in rank)


def _build(dice: tuple[int, int, int]) -> RandomVariant:
    a, b, c = dice
    throw = f"{a}-{b}-{c}"
    if a == c:
        base, rank = 1, _BASE_RANKS[1]
        queen = _TRIPLE_QUEEN[a]
        rank = _replace(rank, "queen", queen)
        what = "variant 1 as shown" if queen == "queen" else _swap("queen", queen)
        description = f"triple {throw}: {what}"
    elif a == b or b == c:
        base = 4
        pair = b
        odd = c if a == b else a
        princess, bishop, man = _PAIR_PIECES[pair]
        queen = _PAIR_QUEEN[pair if odd == 6 else odd]
        rank = _BASE_RANKS[4]
        for old, new in (("princess", princess), ("bishop", bishop), ("man", man),
                         ("queen", queen)):
            rank = _replace(rank, old, new)
        pieces = ", ".join(_display(p) for p in (princess, bishop, man))
        odd_text = f"6 (as {pair})" if odd == 6 else str(odd)
        description = f"pair {pair}-{pair}: {pieces}; {odd_text}: {_swap('queen', queen)}"
    elif b == a + 1 and c == b + 1:
        base, rank = 2, _BASE_RANKS[2]
        swaps = _CONSECUTIVE[a]
        for old, new in swaps:
            rank = _replace(rank, old, new)
        what = ", ".join(_swap(o, n) for o, n in swaps) or "variant 2 as shown"
        description = f"consecutive {throw}: {what}"
    else:
        base, rank = 3, _BASE_RANKS[3]
        if (a, c) == (1, 6):
            swaps = (("queen", _ONE_SIX_QUEEN[b]),)
            group = "lowest 1 highest 6"
        elif c - a == 4:
            swaps = (("tiger", _FOUR_TIGER[a]), ("cannon", _FOUR_CANNON[b]))
            group = "differ by four"
        else:  # c - a == 3: a difference of 2 is always consecutive
            swaps = (("cannon", _THREE_CANNON[a]), ("man", _THREE_MAN[b]))
            group = "differ by three"
        for old, new in swaps:
            rank = _replace(rank, old, new)
        description = f"{group} ({throw}): " + ", ".join(_swap(o, n) for o, n in swaps)
    physical = tuple(_stand_in(p, base) for p in rank)
    return RandomVariant(dice=dice, base=base, description=description, back_rank=rank,
                         physical=physical)


def _stand_in(name: str, base: int) -> str:
    if name == "wazir":
        return _WAZIR_STAND_IN[base]
    return _STAND_IN.get(name, name)
