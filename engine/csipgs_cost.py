"""csipgs chess: what a designed piece costs, in zorkmids.

The formula is the overview's (csipgs-chess.txt): each atom of the design has a base cost,
multiplied by the modifiers that restrict it; the modified atoms are summed; the sum is then
multiplied by the whole-piece modifiers; the payment is rounded *up* to the currency unit.

Atoms and their base costs::

    orthogonal  W = D = H = 1.5    R (= WW, the rook) = 5
    diagonal    F = A = G = 1.5    B (= FF, the bishop) = 3.3
    knightwise  N = 3              L (= C, the camel) = 3.3      NN (the nightrider) = 5.5

Modifiers, per family of atom::

    orthogonal  f = s = 0.5   b = 0.2   m = c = 0.6
    diagonal    f = 0.7       b = 0.4   m = c = 0.6
    knightwise  f = 0.7       b = 0.4   m = c = 0.6   wide = narrow = 0.5

Whole-piece modifiers: colourbound 0.9 (detected from the moves), royal 4; the unofficial
relay 2 and doublemove 6 only where the variant enables them.

How the figures combine (the readings this module implements; docs/csipgs.md says the same):

* A design is read as *moves*, atom by atom: ``K`` is ``WF``, ``Q`` is ``RB``, ``mWcW`` is
  ``W``, and a leap a rider of the same atom already makes (``WR``) is not charged twice.
* Directions: the set of directions an atom keeps gets a multiplier from the table. A set
  the table names directly costs its figure (``fF`` 0.7, ``vN`` 0.5). Restrictions of two
  kinds on one knightwise atom multiply (``ffN``, forward and narrow: 0.7 x 0.5 = 0.35), as
  do halves of a named set (one forward diagonal, ``frF``: 0.7 / 2 = 0.35; one sideways step,
  ``lW``: 0.5 / 2 = 0.25). A set made of several such pieces costs their sum, the cheapest
  way of putting it together (``fsW`` = f + s = 1.0); never more than 1, the whole atom.
* Modes: ``m`` and ``c`` multiply (``fcF`` = 1.5 x 0.7 x 0.6 = 0.63). Directions with both
  moves and captures, with moves only and with captures only are charged separately and
  summed, again at most the whole atom.
* Whole-piece modifiers multiply the sum. Designs name them before the Betza notation,
  joined by ``-`` as the overview writes ``royal-WF``: ``royal-``, ``relay-``, ``doublemove-``.
* Inventions (Configurable csipgs chess) add atoms (written in Betza: ``nN`` for the Chinese
  Knight) and atom modifiers (``runner``: a doubled atom rides, ``DD``; ``lame``: ``n``;
  ``hopper``: ``p``). An invented atom takes the modifiers of its family (the Chinese Knight
  takes the knight's). An atom the table prices itself (``R``, ``B``, ``NN``) keeps its price
  even when a modifier could also describe it.

Everything is exact (:class:`fractions.Fraction`); nothing here uses floats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Mapping

from .betza import LEAPERS, MODIFIER_LETTERS, SHORTHANDS, Component, parse_betza
from .errors import BetzaError, EngineError

F = Fraction


class DesignError(EngineError, ValueError):
    """A csipgs design cannot be priced (unknown atom or modifier, bad whole-piece prefix)."""


# -- the price table of the overview ----------------------------------------------------------
ATOMS: Mapping[str, Fraction] = MappingProxyType({
    "W": F(3, 2), "D": F(3, 2), "H": F(3, 2), "R": F(5),
    "F": F(3, 2), "A": F(3, 2), "G": F(3, 2), "B": F(33, 10),
    "N": F(3), "L": F(33, 10), "NN": F(11, 2),
})
MOVE_ONLY = CAPTURE_ONLY = F(3, 5)
COLOURBOUND = F(9, 10)
WHOLE_PIECE: Mapping[str, Fraction] = MappingProxyType({
    "royal": F(4), "relay": F(2), "doublemove": F(6),
})
OFFICIAL = frozenset({"royal"})
UNOFFICIAL = frozenset({"relay", "doublemove"})
PREFIX_ORDER = ("royal", "relay", "doublemove")
ATOM_MODIFIERS = ("runner", "lame", "hopper")
STEPS: Mapping[str, Fraction] = MappingProxyType({"whole": F(1), "half": F(1, 2), "tenth": F(1, 10)})

# Letters of the leapers by (short, long) leg, so "(1,2)" prices as N.
_LETTER_OF = {tuple(sorted(v)): k for k, v in LEAPERS.items() if k != "C"}
_RIDER_KEY = {"W": "R", "F": "B", "N": "NN"}
_FAMILY_NAMES = {"orth": "orthogonal", "diag": "diagonal", "oblique": "knightwise"}


# -- direction multipliers ----------------------------------------------------------------------
def _dir_class(dx: int, dy: int) -> str:
    """The direction class of a vector (white's view): f/b/l/r for orthogonal steps, fl/fr/bl/br
    for diagonal ones, and forward/backward + narrow/wide + left/right for knightwise ones."""
    sx = "l" if dx < 0 else "r"
    sy = "f" if dy > 0 else "b"
    if dx == 0:
        return sy
    if dy == 0:
        return sx
    if abs(dx) == abs(dy):
        return sy + sx
    return sy + ("n" if abs(dy) > abs(dx) else "w") + sx


def _family(dx: int, dy: int) -> str:
    if dx == 0 or dy == 0:
        return "orth"
    if abs(dx) == abs(dy):
        return "diag"
    return "oblique"


def _groups() -> dict[str, list[tuple[frozenset[str], Fraction, str]]]:
    orth = [
        (frozenset("f"), F(1, 2), "f"), (frozenset("b"), F(1, 5), "b"),
        (frozenset("lr"), F(1, 2), "s"), (frozenset("l"), F(1, 4), "l"), (frozenset("r"), F(1, 4), "r"),
    ]
    diag = [
        (frozenset({"fl", "fr"}), F(7, 10), "f"), (frozenset({"bl", "br"}), F(2, 5), "b"),
        (frozenset({"fl"}), F(7, 20), "fl"), (frozenset({"fr"}), F(7, 20), "fr"),
        (frozenset({"bl"}), F(1, 5), "bl"), (frozenset({"br"}), F(1, 5), "br"),
    ]
    vert = {"f": F(7, 10), "b": F(2, 5)}
    shape = {"n": ("narrow", F(1, 2)), "w": ("wide", F(1, 2))}
    oblique = []
    for v, vm in vert.items():
        oblique.append((frozenset(v + s + x for s in "nw" for x in "lr"), vm, v))
    for s, (sname, sm) in shape.items():
        oblique.append((frozenset(v + s + x for v in "fb" for x in "lr"), sm, sname))
    for v, vm in vert.items():
        for s, (sname, sm) in shape.items():
            oblique.append((frozenset(v + s + x for x in "lr"), vm * sm, f"{v} {sname}"))
            for x in "lr":
                oblique.append((frozenset({v + s + x}), vm * sm / 2, f"{v} {sname} {'left' if x == 'l' else 'right'}"))
    return {"orth": orth, "diag": diag, "oblique": oblique}


_GROUPS = _groups()
_ALL = {"orth": frozenset("fblr"), "diag": frozenset({"fl", "fr", "bl", "br"}),
        "oblique": frozenset(v + s + x for v in "fb" for s in "nw" for x in "lr")}


def direction_multiplier(family: str, classes: frozenset[str]) -> tuple[Fraction, str]:
    """(multiplier, label) of a set of direction classes of one atom family: the whole atom
    is 1; otherwise the cheapest sum of the table's named sets that makes it up, at most 1."""
    if not classes:
        return F(0), ""
    if classes == _ALL[family]:
        return F(1), ""
    best = _cover(family, classes)
    value, labels = best
    if value >= 1:
        return F(1), "+".join(labels)
    return value, "+".join(labels)


_COVER_CACHE: dict = {}


def _cover(family: str, classes: frozenset[str]) -> tuple[Fraction, tuple[str, ...]]:
    key = (family, classes)
    if key in _COVER_CACHE:
        return _COVER_CACHE[key]
    if not classes:
        return F(0), ()
    first = min(classes)
    best: tuple[Fraction, tuple[str, ...]] | None = None
    for members, value, label in _GROUPS[family]:
        if first in members and members <= classes:
            rest_value, rest_labels = _cover(family, classes - members)
            total = value + rest_value
            if best is None or total < best[0]:
                best = (total, (label,) + rest_labels)
    assert best is not None  # every single class is a group
    _COVER_CACHE[key] = best
    return best


# -- price lists ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PriceList:
    """What the atoms and modifiers cost in one game (the table plus agreed inventions),
    which unofficial whole-piece modifiers are allowed, and the currency unit."""

    atoms: Mapping[str, Fraction] = field(default_factory=lambda: ATOMS)
    modifiers: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    unofficial: frozenset[str] = frozenset()
    step: Fraction = F(1)
    invented_atoms: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # key -> family

    @property
    def key(self) -> tuple:
        """A hashable summary (for caching prices)."""
        return (tuple(sorted(self.atoms.items())), tuple(sorted(self.modifiers.items())),
                tuple(sorted(self.unofficial)), self.step, tuple(sorted(self.invented_atoms.items())))

    def with_atom(self, key: str, price: Fraction, family: str) -> PriceList:
        atoms = dict(self.atoms)
        atoms[key] = price
        fams = dict(self.invented_atoms)
        fams[key] = family
        return PriceList(MappingProxyType(atoms), self.modifiers, self.unofficial, self.step,
                         MappingProxyType(fams))

    def with_modifier(self, name: str, factor: Fraction) -> PriceList:
        mods = dict(self.modifiers)
        mods[name] = factor
        return PriceList(self.atoms, MappingProxyType(mods), self.unofficial, self.step, self.invented_atoms)

    def with_step(self, step: Fraction) -> PriceList:
        return PriceList(self.atoms, self.modifiers, self.unofficial, step, self.invented_atoms)

    def with_unofficial(self, names) -> PriceList:
        return PriceList(self.atoms, self.modifiers, frozenset(names), self.step, self.invented_atoms)

    def round_up(self, value: Fraction) -> Fraction:
        return round_up(value, self.step)


def round_up(value: Fraction, step: Fraction) -> Fraction:
    """``value`` rounded up to a whole number of ``step`` (2.32 -> 2.4 in tenths)."""
    return -(-F(value) // step) * step


def decimal(value: Fraction) -> str:
    """An exact decimal for a terminating fraction (``1.08``, ``12``, ``0.5``), else ``n/d``."""
    value = F(value)
    d, twos, fives = value.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{value.numerator}/{value.denominator}"
    k = max(twos, fives)
    scaled = value * 10 ** k
    digits = str(abs(scaled.numerator)).rjust(k + 1, "0")
    whole, frac = (digits[:-k], digits[-k:].rstrip("0")) if k else (digits, "")
    return f"{'-' if value < 0 else ''}{whole}{'.' + frac if frac else ''}"


def parse_amount(text, what: str = "amount") -> Fraction:
    """A non-negative number of zorkmids or a multiplier: ``2.4``, ``5``, ``1/2``."""
    if isinstance(text, bool):
        raise DesignError(f"{what} {text!r} is not a number")
    if isinstance(text, float):
        text = repr(text)
    try:
        value = F(str(text).strip())
    except (ValueError, ZeroDivisionError):
        raise DesignError(f"{what} {text!r} is not a number such as 2.4 or 5") from None
    if value < 0:
        raise DesignError(f"{what} {text!r} is negative")
    return value


# -- designs --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Design:
    """A design split into its whole-piece prefixes and its Betza notation."""

    text: str                      # canonical: prefixes in the order royal, relay, doublemove
    betza: str
    prefixes: frozenset[str]

    @property
    def royal(self) -> bool:
        return "royal" in self.prefixes

    @property
    def doublemove(self) -> bool:
        return "doublemove" in self.prefixes


_DESIGNS: dict[str, Design] = {}


def parse_design(text: str) -> Design:
    """``"royal-WF"`` -> Design(prefixes {royal}, betza "WF"); Betza errors point at the bad
    character of the whole text. (Designs are immutable: each text is parsed once.)"""
    if isinstance(text, str):
        hit = _DESIGNS.get(text)
        if hit is not None:
            return hit
    design = _parse_design(text)
    if len(_DESIGNS) < 4096:
        _DESIGNS[text] = design
    return design


def _parse_design(text: str) -> Design:
    if not isinstance(text, str) or not text.strip():
        raise DesignError(f"empty design {text!r}")
    raw = text.strip()
    parts = raw.split("-")
    prefixes: list[str] = []
    offset = 0
    for word in parts[:-1]:
        if word not in WHOLE_PIECE:
            raise DesignError(f"design {raw!r}: {word!r} is not a whole-piece modifier "
                              f"(known: {', '.join(PREFIX_ORDER)}; write them before the Betza, e.g. royal-WF)")
        if word in prefixes:
            raise DesignError(f"design {raw!r}: {word!r} is written twice")
        prefixes.append(word)
        offset += len(word) + 1
    betza = parts[-1]
    try:
        parse_betza(betza)
    except BetzaError as exc:
        raise BetzaError(raw, offset + exc.pos, exc.reason) from None
    canon = "".join(p + "-" for p in PREFIX_ORDER if p in prefixes) + betza
    return Design(canon, betza, frozenset(prefixes))


def split_terms(betza: str) -> list[tuple[str, int]]:
    """The terms of valid Betza notation with their offsets: ``fcFfmW`` -> [(fcF, 0), (fmW, 3)]."""
    out = []
    i = 0
    n = len(betza)
    while i < n:
        start = i
        while i < n and betza[i] in MODIFIER_LETTERS:
            i += 1
        if betza[i] == "(":
            j = betza.index(")", i) + 1
            atom = betza[i:j]
            i = j
        else:
            atom = betza[i]
            i += 1
        if atom not in SHORTHANDS and betza.startswith(atom, i):
            i += len(atom)
        while i < n and betza[i].isdigit():
            i += 1
        if i < n and betza[i] == ">":
            i += 1
            for spelling in ("FF", "WW", "B", "R"):
                if betza.startswith(spelling, i):
                    i += len(spelling)
                    break
            m = re.compile(r"\{\d+,\}").match(betza, i)
            if m:
                i = m.end()
        out.append((betza[start:i], start))
    return out


def _leaper_letter(atom: str) -> str:
    if atom.startswith("("):
        x, y = (int(v) for v in atom[1:-1].split(","))
        return _LETTER_OF.get((min(x, y), max(x, y)), atom)
    return "L" if atom == "C" else atom


def atom_key(comp: Component) -> str:
    """The priced atom a component uses: ``W``, ``R`` (WW), ``NN``, ``DD``, ``nN``, ``pR``, ``W3``,
    ``F>R``."""
    letter = _leaper_letter(comp.atom)
    if comp.kind == "bent":
        then = "R" if comp.then_atom == "W" else "B"
        return f"{letter}>{then}" + (f"{{{comp.then_min},}}" if comp.then_min else "")
    if comp.kind in ("ride", "hop"):
        if comp.limit:
            key = f"{letter}{comp.limit}"
        else:
            key = _RIDER_KEY.get(letter, letter * 2)
        return ("p" + key) if comp.kind == "hop" else key
    key = letter
    if comp.lame:
        key = "n" + key
    if comp.initial:
        key = "i" + key
    return key


@dataclass(frozen=True, slots=True)
class Part:
    """One priced slice of an atom: a set of directions in one mode."""

    directions: str          # label, "" for every direction
    dir_factor: Fraction
    mode: str                # "", "m" or "c"
    mode_factor: Fraction


@dataclass(frozen=True, slots=True)
class Charge:
    """What one atom of a design costs."""

    atom: str                # priced atom key: W, R, nN, DD ...
    written: str             # the design's terms that use it, as written
    family: str              # orth | diag | oblique
    base: Fraction           # the atom's cost (an invented modifier already applied)
    base_note: str           # how the base was found: "W 1.5", "D 1.5 x runner 5"
    parts: tuple[Part, ...]
    factor: Fraction         # sum of the parts, at most 1
    cost: Fraction


@dataclass(frozen=True, slots=True)
class Cost:
    """A design's cost with its breakdown; ``price`` is what a purchase pays."""

    design: str
    charges: tuple[Charge, ...]
    atoms_total: Fraction
    colourbound: bool
    whole: tuple[tuple[str, Fraction], ...]   # (name, factor) in the order applied
    exact: Fraction
    price: Fraction
    step: Fraction


def _base_price(key: str, comp: Component, prices: PriceList, term: str, design: str,
                pos: int) -> tuple[Fraction, str]:
    """(price, note) of an atom key, using invented modifiers for keys the table lacks."""
    if key in prices.atoms:
        return prices.atoms[key], f"{key} {decimal(prices.atoms[key])}"
    mods = prices.modifiers
    letter = _leaper_letter(comp.atom)
    if comp.kind == "ride" and not comp.limit and letter in prices.atoms and "runner" in mods:
        return prices.atoms[letter] * mods["runner"], \
            f"{letter} {decimal(prices.atoms[letter])} x runner {decimal(mods['runner'])}"
    if comp.kind == "leap" and comp.lame and not comp.initial and letter in prices.atoms and "lame" in mods:
        return prices.atoms[letter] * mods["lame"], \
            f"{letter} {decimal(prices.atoms[letter])} x lame {decimal(mods['lame'])}"
    if comp.kind == "hop" and "hopper" in mods:
        rider = Component("ride", comp.atom, comp.vectors, comp.move, comp.capture, comp.limit)
        rkey = atom_key(rider)
        try:
            base, note = _base_price(rkey, rider, prices, term, design, pos)
        except DesignError:
            pass                # the rider has no price either: the error below names the hopper
        else:
            return base * mods["hopper"], f"{note} x hopper {decimal(mods['hopper'])}"
    known = " ".join(prices.atoms)
    invented = ", ".join(f"{k} {decimal(v)}" for k, v in mods.items())
    raise DesignError(
        f"design {design!r}: {term!r} (at character {pos + 1}) uses the atom {key!r}, which has no price "
        f"here (priced atoms: {known}{'; invented modifiers: ' + invented if invented else ''}); "
        "in Configurable csipgs chess it can be invented")


def colourbound(betza: str, geometry=None) -> bool:
    """True when the piece can never leave its square colour: every displacement its moves can
    make on the board (files x ranks, 8x8 by default) changes file + rank by an even number."""
    files = geometry.files if geometry is not None else 8
    ranks = geometry.ranks if geometry is not None else 8
    usable = False
    for comp in parse_betza(betza).components:
        for dx, dy in comp.vectors:
            if comp.kind == "bent":
                cont = [(cx, cy) for cx, cy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))
                        if _family(cx, cy) == ("orth" if comp.then_atom == "W" else "diag")
                        and cx * dx + cy * dy > 0]
                kmin = max(1, comp.then_min)
                disps = [(dx + k * cx, dy + k * cy) for cx, cy in cont for k in (kmin, kmin + 1)]
            else:
                disps = [(dx, dy)]
                if comp.kind == "hop":
                    disps = [(2 * dx, 2 * dy), (3 * dx, 3 * dy)]
            for ex, ey in disps:
                if abs(ex) < files and abs(ey) < ranks:
                    usable = True
                    if (ex + ey) % 2:
                        return False
    return usable


def cost_of(design: str | Design, prices: PriceList | None = None, geometry=None) -> Cost:
    """The cost of a design under a price list (the overview's table by default)."""
    prices = prices or PriceList()
    d = design if isinstance(design, Design) else parse_design(design)
    for name in d.prefixes:
        if name in UNOFFICIAL and name not in prices.unofficial:
            enabled = ", ".join(sorted(prices.unofficial)) or "none"
            raise DesignError(f"design {d.text!r}: {name!r} is an unofficial whole-piece modifier this "
                              f"variant does not enable (enabled: {enabled})")
    # Collect, per atom key, the modes of every direction class.
    atoms: dict[str, dict] = {}
    order: list[str] = []
    for term, pos in split_terms(d.betza):
        for comp in parse_betza(term).components:
            key = atom_key(comp)
            base, note = _base_price(key, comp, prices, term, d.text, pos + len(d.text) - len(d.betza))
            fam = prices.invented_atoms.get(key) or _family(*comp.vectors[0])
            entry = atoms.get(key)
            if entry is None:
                entry = atoms[key] = {"base": base, "note": note, "family": fam, "modes": {},
                                      "terms": [], "comp": comp}
                order.append(key)
            if term not in entry["terms"]:
                entry["terms"].append(term)
            for dx, dy in comp.vectors:
                cls = _dir_class(dx, dy)
                m, c = entry["modes"].get(cls, (False, False))
                entry["modes"][cls] = (m or comp.move, c or comp.capture)
    # A leap a rider of the same atom already makes is not charged twice (WR = R).
    for key in order:
        entry = atoms[key]
        comp = entry["comp"]
        if comp.kind == "leap" and not comp.lame and not comp.initial:
            rider = _RIDER_KEY.get(key, key * 2)
            if rider in atoms and atoms[rider]["comp"].kind == "ride":
                rmodes = atoms[rider]["modes"]
                for cls, (m, c) in list(entry["modes"].items()):
                    rm, rc = rmodes.get(cls, (False, False))
                    m, c = m and not rm, c and not rc
                    if m or c:
                        entry["modes"][cls] = (m, c)
                    else:
                        del entry["modes"][cls]
    charges = []
    for key in order:
        entry = atoms[key]
        if not entry["modes"]:
            continue
        fam = entry["family"]
        both = frozenset(k for k, (m, c) in entry["modes"].items() if m and c)
        monly = frozenset(k for k, (m, c) in entry["modes"].items() if m and not c)
        conly = frozenset(k for k, (m, c) in entry["modes"].items() if c and not m)
        parts = []
        for classes, mode, mf in ((both, "", F(1)), (monly, "m", MOVE_ONLY), (conly, "c", CAPTURE_ONLY)):
            if classes:
                df, label = direction_multiplier(fam, classes)
                parts.append(Part(label, df, mode, mf))
        factor = min(F(1), sum((p.dir_factor * p.mode_factor for p in parts), F(0)))
        charges.append(Charge(key, "".join(entry["terms"]), fam, entry["base"], entry["note"],
                              tuple(parts), factor, entry["base"] * factor))
    total = sum((c.cost for c in charges), F(0))
    whole = []
    bound = colourbound(d.betza, geometry)
    if bound:
        whole.append(("colourbound", COLOURBOUND))
    for name in PREFIX_ORDER:
        if name in d.prefixes:
            whole.append((name, WHOLE_PIECE[name]))
    exact = total
    for _, f in whole:
        exact *= f
    return Cost(d.text, tuple(charges), total, bound, tuple(whole), exact, prices.round_up(exact), prices.step)


def breakdown(cost: Cost) -> list[str]:
    """Readable lines: one per atom, the sum, the whole-piece modifiers, the rounding."""
    lines = []
    for ch in cost.charges:
        factors = []
        for p in ch.parts:
            bits = []
            if p.directions:
                bits.append(f"{p.directions} {decimal(p.dir_factor)}")
            if p.mode:
                bits.append(f"{p.mode} {decimal(p.mode_factor)}")
            factors.append(" x ".join(bits) if bits else "1")
        how = " + ".join(factors)
        if len(factors) > 1:
            how = f"({how})"
        capped = " (capped at the whole atom)" if ch.factor == 1 and len(ch.parts) > 1 else ""
        lines.append(f"  {ch.written:<10} {_FAMILY_NAMES[ch.family]:<10} {ch.base_note} x {how}"
                     f"{capped} = {decimal(ch.cost)}")
    lines.append(f"  atoms total {decimal(cost.atoms_total)}")
    value = cost.atoms_total
    for name, f in cost.whole:
        value *= f
        lines.append(f"  x {name} {decimal(f)} = {decimal(value)}")
    if not cost.colourbound:
        lines.append("  not colourbound")
    unit = {F(1): "whole zorkmids", F(1, 2): "half zorkmids", F(1, 10): "tenths of a zorkmid"}.get(
        cost.step, f"steps of {decimal(cost.step)}")
    lines.append(f"  price rounded up to {unit}: {decimal(cost.price)}")
    return lines


@dataclass(frozen=True, slots=True)
class AtomSpec:
    """An atom proposed as an invention: its key, family and the Betza it is written with."""

    key: str
    family: str
    betza: str


def atom_spec(text: str) -> AtomSpec:
    """Check that ``text`` is one atom in Betza without direction or mode modifiers (``nN``,
    ``Z``, ``(1,4)``, ``DD``), and return its key and family."""
    try:
        piece = parse_betza(text)
    except BetzaError as exc:
        raise DesignError(f"invented atom {text!r}: {exc.reason} (at character {exc.pos + 1})") from None
    terms = split_terms(text)
    if len(terms) != 1 or len(piece.components) != 1:
        raise DesignError(f"invented atom {text!r}: write one atom, such as nN (the Chinese Knight) or Z")
    comp = piece.components[0]
    if comp.directions or not comp.move or not comp.capture:
        raise DesignError(f"invented atom {text!r}: an atom has no direction or move/capture modifiers; "
                          "those are applied when it is used in a design")
    return AtomSpec(atom_key(comp), _family(*comp.vectors[0]), text)

