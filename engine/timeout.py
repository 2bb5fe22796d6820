"""When a flag falls: can the other side still win? (FIDE Laws, Art. 6.9: the flagged side
loses, unless the opponent cannot checkmate by any possible series of legal moves; then the
game is drawn.) One reading per family, read off the typed view (``board_state()``):

* **chess family** (orthodox, Tomorrow's Chess 1-5 and Great Chess, Courier Chess, Random
  Variant Chess) and **Cost Progressive**: the opponent cannot win when it has nothing but
  royal pieces on the board and nothing in hand; or when, besides its royal pieces, it has one
  knight (Betza ``N``) or one bishop (``B``) and nothing in hand while the flagged side has
  nothing but royal pieces and nothing in hand (no mate position exists with one of them
  against a lone king, on 8x8 and on 12x8 alike). Pawns count as material (they promote),
  and so does every other piece: a Camel, a Wazir or a Fers alone is counted as able to win
  (helpmate positions were not worked out for every fairy piece; a loss is the safe reading);
* **csipgs**: the opponent can always win: every turn brings it zorkmids, and a royal piece
  not in check may buy a piece and place it next to itself, so even a lone royal with an empty
  reserve can build a mating force. A flag fall always loses;
* **Chego** (no checkmate: the points decide): the opponent cannot win when it has no piece on
  the board, nothing in hand and no point yet: it can then never control a square nor
  capture, so it can never have more points than the flagged side.
"""

from __future__ import annotations

__all__ = ["can_win"]


def _in_hand(st, color: int) -> bool:
    return any(n is None or n > 0 for n in st.hands[color].values())


def can_win(game, color: int) -> bool:
    """Can ``color`` still win the game by some series of legal actions (see the module
    docstring)? Asked for the opponent of a side whose flag fell."""
    st = game.board_state()
    if st.family == "csipgs":
        return True
    own = [letter for letter, c in st.pieces.values() if c == color]
    if st.family == "chego":
        points = st.points[color] if st.points is not None else 1
        return bool(own) or _in_hand(st, color) or points > 0
    royal = {p.letter for p in game.variant.pieces if p.royal}
    betza = {p.letter: p.betza for p in game.variant.pieces}
    mine = [x for x in own if x not in royal]
    if _in_hand(st, color):
        return True
    if not mine:
        return False
    theirs = [letter for letter, c in st.pieces.values() if c != color and letter not in royal]
    if len(mine) == 1 and betza.get(mine[0]) in ("N", "B") and not theirs and not _in_hand(st, color ^ 1):
        return False
    return True
