"""Fairy-Stockfish ``variants.ini`` sections for the variants it can express.

Fairy-Stockfish's Betza parser knows no (1,4) leaper and no multi-leg moves, and silently
ignores what it does not understand, so a variant with a Giraffe, Griffin or Aanca (pieces
whose ``fsf_betza`` is None) is reported as inexpressible rather than exported wrongly.

Sections are named ``fairyboard-<variant>`` (:func:`fsf_name`): Fairy-Stockfish has built-in
variants of its own (``courier`` among them), and a section that reuses a built-in name fails
to load and leaves the built-in rules in place without a word.
"""

from __future__ import annotations

from .errors import VariantError
from .geometry import FILE_LETTERS
from .position import WHITE, Position

# Pieces that map to Fairy-Stockfish built-ins with the same moves and letters.
_BUILTIN = {"king": "king", "pawn": "pawn", "rook": "rook", "knight": "knight",
            "bishop": "bishop", "queen": "queen"}
_CHESS_PIECES = ("pawn", "knight", "bishop", "rook", "queen", "king")


PREFIX = "fairyboard-"


def fsf_name(variant_name: str) -> str:
    """The name a variant's section has in Fairy-Stockfish: ``fairyboard-courier``."""
    return PREFIX + variant_name


def expressible(variant) -> bool:
    """True when Fairy-Stockfish can play exactly this variant's moves."""
    if variant.family != "chess":
        return False
    if any(p.fsf_betza is None for p in variant.pieces):
        return False
    if sum(1 for p in variant.pieces if p.royal) != 1:
        return False
    return variant.geometry.files <= 12 and variant.geometry.ranks <= 10 and not variant.geometry.holes


def variants_ini(variant, section_name: str | None = None) -> str:
    """The ``[fairyboard-NAME:chess]`` section that makes Fairy-Stockfish play this variant
    (``section_name`` overrides the name)."""
    if not expressible(variant):
        bad = [p.name for p in variant.pieces if p.fsf_betza is None]
        why = f"pieces Fairy-Stockfish cannot express: {', '.join(bad)}" if bad else \
            "its board, family or royal pieces are beyond Fairy-Stockfish"
        raise VariantError(f"variant {variant.name!r} cannot be exported to Fairy-Stockfish: {why}")
    g = variant.geometry
    name = section_name or fsf_name(variant.name)
    lines = [f"[{name}:chess]", f"maxRank = {g.ranks}", f"maxFile = {FILE_LETTERS[g.files - 1]}"]
    present = {p.name for p in variant.pieces}
    for builtin in _CHESS_PIECES:
        if builtin not in present:
            lines.append(f"{builtin} = -")
    custom = 0
    for p in variant.pieces:
        if p.name in _BUILTIN and not p.fsf_betza and p.betza == _default_betza(p.name):
            lines.append(f"{_BUILTIN[p.name]} = {p.letter}")
        else:
            custom += 1
            lines.append(f"customPiece{custom} = {p.letter}:{p.fsf_betza or p.betza}")
    lines.append(f"startFen = {variant.start_fen}")
    promo = "".join(variant.pieces[i].letter for i in variant.promotion)
    lines.append(f"promotionPieceTypes = {promo}")
    lines.append(f"doubleStep = {'true' if variant.double_step else 'false'}")
    lines.append(f"enPassantRegion = {'-' if not variant.en_passant else 'all'}" if not variant.en_passant else
                 "")
    king = next(p for p in variant.pieces if p.royal)
    if variant.castling and king.castles:
        kfile = g.file_of(Position.from_fen(variant).royal_squares(WHITE)[0])
        lines.append("castling = true")
        lines.append(f"castlingKingsideFile = {FILE_LETTERS[kfile + 2]}")
        lines.append(f"castlingQueensideFile = {FILE_LETTERS[kfile - 2]}")
    else:
        lines.append("castling = false")
    if variant.stalemate_white_wins == variant.stalemate_black_wins == "1/2-1/2":
        lines.append("stalemateValue = draw")
    if variant.fifty_moves != 50:
        lines.append(f"nMoveRule = {variant.fifty_moves}")
    return "\n".join(x for x in lines if x) + "\n"


def _default_betza(name: str) -> str:
    return {"king": "K", "pawn": "fmWfcFifmnD", "rook": "R", "knight": "N", "bishop": "B", "queen": "Q"}[name]
