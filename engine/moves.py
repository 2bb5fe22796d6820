"""Moves: the int encoding the generator uses, and the :class:`Move` value the API returns.

Int layout (bits)::

    0-7    from square (a drop: the dropped piece's type index)
    8-15   to square
    16-23  extra: promotion type index + 1, or the castling rook's square + 1
    24-    flag: NORMAL, EN_PASSANT, CASTLE, DROP

Coordinate notation follows Fairy-Stockfish / UCI: ``e2e4``, ``a7a8q`` (promotion letter in
lower case), ``N@e4`` (drops: upper-case letter for both colours), castling as the king's
move (``g1i1`` on 12 files).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import IllegalMoveError

NORMAL, EN_PASSANT, CASTLE, DROP = 0, 1, 2, 3
NULL_MOVE = 0xFFFFFFFF


def encode(frm: int, to: int, extra: int = 0, flag: int = NORMAL) -> int:
    return frm | to << 8 | extra << 16 | flag << 24


def decode(m: int) -> tuple[int, int, int, int]:
    """(from, to, extra, flag) of an int move (see the layout above)."""
    return m & 0xFF, (m >> 8) & 0xFF, (m >> 16) & 0xFF, m >> 24


@dataclass(frozen=True, slots=True)
class Move:
    """A move as a value: squares are ints on the variant's geometry."""

    from_sq: int | None       # None for a drop
    to_sq: int
    promotion: int | None = None   # piece type index
    drop: int | None = None        # piece type index
    castle_rook: int | None = None  # the rook's square for castling
    en_passant: bool = False

    @classmethod
    def from_int(cls, m: int) -> Move:
        frm, to, extra, flag = decode(m)
        if flag == DROP:
            return cls(None, to, drop=frm)
        if flag == CASTLE:
            return cls(frm, to, castle_rook=extra - 1)
        return cls(frm, to, promotion=(extra - 1) if extra else None, en_passant=flag == EN_PASSANT)

    def to_int(self) -> int:
        if self.drop is not None:
            return encode(self.drop, self.to_sq, 0, DROP)
        assert self.from_sq is not None, f"{self!r}: only a drop has no from square"
        if self.castle_rook is not None:
            return encode(self.from_sq, self.to_sq, self.castle_rook + 1, CASTLE)
        if self.en_passant:
            return encode(self.from_sq, self.to_sq, 0, EN_PASSANT)
        return encode(self.from_sq, self.to_sq, 0 if self.promotion is None else self.promotion + 1)


def to_uci(m: int, variant) -> str:
    """Coordinate notation of an int move."""
    g = variant.geometry
    frm, to, extra, flag = decode(m)
    if flag == DROP:
        return f"{variant.pieces[frm].letter.upper()}@{g.name(to)}"
    text = g.name(frm) + g.name(to)
    if flag == NORMAL and extra:
        text += variant.pieces[extra - 1].letter
    return text


def parse_uci(text: str, legal: list[int], variant) -> int:
    """The legal int move written ``text`` in coordinate notation; IllegalMoveError if none."""
    t = text.strip()
    for m in legal:
        if to_uci(m, variant) == t:
            return m
    # Accept an upper-case promotion letter and lower-case drop letters too.
    low = t.lower()
    for m in legal:
        if to_uci(m, variant).lower() == low:
            return m
    raise IllegalMoveError(f"{text!r} is not a legal move here")
