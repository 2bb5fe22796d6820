"""A background loop: call a function every ``interval`` seconds in a daemon thread until
stopped (button polling, LED blink phases when the Pi drives the LEDs)."""

from __future__ import annotations

import threading
from typing import Callable


class Ticker:
    """Runs ``fn`` every ``interval`` seconds in one daemon thread; ``stop()`` joins it."""

    def __init__(self, name: str):
        self.name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, fn: Callable[[], object], interval: float) -> None:
        """Start the loop (a second call while running does nothing)."""
        if self._thread is not None:
            return
        self._stop.clear()

        def run() -> None:
            while not self._stop.wait(interval):
                fn()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and wait for its last call to finish."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
