"""Test helpers for the hardware backends: a virtual clock, a fake LED strip driver, and a
lockstep rig for the serial board over a pty (the Pico firmware's own logic on the far side)."""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Sequence

from board_driver.layout import LedOrder


class VirtualClock:
    """Seconds on a clock moved by hand; ``sleep`` moves it and runs what is due on the way."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start
        self._due: list = []
        self._n = itertools.count()

    def __call__(self) -> float:
        return self.now

    def at(self, t: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._due, (t, next(self._n), action))

    def after(self, dt: float, action: Callable[[], None]) -> None:
        self.at(self.now + dt, action)

    def sleep(self, dt: float) -> None:
        end = self.now + max(0.0, dt)
        while self._due and self._due[0][0] <= end:
            t, _, action = heapq.heappop(self._due)
            self.now = max(self.now, t)
            action()
        self.now = end

    advance = sleep

    def ms(self) -> int:
        return int(round(self.now * 1000))


def chain_to_squares(order: LedOrder, chain: Sequence) -> list:
    """What each physical square shows, for a chain of LED values laid out as ``order`` says."""
    out = [None] * (order.files * order.ranks)
    for phys in range(len(out)):
        i = order.chain_index(phys)
        out[phys] = chain[i] if i < len(chain) else (0, 0, 0)
    return out


class FakeStrip:
    """A WS2812 chain driven from the Pi (the PixelDriver a PiLedSink writes to).

    ``installed`` is how the chain really runs over the board, whatever the profile says;
    :meth:`squares` is what a person sees on each physical square.
    """

    def __init__(self, count: int = 96, *, installed: LedOrder = LedOrder()) -> None:
        self.count = count
        self.installed = installed
        self.history: list[tuple] = []
        self.closed = False

    def write(self, pixels: Sequence[tuple[int, int, int]]) -> None:
        if self.closed:
            raise RuntimeError("write() on a closed strip")
        if len(pixels) != self.count:
            raise ValueError(f"{len(pixels)} pixels for a chain of {self.count}")
        for p in pixels:
            if len(p) != 3 or not all(isinstance(c, int) and 0 <= c <= 255 for c in p):
                raise ValueError(f"bad pixel {p!r}")
        self.history.append(tuple(tuple(p) for p in pixels))

    def close(self) -> None:
        self.closed = True

    @property
    def shown(self) -> tuple:
        return self.history[-1] if self.history else ((0, 0, 0),) * self.count

    def squares(self) -> list:
        return chain_to_squares(self.installed, self.shown)
