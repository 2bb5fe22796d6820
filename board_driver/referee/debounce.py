"""Debouncing: raw occupancy snapshots in, stable lift/place events out.

A reed switch bounces for a few milliseconds when a piece arrives or leaves, and a piece
dragged over a square closes its switch for a moment. A square's new state counts only once
it has held for ``settle_ms``; a flicker shorter than that produces no event at all. The
event is stamped with the time it became stable. Pure: the clock is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SquareEvent:
    """A debounced change of one game square: a piece was lifted from it or placed on it."""

    t: int
    square: int
    placed: bool

    @property
    def kind(self) -> str:
        return "place" if self.placed else "lift"

    def __repr__(self) -> str:
        return f"SquareEvent({self.t!r}, {self.square!r}, placed={self.placed!r})"


class Debouncer:
    """Per-square debouncing of occupancy bitboards (owned by the session)."""

    __slots__ = ("settle_ms", "stable", "raw", "_since")

    def __init__(self, settle_ms: int, stable: int = 0):
        self.settle_ms = settle_ms
        self.stable = stable          # the debounced occupancy
        self.raw = stable             # the latest raw occupancy
        self._since: dict[int, int] = {}   # square -> time its raw state started differing

    def feed(self, t: int, raw: int) -> list[SquareEvent]:
        """Take a raw occupancy seen at ``t``; returns the events that became stable by ``t``."""
        events = self.advance(t)
        changed = raw ^ self.raw
        self.raw = raw
        sq = 0
        while changed:
            if changed & 1:
                if (raw >> sq & 1) == (self.stable >> sq & 1):
                    self._since.pop(sq, None)       # back to the stable state: a bounce
                else:
                    self._since[sq] = t
            changed >>= 1
            sq += 1
        if self.settle_ms <= 0:
            events.extend(self.advance(t))
        return events

    def advance(self, t: int) -> list[SquareEvent]:
        """The events whose new state has held for ``settle_ms`` by time ``t``."""
        if not self._since:
            return []
        # changes seen at the same moment (a board read afresh): lifts first -- a piece leaves
        # before it arrives
        due = sorted((since, self.raw >> sq & 1, sq) for sq, since in self._since.items()
                     if t - since >= self.settle_ms)
        out = []
        for since, _, sq in due:
            del self._since[sq]
            placed = bool(self.raw >> sq & 1)
            self.stable ^= 1 << sq
            out.append(SquareEvent(since + self.settle_ms, sq, placed))
        return out

    def deadline(self) -> int | None:
        """When the next pending change becomes stable, or None."""
        if not self._since:
            return None
        return min(self._since.values()) + self.settle_ms

    def reset(self, occupancy: int) -> None:
        """Accept ``occupancy`` as stable at once (a resumed board, a new game in the simulator)."""
        self.stable = self.raw = occupancy
        self._since.clear()
