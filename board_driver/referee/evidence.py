"""The board events a session has seen, indexed so that the reconciler's questions cost the
same for the millionth event as for the first (pure).

The reconciler asks three things of the event log: since which event has the board not shown
a given occupancy (``last_seen``), which squares were lifted or placed since an event
(``touched_since``), and when the last event happened. A flickering sensor or a long game
must not make these grow: the log keeps, per square, the index of its last lift and of its
last place (and its lifts, for "the first lift since"), and per occupancy the index of the
last event that left the board showing it -- never the events themselves -- so every question
is answered in time bounded by the number of squares (a binary search for the first lift).
``forget_before`` drops what no window needs any more.

Event indexes are counted from the first event of the game (``len(log)`` is the index the
next event will get); a session marks positions with them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from typing import Iterator

from board_driver.referee.debounce import SquareEvent


class EventLog:
    """Debounced board events, as indexes (see the module docstring)."""

    __slots__ = ("n", "last_t", "gap_at", "recent", "_lift", "_place", "_seen", "_lifts", "_prune_at")

    RECENT = 4096                         # events kept to be looked at (iterating the log)

    def __init__(self) -> None:
        self.n = 0                        # events so far
        self.last_t = -1                  # time of the last event
        self.gap_at = -1                  # index of the first event of the last unwatched change
        self.recent: deque[SquareEvent] = deque(maxlen=self.RECENT)   # the last events, for display and tests
        self._lift: dict[int, int] = {}   # square -> index of its last lift
        self._place: dict[int, int] = {}  # square -> index of its last place
        self._seen: dict[int, int] = {}   # occupancy -> index of the last event after which the board showed it
        self._lifts: dict[int, list[int]] = {}   # square -> indexes of its lifts (old ones forgotten)
        self._prune_at = 4096

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[SquareEvent]:
        """The last events (up to :attr:`RECENT`), oldest first."""
        return iter(self.recent)

    def append(self, event: SquareEvent, occupancy: int) -> None:
        """Record ``event``, after which the board shows ``occupancy``."""
        i = self.n
        self.recent.append(event)
        if event.placed:
            self._place[event.square] = i
        else:
            self._lift[event.square] = i
            self._lifts.setdefault(event.square, []).append(i)
        self._seen[occupancy] = i
        self.n = i + 1
        self.last_t = event.t

    def time_of(self, index: int) -> int | None:
        """The time of event ``index`` while it is among the recent ones, else None."""
        back = self.n - index
        if index < 0 or back <= 0 or back > len(self.recent):
            return None
        return self.recent[-back].t

    def mark_gap(self, quiet: bool = False) -> None:
        """The next events are what changed while nobody watched (a board read afresh): their
        order is unknown and any square may have been lifted and put back meanwhile. ``quiet``:
        the board shows what it showed before, no event follows, and the gap is counted with the
        last event (a window that holds it saw the gap; one starting after it, a position
        confirmed since, did not)."""
        self.gap_at = self.n - 1 if quiet else self.n

    def unwatched_since(self, index: int) -> bool:
        """Is an unwatched change among the events from ``index`` on?"""
        return self.gap_at >= index

    def last_seen(self, occupancy: int) -> int:
        """Index of the last event after which the board showed ``occupancy`` (-1: never)."""
        return self._seen.get(occupancy, -1)

    def first_lift_since(self, square: int, index: int) -> int:
        """Index of the first lift from ``square`` at ``index`` or later (-1: none)."""
        lifts = self._lifts.get(square)
        if not lifts or lifts[-1] < index:
            return -1
        return lifts[bisect_left(lifts, index)]

    def last_place(self, square: int) -> int:
        """Index of the last place on ``square`` (-1: none)."""
        return self._place.get(square, -1)

    def touched_since(self, index: int) -> tuple[int, int]:
        """(lifted, placed) square masks of the events from ``index`` on: read off those events
        when there are few (a window is a move or two), else off the per-square indexes."""
        k = self.n - max(index, 0)
        if k <= 0:
            return 0, 0
        recent = self.recent
        if k <= 64 and k <= len(recent):
            lifted = placed = 0
            for j in range(1, k + 1):
                e = recent[-j]
                if e.placed:
                    placed |= 1 << e.square
                else:
                    lifted |= 1 << e.square
            return lifted, placed
        return self._touched_by_square(index)

    def _touched_by_square(self, index: int) -> tuple[int, int]:
        lifted = placed = 0
        if index < self.n:
            for sq, i in self._lift.items():
                if i >= index:
                    lifted |= 1 << sq
            for sq, i in self._place.items():
                if i >= index:
                    placed |= 1 << sq
        return lifted, placed

    def forget_before(self, index: int) -> None:
        """Drop what no window starting at ``index`` or later needs (bounded memory in a long
        game: the occupancies seen only before ``index``). Amortised: it runs only when the
        table has doubled since the last time."""
        if len(self._seen) + sum(len(v) for v in self._lifts.values()) < self._prune_at:
            return
        self._seen = {occ: i for occ, i in self._seen.items() if i >= index - 1}
        for sq, lifts in self._lifts.items():
            self._lifts[sq] = lifts[bisect_left(lifts, index):] or lifts[-1:]
        self._prune_at = max(4096, 2 * (len(self._seen) + sum(len(v) for v in self._lifts.values())))

    def reset(self) -> None:
        """Forget everything (a new board record: the game starts over from what it shows)."""
        self._lift.clear()
        self._place.clear()
        self._seen.clear()
        self._lifts.clear()
        self.recent.clear()
        self.gap_at = -1
        self.n = 0
        self.last_t = -1
