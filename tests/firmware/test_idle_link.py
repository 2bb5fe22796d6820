"""An idle link sleeps: with the firmware's main.py on MicroPython's unix port behind a pty, the
host's reader blocks in its port read while the board has nothing to say, woken by the board's
own frames (its heartbeat and periodic occupancy, each once a second), not every 20 ms.
Counted against the board's periodic occupancy frames, never timed."""

from __future__ import annotations

import pytest

from firmware_bridge import Link, LinkTimings, Occupancy, OccupancyReason

pytestmark = pytest.mark.slow


def test_an_idle_link_reads_a_few_times_per_refresh_not_every_read_timeout(unix_board):
    unix_board.set_closed({0, 11, 95})
    link = Link([unix_board.port], timings=LinkTimings(listen_first=0.3))
    services = [0]
    service = link.service

    def counted() -> None:
        services[0] += 1
        service()
    link.service = counted                  # type: ignore[method-assign]  # the reader thread calls this
    link.start()
    try:
        link.wait_ready(30.0)
        def periodic(count: int) -> int:
            """Wait for ``count`` periodic occupancy frames (one a second); the items seen."""
            seen, n = 0, 0
            while n < count:
                item = link.get(timeout=30.0)
                assert item is not None, "no periodic occupancy from the board"
                seen += 1
                n += isinstance(item.message, Occupancy) and item.message.reason == OccupancyReason.REFRESH
            return seen
        periodic(2)                         # the handshake's work done: from here the board idles
        start = services[0]
        items = periodic(4)
        reads = services[0] - start
        # per periodic frame (1 s): its own read, the heartbeat's, and the idle timeout's
        # (0.5 s), a frame split over two reads now and then on a busy machine (25 reads in 4 s
        # were seen at load 4); a reader that woke every read_timeout (20 ms) would read about
        # 50 times a frame
        assert reads <= 10 * 4, f"{reads} reads over 4 periodic frames ({items} items delivered)"
        assert link.health().crc_errors == 0
    finally:
        link.close()
    assert "Traceback" not in unix_board.stderr(), unix_board.stderr()


def test_a_consumer_waiting_on_the_link_is_woken_at_once(unix_board):
    import threading
    link = Link([unix_board.port], timings=LinkTimings(listen_first=0.3))
    link.start()
    try:
        link.wait_ready(30.0)
        got: list = []
        waiting = threading.Event()

        def consumer() -> None:
            while True:
                waiting.set()
                item = link.get(timeout=600.0)
                got.append(item)
                if item is None:
                    return
        th = threading.Thread(target=consumer, daemon=True)
        th.start()
        assert waiting.wait(30)
        link.wake()
        th.join(30)
        assert not th.is_alive() and got[-1] is None
        assert all(item is not None for item in link.drain())     # a wake is never an item
    finally:
        link.close()
