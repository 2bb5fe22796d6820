"""What ``fairyboard serve`` adds around the runner: its log, and a watch on the board's link.

:func:`setup_logging` sends the service's log to stderr (the system journal under systemd),
one line per event. :class:`WatchedSource` wraps the sensor source: it remembers the last
frame (so a new game can be placed on the pieces the board shows) and, for a board behind a
link (the Pico over USB), logs once when the link is lost (unplugged, or the board stopped
answering) and once when the board is back -- not every reconnect attempt in between.
"""

from __future__ import annotations

import logging
import sys

from board_driver.devices import RawFrame, SensorSource

log = logging.getLogger("board_driver.host.link")


def setup_logging(level: int = logging.INFO) -> None:
    """One line per event on stderr: ``fairyboard: WARNING: board link lost: ...``."""
    root = logging.getLogger()
    if not any(getattr(h, "_fairyboard", False) for h in root.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("fairyboard: %(levelname)s: %(message)s"))
        h._fairyboard = True            # type: ignore[attr-defined]
        root.addHandler(h)
    root.setLevel(level)
    # the serial board logs every state change of its link at INFO (each reconnect attempt);
    # the service says it once through WatchedSource instead
    logging.getLogger("board_driver.hardware.serial_board").setLevel(logging.WARNING)


class WatchedSource:
    """A :class:`SensorSource` that logs the link going away and coming back, once each."""

    def __init__(self, source: SensorSource, logger: logging.Logger = log):
        self.source = source
        self.log = logger
        self.up = True                  # the board answered when it was opened
        self.last: RawFrame | None = None
        self.lost = 0                   # how many times the link was lost
        self.gap = False                # the link came back: the next frame is a fresh read
        notices = getattr(source, "notices", None)
        if notices is not None:
            notices.clear()             # the start-up handshake is not news

    def read(self, timeout: float) -> RawFrame | None:
        frame = self.source.read(timeout)
        self._watch()
        if frame is not None:
            if self.gap:
                # the first frame since the link came back: the board is read afresh, and what
                # changed meanwhile is explained from the game (unwatched.py)
                frame = RawFrame(frame.t, frame.closed, gap=True)
                self.gap = False
            self.last = frame
        return frame

    def _watch(self) -> None:
        notices = getattr(self.source, "notices", None)
        while notices:
            item = notices.popleft()
            msg = getattr(item, "message", item)
            state = getattr(msg, "state", None)
            if state is None:
                continue
            ready = getattr(state, "value", str(state)) == "ready"
            port = getattr(msg, "port", None) or "the board"
            if ready and not self.up:
                self.up = True
                self.gap = True
                self.log.info("board link back on %s: %s; play goes on", port, msg.reason)
            elif not ready and self.up:
                self.up = False
                self.lost += 1
                self.log.warning("board link lost on %s: %s; the game is kept, the LEDs and sensors "
                                 "resume when the board is back", port, msg.reason)

    def __getattr__(self, name):
        return getattr(self.source, name)
