"""Why an action the board shows is not legal, in words a player reads (pure).

The board driver sees a piece lifted from one square and set down on another (or lifted
only, or set down from off the board) that no legal action explains; the family's
``why_move_refused(frm, to)`` / ``why_drop_refused(to)`` say why, through the helpers here:
the game over, no piece there, the other side's turn, the piece's own side on the target,
the way blocked, a move the piece does not have (its moves in words and in Betza), a
capture-only or move-only way, castling that is not allowed now, and a royal piece left in
check. Families add their own rules first (movement points, a piece that has moved this
turn, a csipgs phase, drops next to a royal piece).

Every reason names the piece and the squares, as the player sees them on the board:
``the white tiger on b1 cannot go to b3: a tiger moves as a bishop and captures as a knight
(Betza mBcN)``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .betza import parse_betza
from .errors import BetzaError
from .moves import encode

if TYPE_CHECKING:
    from .position import Position

COLOUR = ("white", "black")

# -- Betza in words -----------------------------------------------------------------------------

_LEAP_WORDS = {
    "W": "one square orthogonally", "F": "one square diagonally",
    "D": "two squares orthogonally (leaping)", "A": "two squares diagonally (leaping)",
    "H": "three squares orthogonally (leaping)", "G": "three squares diagonally (leaping)",
    "N": "as a knight", "C": "as a camel (a 3-1 leap)", "L": "as a camel (a 3-1 leap)",
    "Z": "as a zebra (a 3-2 leap)", "(1,4)": "as a giraffe (a 1-4 leap)",
}
_RIDE_WORDS = {"W": "as a rook", "F": "as a bishop", "N": "as a nightrider (knight leaps in a line)"}
_DIRECTION_WORDS = {
    "f": "forward", "b": "backward", "l": "to the left", "r": "to the right", "v": "forward or backward",
    "s": "sideways", "fl": "forward to the left", "fr": "forward to the right", "bl": "backward to the left",
    "br": "backward to the right", "ff": "forward (the narrow way)", "fs": "forward (the wide way)",
    "bb": "backward (the narrow way)", "bs": "backward (the wide way)", "ll": "to the left (the wide way)",
    "rr": "to the right (the wide way)", "lv": "to the left (the narrow way)", "rv": "to the right (the narrow way)",
}


def _directions(text: str) -> str:
    words = []
    i = 0
    while i < len(text):
        pair = text[i:i + 2]
        if len(pair) == 2 and pair in _DIRECTION_WORDS:
            words.append(_DIRECTION_WORDS[pair])
            i += 2
        else:
            words.append(_DIRECTION_WORDS.get(text[i], text[i]))
            i += 1
    return " or ".join(words)


def _way(c) -> str:
    """One component's way of moving, without its mode: ``as a bishop``, ``one square forward``."""
    atom = c.atom
    if c.kind == "bent":
        step = "one square diagonally" if atom == "F" else "one square orthogonally"
        slide = "as a rook" if c.then_atom == "W" else "as a bishop"
        least = f" (at least {c.then_min} squares)" if c.then_min else ""
        return f"{step}, then on outward {slide}{least}"
    if c.kind in ("ride", "hop"):
        base = _RIDE_WORDS.get(atom, f"as a {atom} rider")
        if c.limit:
            base += f" up to {c.limit} square{'s' if c.limit != 1 else ''}"
        if c.directions:
            base += " " + _directions(c.directions)
        if c.kind == "hop":
            base += ", jumping over exactly one piece"
        return base
    base = _LEAP_WORDS.get(atom, f"a {atom[1:-1].replace(',', '-')} leap")
    if c.directions:
        if atom == "W":
            base = "one square " + _directions(c.directions)
        elif atom == "D":
            base = "two squares " + _directions(c.directions)
        else:
            base += " " + _directions(c.directions)
    if c.initial:
        base += " from its first rank"
    if c.lame:
        base += " (not over a piece)"
    return base


def betza_words(betza: str) -> str:
    """How a piece written ``betza`` moves, in words: ``moves as a bishop and captures as a
    knight`` (mBcN), ``moves and captures as a queen`` (Q). '' for text that is not Betza."""
    try:
        comps = parse_betza(betza).components
    except BetzaError:
        return ""
    ways: dict[str, list[str]] = {"both": [], "move": [], "capture": []}
    kinds = {(c.kind, c.atom, c.directions, c.limit, c.move, c.capture) for c in comps}

    def plain(atom: str, kind: str, mode: tuple[bool, bool]) -> bool:
        return (kind, atom, "", 0 if kind == "ride" else 1, *mode) in kinds

    done: set[int] = set()
    for mode in ((True, True), (True, False), (False, True)):
        key = "both" if all(mode) else "move" if mode[0] else "capture"
        # the orthodox shorthands read better as one piece
        if plain("W", "ride", mode) and plain("F", "ride", mode):
            ways[key].append("as a queen")
            done |= {i for i, c in enumerate(comps) if c.kind == "ride" and c.atom in "WF" and not c.directions
                     and not c.limit and (c.move, c.capture) == mode}
        if plain("W", "leap", mode) and plain("F", "leap", mode):
            ways[key].append("as a king")
            done |= {i for i, c in enumerate(comps) if c.kind == "leap" and c.atom in "WF" and not c.directions
                     and not c.initial and not c.lame and (c.move, c.capture) == mode}
        for i, c in enumerate(comps):
            if i in done or (c.move, c.capture) != mode:
                continue
            w = _way(c)
            if w not in ways[key]:
                ways[key].append(w)
    parts = []
    if ways["both"]:
        parts.append("moves and captures " + " or ".join(ways["both"]))
    if ways["move"]:
        parts.append(("moves only " if ways["both"] else "moves ") + " or ".join(ways["move"]))
    if ways["capture"]:
        parts.append(("captures only " if ways["both"] else "captures ") + " or ".join(ways["capture"]))
    return " and ".join(parts)


_OWN = {
    "rook": "along ranks and files", "bishop": "along diagonals", "queen": "along ranks, files and diagonals",
    "king": "one square in any direction", "knight": "with a leap of two squares one way and one the other",
    "camel": "with a leap of three squares one way and one the other",
    "giraffe": "with a leap of four squares one way and one the other",
    "zebra": "with a leap of three squares one way and two the other",
}


def moves_in_words(name: str, betza: str) -> str:
    """``a tiger moves as a bishop and captures as a knight (Betza mBcN)``; a piece that
    moves as its namesake is described instead (``a rook moves and captures along ranks and
    files (Betza R)``)."""
    words = betza_words(betza)
    own = _OWN.get(name)
    if own and f"as a {name}" in words:
        words = re.sub(rf"as an? {name}( \([^)]*\))?", own, words, count=1)
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name} {words} (Betza {betza})" if words else f"{article} {name} moves as Betza {betza} says"


# -- a move on the board ----------------------------------------------------------------------------

def piece_words(pos: Position, sq: int) -> tuple[str, str, str]:
    """(``white tiger``, the type's name, its Betza) of the piece on ``sq``."""
    code = pos.board[sq]
    p = pos.variant.pieces[(code >> 1) - 1]
    if p.name in (p.betza, "royal-" + p.betza):
        name = f"{p.name} piece"         # a csipgs design: named by its Betza
    else:
        name = p.name.replace("-", " ")
    return f"{COLOUR[code & 1]} {name}", name, p.betza


def _between(pos: Position, frm: int, to: int) -> list[int]:
    """The squares strictly between ``frm`` and ``to`` on a line (rank, file, diagonal); []
    when they are not on one."""
    g = pos.geometry
    f0, r0, f1, r1 = g.file_of(frm), g.rank_of(frm), g.file_of(to), g.rank_of(to)
    df, dr = f1 - f0, r1 - r0
    if not (df == 0 or dr == 0 or abs(df) == abs(dr)):
        return []
    n = max(abs(df), abs(dr))
    sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
    return [g.square(f0 + k * sf, r0 + k * sr) for k in range(1, n)]


def _alone(pos: Position, frm: int, keep: int) -> Position:
    """A copy of ``pos`` with only the pieces on ``frm`` and on the ``keep`` squares."""
    p = pos.copy()
    for sq in range(len(p.board)):
        if p.board[sq] and sq != frm and not keep >> sq & 1:
            p.remove_piece(sq)
    return p


def geometry_refusal(pos: Position, frm: int, to: int) -> str:
    """Why the piece on ``frm`` does not reach ``to`` now by its own moves ('' when it does,
    ignoring royal safety): the way is blocked, it captures (moves) only that way, or it has no
    such move at all."""
    g = pos.geometry
    who, name, betza = piece_words(pos, frm)
    quiet, caps = pos.targets_of(frm)
    if (quiet | caps) >> to & 1:
        return ""
    here = f"the {who} on {g.name(frm)} cannot go to {g.name(to)}"
    how = moves_in_words(name, betza)
    occupied = bool(pos.board[to])
    # on an empty board (the target as it is): blocked?
    q0, c0 = _alone(pos, frm, 1 << to).targets_of(frm)
    if (q0 | c0) >> to & 1:
        blockers = [s for s in _between(pos, frm, to) if pos.board[s]]
        if blockers:
            return f"{here}: the way is blocked on {', '.join(g.name(s) for s in blockers)}"
        return f"{here}: the way is blocked; {how}"
    # the other mode: a capture-only way to an empty square, a move-only way onto a piece
    color = pos.board[frm] & 1
    probe = _alone(pos, frm, 0)
    if occupied:
        qm, _ = probe.targets_of(frm)
        if qm >> to & 1:
            return f"{here}: that way it only moves to an empty square, and {g.name(to)} is taken; {how}"
    else:
        probe.put_piece(to, 0, color ^ 1)
        _, cm = probe.targets_of(frm)
        if cm >> to & 1:
            return f"{here}: that way it only captures, and {g.name(to)} is empty; {how}"
    return f"{here}: {how}"


def attackers(pos: Position, sq: int, by: int) -> list[int]:
    """The squares of the pieces of ``by`` that attack ``sq``."""
    out = []
    for s in range(len(pos.board)):
        code = pos.board[s]
        if code and code & 1 == by and pos.attacks_of(s) >> sq & 1:
            out.append(s)
    return out


def check_refusal(pos: Position, us: int, frm: int, to: int, protected: list[int] | None = None) -> str:
    """Why the pseudo-legal move ``frm``-``to`` of ``us`` is not legal for its royal piece(s)
    (``protected``: the royal squares that must not be attacked, default the position's): it
    leaves one in check, or moves one into check. '' when it does neither."""
    g = pos.geometry
    who, _, _ = piece_words(pos, frm)
    here = f"the {who} on {g.name(frm)} cannot go to {g.name(to)}"
    p = pos.copy()
    if p.turn != us:
        p.null_move()
    in_check_before = [k for k in (protected if protected is not None else p._protected(us))
                       if p.attacked(k, us ^ 1)]
    p.push(encode(frm, to))
    royals = p.royal_squares(us)
    keep = protected if protected is not None else p._protected(us)
    if protected is not None:
        keep = [to if k == frm else k for k in protected]
    exposed = [k for k in keep if k in royals and p.attacked(k, us ^ 1)]
    if not exposed:
        return ""
    k = exposed[0]
    by = attackers(p, k, us ^ 1)
    src = f" (the {piece_words(p, by[0])[0]} on {g.name(by[0])} attacks it)" if by else ""
    if k == to:
        return f"{here}: the {piece_words(p, to)[0]} would be in check there{src}"
    royal = f"the {piece_words(p, k)[0]} on {g.name(k)}"
    if in_check_before and k in in_check_before:
        return f"{here}: {royal} is in check and would stay in check{src}"
    return f"{here}: it would leave {royal} in check{src}"


def castling_refusal(pos: Position, us: int, frm: int, to: int) -> str:
    """Why the king on ``frm`` may not castle to ``to`` (two files along its rank) now; ''
    when it is no castling at all (the geometry is another matter)."""
    g = pos.geometry
    if g.rank_of(frm) != g.rank_of(to) or abs(g.file_of(to) - g.file_of(frm)) != 2:
        return ""
    code = pos.board[frm]
    p = pos.variant.pieces[(code >> 1) - 1]
    if not p.castles or not pos.variant.castling:
        return ""
    here = f"the {piece_words(pos, frm)[0]} on {g.name(frm)} cannot castle to {g.name(to)}"
    side = "king's side" if to > frm else "queen's side"
    path = pos._castle_paths
    for rsq in g.squares_of(pos.castling):
        data = path.get(rsq)
        if data is None or data[0] != frm or data[1] != to:
            continue
        k, kto, rto, must_empty = data
        occ = pos.occ[0] | pos.occ[1]
        full = [s for s in g.squares_of(must_empty & occ)]
        if full:
            return f"{here}: castling needs {', '.join(g.name(s) for s in full)} empty"
        them = us ^ 1
        if pos.attacked(k, them, occ):
            return f"{here}: no castling out of check"
        step = 1 if kto > k else -1
        if pos.attacked(k + step, them, occ):
            return f"{here}: the king may not pass over {g.name(k + step)}, which is attacked"
        return f"{here}: the king would be in check on {g.name(kto)}"
    return f"{here}: castling on the {side} is no longer allowed (the king or that rook has moved)"
