"""What happened while nobody watched: the board read afresh at a start, a resume or a
reconnect, explained from the journaled position.

The changes since the last debounced occupancy arrive all at once, with no order and no
lifts and places in between: a capture made meanwhile leaves its victim's square occupied
(only the capturer's source emptied), and a move and its reply may both have been made.
:func:`read_board` records the changes as board events marked *unwatched* (lifts first: a
piece leaves before it arrives; evidence.py notes the gap) and asks the reconciler, which
counts every square as possibly lifted while the gap is in its window: one action with no
doubt is applied; a capture (the victim's square looks untouched, as it would with the
capturer in the hand) is a prompt whose default is taken when the board moves on. A move
under way (a piece in the hand, a victim lifted) stays one. When no single action explains the
board, :func:`readings` tries two physical actions (with the silent end of a multi-move turn
between them) that both show on the board: one sequence is applied, several are shown on the
LEDs and asked about, none is a mismatch whose fix the LEDs show. Never a sequence for a board
that only lacks pieces (pieces in the hand, or to put back: an exchange and a lifted piece look
the same), nor one whose last action is a capture leaving its victim's square occupied (the
same board as the capturer held in the hand). A board that shows what it showed before is no
proof that nothing happened: with a move under way (the capturer lifted before the program
stopped) the capture may have been completed meanwhile, so the gap is noted all the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from board_driver.referee.debounce import SquareEvent
from board_driver.referee.reconcile import Explanation, Tentative, Verdict
from board_driver.referee.reconcile import VerdictStatus as VS
from engine.contract import ActionKind
from engine.geometry import bits

if TYPE_CHECKING:
    from engine.contract import Game
    from board_driver.referee.session import Session

MAX_PHYSICAL = 2


def _effect(occ: int, action) -> int:
    for sq in action.lifts:
        occ &= ~(1 << sq)
    for sq in action.places:
        occ |= 1 << sq
    return occ


def sequences(game: Game, occupancy: int, physical: int = MAX_PHYSICAL) -> list[tuple]:
    """Sequences of legal actions from ``game``'s state, with 2..``physical`` physical actions
    (silent ones between them free: an end of turn), that leave ``occupancy`` on the board.
    The game is left as it was."""
    out: list[tuple] = []
    seen: set[tuple[str, ...]] = set()

    def walk(g: Game, occ: int, path: list, phys: int, silent_run: int) -> None:
        if occ == occupancy and phys >= 2:
            key = tuple(a.text for a in path)
            if key not in seen:
                seen.add(key)
                out.append(tuple(path))
            return
        if phys >= physical or g.outcome() is not None:
            return
        for a in g.legal_actions():
            if a.silent:
                if silent_run or a.kind is not ActionKind.END:
                    continue
            nxt = _effect(occ, a)
            if not a.silent and phys + 1 == physical and nxt != occupancy:
                continue
            g.push(a)
            try:
                path.append(a)
                walk(g, nxt, path, phys + (0 if a.silent else 1), 1 if a.silent else 0)
                path.pop()
            finally:
                g.pop()

    walk(game, game.occupancy(), [], 0, 0)
    return out


def shows(path: tuple, start: int) -> bool:
    """Does the last physical action of ``path`` (played from occupancy ``start``) show on the
    board? A capture's piece set down on its victim's square leaves only its source emptied,
    as the same piece held in the hand does: such a last action is no more than a piece lifted."""
    occ = start
    last = None
    for a in path:
        if not a.silent:
            last = (occ, a)
        occ = _effect(occ, a)
    if last is None:
        return False
    before, a = last
    return any(not before >> sq & 1 for sq in a.places)


def readings(game: Game, occupancy: int) -> list[tuple]:
    """What a board read after a gap may show besides a single action (which the reconciler
    finds): two physical actions that both show on it (a move and its reply). Never pieces that
    are only missing: those are pieces in the hand, or pieces to put back (see the module
    docstring)."""
    start = game.occupancy()
    if not occupancy & ~start:
        return []
    return [s for s in sequences(game, occupancy) if shows(s, start)]


def read_board(session: Session, occupancy: int, now: int) -> None:
    """``occupancy`` is what the board shows now, read afresh after a time nobody watched."""

    session.now = max(session.now, now)
    session.debouncer.reset(occupancy)
    was = session.occupancy
    if occupancy == was:
        if was != session.game.occupancy():
            # a move was under way: it may have been made meanwhile without a trace on the board
            # (the capturer was in the hand: its capture leaves the board as it was)
            session.events.mark_gap(quiet=True)
        session.update(session.now)
        return
    session.events.mark_gap()
    for sq in bits(was & ~occupancy):
        session.record_event(SquareEvent(now, sq, False), update=False)
    for sq in bits(occupancy & ~was):
        session.record_event(SquareEvent(now, sq, True), update=False)
    session.update(session.now)
    v = session.verdict
    if v.status is not VS.MISMATCH or session.recover or session.outcome() is not None:
        # settled, applied, asked about -- or a move under way (a piece in the hand, a victim
        # lifted), which no move of the other side explains instead
        return
    found = readings(session.game, occupancy)
    if len(found) == 1:
        session.commit(Explanation(0, found[0]), len(session.events))
        session.update(session.now)
    elif found:
        prompt = Verdict(VS.PROMPT, options=tuple(Explanation(0, s) for s in found), default=None,
                         fix=v.fix, lifted=v.lifted, placed=v.placed)
        session.tentative = Tentative(prompt, len(session.events))
        session.verdict = prompt
        session.notice_verdict(prompt)
        session.render()
