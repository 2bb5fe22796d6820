"""Board geometry: any board from 1x1 to 16x16, optionally with holes.

Squares are ints: ``sq = rank * files + file`` with file 0 = ``a`` and rank 0 = ``1``, so
``a1`` is 0 and is white's left corner. A bitboard is a Python int with bit ``sq`` set for
each square in the set; Python ints make 96-bit (or 256-bit) bitboards free.

Holes are squares that do not exist: no piece stands there, sliders stop before them,
leapers jump over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import getitem

from .errors import SquareError

FILE_LETTERS = "abcdefghijklmnop"
MAX_SIZE = 16


def bits(bb: int) -> list[int]:
    """The squares of a bitboard, lowest first."""
    if bb.bit_count() > 8:
        # byte by byte from tables: several times faster than bit by bit for many squares
        n = (bb.bit_length() + 7) >> 3
        if n > len(_BYTE_SQUARES):
            _more_bytes(n)
        return list(chain.from_iterable(map(getitem, _BYTE_SQUARES, bb.to_bytes(n, "little"))))
    out = []
    while bb:
        low = bb & -bb
        out.append(low.bit_length() - 1)
        bb ^= low
    return out


_BYTE = [tuple(j for j in range(8) if byte >> j & 1) for byte in range(256)]
_BYTE_SQUARES: list[list[tuple]] = []    # [i][byte]: the squares of byte as a bitboard's i-th byte


def _more_bytes(n: int) -> None:
    while len(_BYTE_SQUARES) < n:
        off = 8 * len(_BYTE_SQUARES)
        _BYTE_SQUARES.append([tuple([off + j for j in t]) for t in _BYTE])


@dataclass(frozen=True, slots=True)
class Geometry:
    files: int
    ranks: int
    holes: frozenset[int] = frozenset()
    mask: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for what, n in (("files", self.files), ("ranks", self.ranks)):
            if not isinstance(n, int) or not 1 <= n <= MAX_SIZE:
                raise SquareError(f"board {what} must be 1..{MAX_SIZE}, not {n!r}")
        size = self.files * self.ranks
        for h in self.holes:
            if not 0 <= h < size:
                raise SquareError(f"hole {h!r} is off a {self.files}x{self.ranks} board")
        m = (1 << size) - 1
        for h in self.holes:
            m &= ~(1 << h)
        object.__setattr__(self, "mask", m)

    @classmethod
    def with_holes(cls, files: int, ranks: int, holes: list[str] | tuple[str, ...] = ()) -> Geometry:
        plain = cls(files, ranks)
        return cls(files, ranks, frozenset(plain.parse(h) for h in holes))

    @property
    def size(self) -> int:
        """Number of square indexes, holes included (the length of a mailbox board)."""
        return self.files * self.ranks

    def square(self, file: int, rank: int) -> int:
        return rank * self.files + file

    def file_of(self, sq: int) -> int:
        return sq % self.files

    def rank_of(self, sq: int) -> int:
        return sq // self.files

    def on_board(self, file: int, rank: int) -> bool:
        """True when (file, rank) is a square of this board (inside it and not a hole)."""
        return 0 <= file < self.files and 0 <= rank < self.ranks and (rank * self.files + file) not in self.holes

    def squares(self) -> list[int]:
        """Every existing square, a1 first, rank by rank."""
        return [sq for sq in range(self.size) if sq not in self.holes]

    def name(self, sq: int) -> str:
        if not 0 <= sq < self.size:
            raise SquareError(f"square index {sq!r} is off a {self.files}x{self.ranks} board")
        return f"{FILE_LETTERS[sq % self.files]}{sq // self.files + 1}"

    def parse(self, name: str) -> int:
        """``parse("l8")`` -> the square's index; SquareError names the bad text."""
        text = name.strip().lower() if isinstance(name, str) else name
        if not isinstance(text, str) or len(text) < 2 or text[0] not in FILE_LETTERS or not text[1:].isdigit():
            raise SquareError(f"{name!r} is not a square name (file letter then rank number, e.g. e4)")
        f = FILE_LETTERS.index(text[0])
        r = int(text[1:]) - 1
        if not (0 <= f < self.files and 0 <= r < self.ranks):
            raise SquareError(f"square {name!r} is off the {self.files}x{self.ranks} board "
                              f"(files a-{FILE_LETTERS[self.files - 1]}, ranks 1-{self.ranks})")
        sq = r * self.files + f
        if sq in self.holes:
            raise SquareError(f"square {name!r} is a hole on this board")
        return sq

    def squares_of(self, bb: int) -> list[int]:
        """The squares of a bitboard, lowest first."""
        return bits(bb)

    def neighbours(self, sq: int) -> int:
        """Bitboard of the squares a king's step away from ``sq`` (holes left out)."""
        f, r = self.file_of(sq), self.rank_of(sq)
        bb = 0
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if (dx or dy) and self.on_board(f + dx, r + dy):
                    bb |= 1 << self.square(f + dx, r + dy)
        return bb

    def mirror(self, sq: int) -> int:
        """The same file on the rank seen from the other side (a1 <-> a8 on 8 ranks)."""
        return (self.ranks - 1 - sq // self.files) * self.files + sq % self.files
