"""The background loop behind button polling and Pi-driven LED blinking."""

from __future__ import annotations

import threading

from board_driver.hardware.ticker import Ticker


def test_ticker_calls_repeatedly_and_stop_ends_the_thread():
    calls = []
    third = threading.Event()

    def fn():
        calls.append(1)
        if len(calls) == 3:
            third.set()

    t = Ticker("test-ticker")
    t.start(fn, 0.001)
    t.start(fn, 0.001)                      # a second start while running adds no second loop
    assert third.wait(5), "the ticker never called three times"
    assert [th.name for th in threading.enumerate()].count("test-ticker") == 1
    t.stop()
    assert not t.running and "test-ticker" not in [th.name for th in threading.enumerate()]
    n = len(calls)
    threading.Event().wait(0.02)            # a real thread: give a stray loop time to call
    assert len(calls) == n                  # no call after stop() returned
    t.start(fn, 0.001)                      # and it can run again
    assert t.running
    t.stop()
