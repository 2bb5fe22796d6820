"""A loopback TCP relay that delays what passes through it, for a board whose link to the broker
is slow: every chunk read on one side is written to the other ``up`` (board to broker) or
``down`` (broker to board) seconds after it was read, in order, so a byte stream keeps its order
and only arrives later (what 1 s of added latency on a network path does; no loss, no
reordering). ``cut()`` drops every connection (a link that fails mid-game) and refuses new ones
until ``restore()``.

Threads, one reader and one writer per direction and connection: the reader stamps each chunk
with its due time, the writer sleeps until then. Nothing else runs in the test's process loop.
"""

from __future__ import annotations

import queue
import socket
import threading
import time

from clubtools import TcpProxy


class DelayProxy(TcpProxy):
    def __init__(self, target_port: int, *, up: float = 1.0, down: float = 1.0) -> None:
        self.up_delay, self.down_delay = up, down
        super().__init__(target_port)

    def _relay(self, c: socket.socket, u: socket.socket) -> None:
        for s in (c, u):
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for a, b, d in ((c, u, self.up_delay), (u, c, self.down_delay)):
            q: queue.Queue = queue.Queue()
            threading.Thread(target=self._read, args=(a, q, d), daemon=True).start()
            threading.Thread(target=self._write, args=(b, q), daemon=True).start()

    @staticmethod
    def _read(a: socket.socket, q: queue.Queue, delay: float) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                q.put((time.monotonic() + delay, data))
        except OSError:
            pass
        q.put((time.monotonic() + delay, None))     # the end, as late as the data before it

    @staticmethod
    def _write(b: socket.socket, q: queue.Queue) -> None:
        while True:
            due, data = q.get()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if data is None:
                break
            try:
                b.sendall(data)
            except OSError:
                break
        try:
            b.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
