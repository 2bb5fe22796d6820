"""Betza notation: parse a piece's moves into components the move tables are built from.

Supported (white's point of view, forward = towards higher ranks):

* Leaper atoms: ``W`` (1,0)  ``F`` (1,1)  ``D`` (2,0)  ``N`` (2,1)  ``A`` (2,2)  ``H`` (3,0)
  ``C`` or ``L`` (3,1, camel)  ``Z`` (3,2)  ``G`` (3,3), and any leaper written ``(x,y)``,
  e.g. ``(1,4)`` for the giraffe.
* Riders: a doubled atom (``WW``, ``FF``, ``NN``, ``(1,4)(1,4)``) and the shorthands ``R`` (WW),
  ``B`` (FF), ``Q`` (RB), ``K`` (WF, a leaper). A number after an atom limits the range:
  ``R4``, ``W3``.
* Modifiers before an atom: directions ``f b l r v s`` (with two-letter combinations for
  diagonal atoms, ``fl fr bl br``, and for oblique ones, ``ff fs bb bs ll lv rr rv fl fr bl br``,
  the usual knight-direction conventions: ``v`` narrow (long leg vertical), ``s`` wide);
  ``m`` move only, ``c`` capture only; ``n`` lame (every square on the way must be empty:
  ``nN`` is the Xiangqi horse, ``nD`` the pawn's double step); ``p`` hopper (``pR`` must jump
  over exactly one piece: ``mRcpR`` is the Xiangqi cannon); ``i`` only from the piece's
  initial rank.
* Bent riders: ``X>Y`` is one step of leaper X followed by a slide along rider Y in the
  directions that continue outward (45 degrees from the first step). ``F>R`` is the Griffin,
  ``W>B`` the Aanca. ``{n,}`` after the slide requires at least n slide steps: Tomorrow's
  Chess limits its Griffin to ``F>R{2,}`` (no single diagonal step, no knight move) and its
  Aanca to ``W>B{2,}``.

A bad string raises :class:`BetzaError` pointing at the offending character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import BetzaError

LEAPERS: dict[str, tuple[int, int]] = {
    "W": (1, 0), "F": (1, 1), "D": (2, 0), "N": (2, 1), "A": (2, 2),
    "H": (3, 0), "C": (3, 1), "L": (3, 1), "Z": (3, 2), "G": (3, 3),
}
# Shorthands: letter -> list of (atom, rider)
SHORTHANDS: dict[str, tuple[tuple[str, bool], ...]] = {
    "R": (("W", True),), "B": (("F", True),), "Q": (("W", True), ("F", True)),
    "K": (("W", False), ("F", False)),
}
DIRECTION_LETTERS = "fblrvs"
MODIFIER_LETTERS = DIRECTION_LETTERS + "mcnpi"


@dataclass(frozen=True, slots=True)
class Component:
    """One way a piece moves: a set of vectors with one kind of motion and one mode."""

    kind: str                               # "leap" | "ride" | "hop" | "bent"
    atom: str                               # base atom: "W", "F", "N", ... or "(1,4)"
    vectors: tuple[tuple[int, int], ...]    # (dx, dy) for white after direction filtering
    move: bool = True                       # may go to an empty square
    capture: bool = True                    # may capture
    limit: int = 0                          # ride/hop: max steps (0 = unlimited); leap: 1
    lame: bool = False                      # leap: every square on the way must be empty
    initial: bool = False                   # only from the piece's initial rank
    directions: str = ""                    # the direction modifiers as written
    then_atom: str = ""                     # bent: the slide's atom ("W" or "F")
    then_min: int = 0                       # bent: minimum number of slide steps

    @property
    def rider(self) -> bool:
        return self.kind in ("ride", "hop")


def _symmetric(x: int, y: int) -> set[tuple[int, int]]:
    out = set()
    for a, b in ((x, y), (y, x)):
        for sa in (1, -1):
            for sb in (1, -1):
                out.add((a * sa, b * sb))
    return out


def atom_vectors(atom: str) -> tuple[tuple[int, int], ...]:
    if atom.startswith("("):
        x, y = (int(v) for v in atom[1:-1].split(","))
    else:
        x, y = LEAPERS[atom]
    return tuple(sorted(_symmetric(x, y)))


def _family(x: int, y: int) -> str:
    if x == 0 or y == 0:
        return "orth"
    if abs(x) == abs(y):
        return "diag"
    return "oblique"


_PAIRS = {
    "diag": {"fl", "fr", "bl", "br", "lf", "rf", "lb", "rb"},
    "oblique": {"ff", "fs", "bb", "bs", "ll", "lv", "rr", "rv",
                "fl", "fr", "bl", "br", "lf", "rf", "lb", "rb"},
    "orth": set(),
}


def _single(letter: str, dx: int, dy: int, fam: str) -> bool:
    if letter == "f":
        return dy > 0
    if letter == "b":
        return dy < 0
    if letter == "l":
        return dx < 0
    if letter == "r":
        return dx > 0
    if fam == "orth":
        return dx == 0 if letter == "v" else dy == 0
    if fam == "diag":
        return True  # v (= f+b) and s (= l+r) cover every diagonal direction
    if letter == "v":
        return abs(dy) > abs(dx)
    return abs(dx) > abs(dy)


def _pair(tok: str, dx: int, dy: int, fam: str) -> bool:
    a, b = tok[0], tok[1]
    if a == b:  # ff bb ll rr on oblique atoms: the narrow forward pair, the wide left pair...
        return _single(a, dx, dy, fam) and _single("v" if a in "fb" else "s", dx, dy, fam)
    if b in "sv":
        return _single(a, dx, dy, fam) and _single(b, dx, dy, fam)
    return _single(a, dx, dy, fam) and _single(b, dx, dy, fam)


def filter_vectors(vectors, directions: str) -> tuple[tuple[int, int], ...]:
    """The vectors a direction-modifier string keeps (all of them for an empty string)."""
    if not directions:
        return tuple(vectors)
    kept = []
    for dx, dy in vectors:
        fam = _family(dx, dy)
        pairs = _PAIRS[fam]
        i, ok = 0, False
        while i < len(directions):
            tok = directions[i:i + 2]
            if len(tok) == 2 and tok in pairs:
                ok = ok or _pair(tok, dx, dy, fam)
                i += 2
            else:
                ok = ok or _single(directions[i], dx, dy, fam)
                i += 1
        if ok:
            kept.append((dx, dy))
    return tuple(kept)


_LEAPER_RE = re.compile(r"\((\d{1,2}),(\d{1,2})\)")


@dataclass(frozen=True, slots=True)
class BetzaPiece:
    """A parsed piece: its notation and its components."""

    text: str
    components: tuple[Component, ...]


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def error(self, reason: str, pos: int | None = None) -> BetzaError:
        return BetzaError(self.text, self.i if pos is None else pos, reason)

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def atom(self) -> tuple[str, int]:
        """Read one atom letter or (x,y); return (atom, start position)."""
        start = self.i
        ch = self.peek()
        if ch == "(":
            m = _LEAPER_RE.match(self.text, self.i)
            if not m:
                raise self.error("a leaper is written (x,y) with two whole numbers, e.g. (1,4)")
            x, y = int(m.group(1)), int(m.group(2))
            if x == 0 and y == 0:
                raise self.error("(0,0) is not a move")
            if max(x, y) > 15:
                raise self.error(f"leap ({x},{y}) is longer than any board")
            self.i = m.end()
            return f"({min(x, y)},{max(x, y)})", start
        if ch in LEAPERS or ch in SHORTHANDS:
            self.i += 1
            return ch, start
        if ch == "":
            raise self.error("an atom (an upper-case letter such as W, F, N, R) is missing at the end")
        if ch.isupper():
            raise self.error(f"unknown atom {ch!r}")
        raise self.error(f"unexpected character {ch!r}")

    def number(self) -> int:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        if start == self.i:
            return 0
        n = int(self.text[start:self.i])
        if n == 0:
            raise self.error("a range of 0 allows no move", start)
        return n

    def parse(self) -> BetzaPiece:
        if not isinstance(self.text, str) or not self.text.strip():
            raise BetzaError(str(self.text), 0, "empty Betza notation")
        if self.text != self.text.strip() or " " in self.text:
            pos = self.text.index(" ") if " " in self.text else 0
            raise BetzaError(self.text, pos, "spaces are not allowed in Betza notation")
        comps: list[Component] = []
        while self.i < len(self.text):
            comps.extend(self.term())
        return BetzaPiece(self.text, tuple(comps))

    def term(self) -> list[Component]:
        mods_start = self.i
        while self.peek() and self.peek() in MODIFIER_LETTERS:
            self.i += 1
        mods = self.text[mods_start:self.i]
        ch = self.peek()
        if ch.islower() and ch:
            raise self.error(f"unknown modifier {ch!r} (known: {MODIFIER_LETTERS})")
        atom, atom_pos = self.atom()
        doubled = False
        if atom not in SHORTHANDS and self.text.startswith(atom, self.i):
            self.i += len(atom)
            doubled = True
        limit = self.number()
        directions = "".join(c for c in mods if c in DIRECTION_LETTERS)
        m, c = "m" in mods, "c" in mods
        move, capture = (m or not c), (c or not m)
        lame, hop, initial = "n" in mods, "p" in mods, "i" in mods

        if self.peek() == ">":
            return [self.bent(atom, atom_pos, doubled, limit, directions, move, capture, lame, hop, initial)]

        if atom in SHORTHANDS:
            parts = SHORTHANDS[atom]
            if doubled:
                raise self.error(f"{atom} cannot be doubled", atom_pos)
        else:
            parts = ((atom, doubled),)
        out = []
        for base, rider in parts:
            rider = rider or limit > 0
            vecs = filter_vectors(atom_vectors(base), directions)
            if not vecs:
                raise self.error(f"directions {directions!r} leave {base} no move", mods_start)
            if hop and not rider:
                raise self.error("p (hopper) needs a rider such as R or WW", mods_start + mods.index("p"))
            if lame and rider:
                raise self.error("n (lame) is supported on leapers only", mods_start + mods.index("n"))
            kind = "hop" if hop else ("ride" if rider else "leap")
            out.append(Component(kind, base, vecs, move, capture, limit if rider else 1,
                                 lame, initial, directions))
        return out

    def bent(self, atom, atom_pos, doubled, limit, directions, move, capture, lame, hop, initial) -> Component:
        if atom not in ("W", "F") or doubled or limit:
            raise self.error("a bent rider starts with one W or F step", atom_pos)
        if lame or hop or initial:
            raise self.error("n, p and i are not supported on bent riders", atom_pos)
        self.i += 1  # '>'
        then_pos = self.i
        want = {"W": ("B", "FF"), "F": ("R", "WW")}[atom]
        for spelling in want:
            if self.text.startswith(spelling, self.i):
                self.i += len(spelling)
                break
        else:
            raise self.error(f"after a {atom} step the slide must be {want[0]} "
                             "(outward, 45 degrees from the step)", then_pos)
        then_min = 0
        if self.peek() == "{":
            m = re.compile(r"\{(\d+),\}").match(self.text, self.i)
            if not m:
                raise self.error("a minimum slide is written {n,}")
            then_min = int(m.group(1))
            self.i = m.end()
        vecs = filter_vectors(atom_vectors(atom), directions)
        if not vecs:
            raise self.error(f"directions {directions!r} leave {atom} no move", atom_pos)
        return Component("bent", atom, vecs, move, capture, 0, False, False, directions,
                         "W" if atom == "F" else "F", then_min)


_PARSED: dict[str, BetzaPiece] = {}


def parse_betza(text: str) -> BetzaPiece:
    """Parse Betza notation; BetzaError points at the offending character. (Parsed values are
    immutable and kept: every variant names the same few pieces.)"""
    piece = _PARSED.get(text)
    if piece is None:
        piece = _Parser(text).parse()
        if len(_PARSED) < 4096:
            _PARSED[text] = piece
    return piece


def bent_continuations(first: tuple[int, int], then_atom: str) -> tuple[tuple[int, int], ...]:
    """The outward slide directions after a first step: 45 degrees from it, away from the origin."""
    fx, fy = first
    out = []
    for vx, vy in atom_vectors(then_atom):
        if vx * fx + vy * fy > 0:
            out.append((vx, vy))
    return tuple(out)
