"""The board's devices as the loop sees them while the page is served: the LEDs with the
pairing squares lit on top of the game's frame (:class:`OverlaySink`), and the sensors, whose
raw frames the bridge watches for pairing (:class:`WebSource`)."""

from __future__ import annotations

import threading
from typing import Callable, Protocol

from board_driver.devices import LedImage, RawFrame


class FrameWatcher(Protocol):
    """What :class:`WebSource` needs of the bridge: its wake-up and its eye on raw frames."""

    wake: threading.Event

    def observe(self, frame: RawFrame) -> None: ...


class OverlaySink:
    """An LED sink that adds the pairing square on top of the session's frames."""

    def __init__(self, inner):
        self.inner = inner
        self.led_count = inner.led_count
        self.base: LedImage | None = None
        self.overlay: dict[int, tuple] = {}

    def show(self, frame: LedImage) -> None:
        self.base = frame
        self.refresh()

    def refresh(self) -> None:
        if self.base is None:
            return
        if not self.overlay:
            self.inner.show(self.base)
            return
        colors, blink = list(self.base.colors), list(self.base.blink)
        for p, (c, b) in self.overlay.items():
            if 0 <= p < len(colors):
                colors[p], blink[p] = c, b
        self.inner.show(LedImage(tuple(colors), tuple(blink)))

    def set_overlay(self, overlay: dict[int, tuple]) -> None:
        if overlay != self.overlay:
            self.overlay = dict(overlay)
            self.refresh()

    def close(self) -> None:
        self.inner.close()


class WebSource:
    """A sensor source that lets the bridge see raw frames (pairing) and wake the loop at once
    when a job is queued (the simulated board has no scan to wait on).

    ``wake`` is what wakes a ``read`` waiting now (the loop's commands do:
    :class:`~board_driver.referee.runner.LoopQueue`): the bridge's wake-up on the simulated
    board, the inner source's own elsewhere, None when the inner source has none (the loop then
    looks at its commands every few milliseconds)."""

    def __init__(self, inner, bridge: FrameWatcher, *, wakeable: bool):
        self.inner = inner
        self.bridge = bridge
        self.wakeable = wakeable
        self.sensor_count = inner.sensor_count
        self.wake: Callable[[], object] | None = bridge.wake.set if wakeable else getattr(inner, "wake", None)

    def read(self, timeout: float) -> RawFrame | None:
        if self.wakeable:
            frame = self.inner.read(0.0)
            if frame is None:
                due = getattr(self.inner, "due_in", None)     # an events script: its next event's time
                if due is not None and (left := due()) is not None:
                    timeout = min(timeout, left)
                self.bridge.wake.wait(timeout)
                self.bridge.wake.clear()
                frame = self.inner.read(0.0)
        else:
            frame = self.inner.read(timeout)
        if frame is not None:
            self.bridge.observe(frame)
        return frame

    def close(self) -> None:
        self.inner.close()
