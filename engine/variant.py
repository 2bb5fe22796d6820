"""Variants: piece types, the piece catalog, and validation of a variant's definition.

A variant is data: :meth:`Variant.from_dict` validates the mapping read from a YAML file
(reading the file is the caller's job; the engine does no I/O) into a frozen value. Errors
name the source, the key and the bad value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Mapping

from .betza import BetzaPiece, parse_betza
from .errors import BetzaError, EngineError, VariantError
from .geometry import FILE_LETTERS, Geometry


@dataclass(frozen=True, slots=True)
class PieceType:
    """A kind of piece: its name, FEN letter (lower case) and moves in Betza notation."""

    name: str
    letter: str
    betza: str
    royal: bool = False
    pawn: bool = False          # promotes on the last rank, double step sets en passant
    castles: bool = False       # the king that castles
    fsf_betza: str | None = ""  # Betza for Fairy-Stockfish; "" = same as betza; None = inexpressible
    physical: str = ""          # the physical piece that stands for it (when it differs)

    @property
    def parsed(self) -> BetzaPiece:
        return parse_betza(self.betza)

    @property
    def title(self) -> str:
        """The name as the rules texts write it: ``Camel Empress``."""
        return " ".join(w.capitalize() for w in self.name.split("-"))


# Every piece named in tomorrows-chess.txt, plus the orthodox set. Letters are unique in the
# catalog so that a random variant can combine any of them.
CATALOG: Mapping[str, PieceType] = MappingProxyType({p.name: p for p in (
    PieceType("king", "k", "K", royal=True, castles=True),
    PieceType("queen", "q", "Q"),
    PieceType("rook", "r", "R"),
    PieceType("bishop", "b", "B"),
    PieceType("knight", "n", "N"),
    PieceType("pawn", "p", "fmWfcFifmnD", pawn=True),
    PieceType("camel", "l", "C"),
    PieceType("giraffe", "g", "(1,4)", fsf_betza=None),
    PieceType("princess", "a", "BN"),
    PieceType("empress", "c", "RN"),
    PieceType("cannon", "o", "mRcpR"),
    PieceType("tiger", "t", "mBcN"),
    PieceType("man", "m", "K"),
    PieceType("griffin", "f", "F>R{2,}", fsf_betza=None),
    PieceType("aanca", "u", "W>B{2,}", fsf_betza=None, physical="griffin"),
    PieceType("amazon", "z", "QN", physical="queen"),
    PieceType("camel-empress", "j", "RC", physical="empress"),
    PieceType("giraffe-empress", "i", "R(1,4)", fsf_betza=None, physical="empress"),
    PieceType("giraffe-princess", "y", "B(1,4)", fsf_betza=None, physical="princess"),
    PieceType("fers", "x", "F", physical="queen"),
    PieceType("alfil", "e", "A", physical="bishop"),
    PieceType("wazir", "w", "W", physical="man"),
    PieceType("sneak", "s", "W"),
    PieceType("courier", "h", "B"),
)})

_PIECE_KEYS = {"letter", "betza", "royal", "pawn", "castles", "fsf_betza", "physical"}
_TOP_KEYS = {"name", "description", "family", "board", "pieces", "back_rank", "pawns", "start_fen",
             "castling", "double_step", "en_passant", "promotion", "stalemate", "fifty_moves",
             "repetitions", "royal_rule", "notes", "rules"}


def _plain(x: Any) -> Any:
    """Read-only mappings as plain dicts, for a repr that evaluates back."""
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def _fail(source: str, key: str, value: Any, why: str) -> VariantError:
    return VariantError(f"{source}: {key}: {value!r}: {why}")


def parse_result(text: str) -> tuple[Fraction, Fraction]:
    """``"3/5-2/5"`` -> (3/5, 2/5): white's and black's points."""
    try:
        w, b = text.split("-")
        return Fraction(w), Fraction(b)
    except (ValueError, ZeroDivisionError, AttributeError):
        raise VariantError(f"{text!r} is not a result such as 1-0 or 3/5-2/5") from None


# Promotion preference, best first: the queen, then the strongest pieces of the catalog.
PROMOTION_PREFERENCE = ("q", "z", "c", "j", "i", "a", "y", "r", "t", "o", "f", "u", "l", "g", "b", "n", "h", "m")


@dataclass(frozen=True, slots=True)
class Variant:
    """A validated variant definition."""

    name: str
    description: str
    family: str
    geometry: Geometry
    pieces: tuple[PieceType, ...]
    start_fen: str
    castling: bool = True
    double_step: bool = True
    en_passant: bool = True
    promotion: tuple[int, ...] = ()          # piece type indexes a pawn may promote to
    stalemate_white_wins: str = "1/2-1/2"    # result when White stalemates Black
    stalemate_black_wins: str = "1/2-1/2"    # result when Black stalemates White
    fifty_moves: int = 50                    # 0 = no fifty-move rule
    repetitions: int = 3                     # 0 = no repetition draw
    royal_rule: str = "all"                  # "all": no royal may be left attacked; "last": only the last
    notes: str = ""
    rules: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    # -- lookups -------------------------------------------------------------------------
    def piece_index(self, key: str) -> int:
        """Index of a piece type by catalog name or FEN letter (either case)."""
        k = key.lower()
        for i, p in enumerate(self.pieces):
            if p.name == k or p.letter == k:
                return i
        raise VariantError(f"variant {self.name!r} has no piece {key!r} "
                           f"(it has: {', '.join(p.name for p in self.pieces)})")

    def stalemate_score(self, by: int) -> tuple[Fraction, Fraction]:
        """(White's, Black's) share of the game point when ``by`` (0 White, 1 Black) stalemates
        the other side: half each, or the variant's ``stalemate`` scores (Tomorrow's Chess:
        3/5-2/5 when White stalemates Black, 3/10-7/10 when Black stalemates White)."""
        return parse_result(self.stalemate_white_wins if by == 0 else self.stalemate_black_wins)

    @property
    def letters(self) -> str:
        return "".join(p.letter for p in self.pieces)

    def __repr__(self) -> str:
        """Evaluates back to an equal Variant (given the names Variant, Geometry, PieceType)."""
        args = ", ".join(f"{f.name}={_plain(getattr(self, f.name))!r}" for f in fields(self))
        return f"Variant({args})"

    @property
    def promotion_order(self) -> tuple[str, ...]:
        """The letters a pawn may promote to, the best first (the default of a promotion
        prompt): by :data:`PROMOTION_PREFERENCE`, then any others alphabetically."""
        letters = {self.pieces[i].letter for i in self.promotion}
        return (tuple(x for x in PROMOTION_PREFERENCE if x in letters)
                + tuple(sorted(letters - set(PROMOTION_PREFERENCE))))

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<variant>") -> Variant:
        if not isinstance(data, Mapping):
            raise VariantError(f"{source}: a variant is a mapping of keys, not {type(data).__name__}")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            k = sorted(unknown)[0]
            raise _fail(source, k, data[k], f"unknown key (known: {', '.join(sorted(_TOP_KEYS))})")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(source, "name", name, "a variant needs a name")
        family = data.get("family", "chess")
        if not isinstance(family, str):
            raise _fail(source, "family", family, "must be a word such as chess, csipgs, chego")
        geometry = _geometry(data.get("board", {"files": 8, "ranks": 8}), source)
        pieces = _pieces(data, source)
        letters = [p.letter for p in pieces]
        for p in pieces:
            if letters.count(p.letter) > 1:
                raise _fail(source, "pieces", p.letter, "two piece types share this letter")
        start_fen = data.get("start_fen")
        if start_fen is None:
            start_fen = _start_fen(data, geometry, pieces, source)
        elif not isinstance(start_fen, str):
            raise _fail(source, "start_fen", start_fen, "must be a FEN string")
        promo = data.get("promotion", "array")
        if promo == "array":
            promo_idx = tuple(i for i, p in enumerate(pieces)
                              if not p.royal and not p.pawn and _in_array(p, start_fen))
        elif promo in (None, "none", False):
            promo_idx = ()
        elif isinstance(promo, list):
            promo_idx = tuple(_index_of(pieces, n, source, "promotion") for n in promo)
        else:
            raise _fail(source, "promotion", promo, "use 'array', 'none' or a list of piece names")
        stalemate = data.get("stalemate", "draw")
        if stalemate == "draw":
            sw = sb = "1/2-1/2"
        elif isinstance(stalemate, Mapping):
            sw = str(stalemate.get("white_stalemates_black", "1/2-1/2"))
            sb = str(stalemate.get("black_stalemates_white", "1/2-1/2"))
            for k, v in (("white_stalemates_black", sw), ("black_stalemates_white", sb)):
                try:
                    w, b = parse_result(v)
                except VariantError:
                    raise _fail(source, f"stalemate.{k}", v, "not a result such as 3/5-2/5") from None
                if w + b != 1:
                    raise _fail(source, f"stalemate.{k}", v, "the two scores must add up to 1")
        elif stalemate in ("win", "loss"):
            sw, sb = ("1-0", "0-1") if stalemate == "win" else ("0-1", "1-0")
        else:
            raise _fail(source, "stalemate", stalemate, "use draw, win, loss or a mapping of results")
        royal_rule = data.get("royal_rule", "all")
        if royal_rule not in ("all", "last"):
            raise _fail(source, "royal_rule", royal_rule, "use 'all' or 'last'")
        ints: dict[str, int] = {}
        for key, default in (("fifty_moves", 50), ("repetitions", 3)):
            v = data.get(key, default)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise _fail(source, key, v, "must be a whole number >= 0")
            ints[key] = v
        bools: dict[str, bool] = {}
        for key in ("castling", "double_step", "en_passant"):
            v = data.get(key, True)
            if not isinstance(v, bool):
                raise _fail(source, key, v, "must be true or false")
            bools[key] = v
        rules = data.get("rules", {}) or {}
        if not isinstance(rules, Mapping):
            raise _fail(source, "rules", rules, "must be a mapping")
        variant = cls(name=name, description=str(data.get("description", "")), family=family,
                      geometry=geometry, pieces=pieces, start_fen=start_fen,
                      promotion=promo_idx, stalemate_white_wins=sw, stalemate_black_wins=sb,
                      royal_rule=royal_rule, notes=str(data.get("notes", "")),
                      rules=MappingProxyType(dict(rules)),
                      fifty_moves=ints["fifty_moves"], repetitions=ints["repetitions"], **bools)
        # The start position must parse: catches bad FENs and pieces off the board early.
        from .position import Position
        try:
            Position.check_fen(variant, start_fen)
        except EngineError as exc:
            raise _fail(source, "start_fen", start_fen, str(exc)) from None
        return variant


def _in_array(p: PieceType, fen: str) -> bool:
    board = fen.split()[0]
    return p.letter in board.lower()


def _index_of(pieces, name, source, key) -> int:
    for i, p in enumerate(pieces):
        if p.name == name or p.letter == name:
            return i
    raise _fail(source, key, name, f"no such piece in this variant ({', '.join(p.name for p in pieces)})")


def _geometry(board: Any, source: str) -> Geometry:
    if not isinstance(board, Mapping):
        raise _fail(source, "board", board, "must be a mapping with files and ranks")
    files, ranks = board.get("files", 8), board.get("ranks", 8)
    for key, v in (("files", files), ("ranks", ranks)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 16:
            raise _fail(source, f"board.{key}", v, "must be a whole number from 1 to 16")
    holes = board.get("holes", []) or []
    if not isinstance(holes, list):
        raise _fail(source, "board.holes", holes, "must be a list of square names")
    try:
        return Geometry.with_holes(files, ranks, holes)
    except EngineError as exc:
        raise _fail(source, "board.holes", holes, str(exc)) from None


def _pieces(data: Mapping[str, Any], source: str) -> tuple[PieceType, ...]:
    spec = data.get("pieces")
    if spec is None:
        names: list[str] = []
        for n in list(data.get("back_rank") or []) + (["pawn"] if data.get("pawns", True) else []):
            if n not in names:
                names.append(n)
        spec = names
    if isinstance(spec, list):
        spec = {n: {} for n in spec}
    if not isinstance(spec, Mapping) or not spec:
        raise _fail(source, "pieces", spec, "must be a list of piece names or a mapping name -> definition")
    out = []
    for name, over in spec.items():
        over = over or {}
        if not isinstance(over, Mapping):
            raise _fail(source, f"pieces.{name}", over, "must be a mapping of piece properties")
        bad = set(over) - _PIECE_KEYS
        if bad:
            k = sorted(bad)[0]
            raise _fail(source, f"pieces.{name}.{k}", over[k], f"unknown key (known: {', '.join(sorted(_PIECE_KEYS))})")
        base = CATALOG.get(name)
        if base is None and "betza" not in over:
            raise _fail(source, f"pieces.{name}", over, "not a catalog piece; give it a betza and a letter "
                        f"(catalog: {', '.join(CATALOG)})")
        fields = {} if base is None else {k: getattr(base, k) for k in
                                           ("letter", "betza", "royal", "pawn", "castles", "fsf_betza", "physical")}
        fields.update(over)
        if "betza" in over and "fsf_betza" not in over:
            fields["fsf_betza"] = ""
        letter = fields.get("letter")
        if not isinstance(letter, str) or len(letter) != 1 or not letter.isalpha():
            raise _fail(source, f"pieces.{name}.letter", letter, "must be one letter")
        fields["letter"] = letter.lower()
        try:
            parse_betza(fields["betza"])
        except BetzaError as exc:
            raise _fail(source, f"pieces.{name}.betza", fields["betza"], str(exc)) from None
        out.append(PieceType(name=name, **fields))
    return tuple(out)


def _start_fen(data: Mapping[str, Any], geometry: Geometry, pieces, source: str) -> str:
    back = data.get("back_rank")
    if not isinstance(back, list) or len(back) != geometry.files:
        raise _fail(source, "back_rank", back, f"must list {geometry.files} piece names, file a first "
                    "(or give start_fen)")
    letters = [pieces[_index_of(pieces, n, source, "back_rank")].letter for n in back]
    f, r = geometry.files, geometry.ranks
    pawn = next((p.letter for p in pieces if p.pawn), None)
    pawns = data.get("pawns", True) and pawn is not None and r >= 4

    def row(chars):
        return "".join(chars)

    def compress(s: str) -> str:
        out, run = [], 0
        for ch in s:
            if ch == ".":
                run += 1
            else:
                if run:
                    out.append(str(run))
                    run = 0
                out.append(ch)
        if run:
            out.append(str(run))
        return "".join(out)

    rows = []
    for rank in range(r - 1, -1, -1):
        if rank == r - 1:
            rows.append(row(letters))
        elif rank == 0:
            rows.append(row(x.upper() for x in letters))
        elif pawns and pawn is not None and rank == r - 2:
            rows.append(pawn * f)
        elif pawns and pawn is not None and rank == 1:
            rows.append(pawn.upper() * f)
        else:
            rows.append("." * f)
    castling = "-"
    if data.get("castling", True):
        rights = ""
        king = next((p.letter for p in pieces if p.castles), None)
        if king and king in letters and "r" in letters:
            rights = "KQkq"
        castling = rights or "-"
    return f"{'/'.join(compress(x) for x in rows)} w {castling} - 0 1"
