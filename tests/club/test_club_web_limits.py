"""The recorder's page holds no more connections than its limits (docs/club.md, *The page's
connections*): a client over its own limit answered 503 at once, another client served
meanwhile, a connection that sends nothing closed after the header timeout."""

from __future__ import annotations

import json
import socket
import urllib.request

from board_driver.club.store import RecorderStore
from board_driver.club.web import serve
from board_driver.web.limits import WebLimits


def _answer(s: socket.socket, timeout: float = 10) -> bytes:
    s.settimeout(timeout)
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def test_the_recorders_page_limits_its_connections_and_closes_silent_ones(tmp_path):
    store = RecorderStore(tmp_path / "club.sqlite")
    srv = serve(store, "127.0.0.1", 0, WebLimits(per_client=2, header_timeout=0.5))
    port = srv.server_address[1]
    try:
        silent = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        third = socket.create_connection(("127.0.0.1", port), timeout=10)
        answer = _answer(third)
        assert answer.startswith(b"HTTP/1.0 503 ") and b"Retry-After: 1" in answer, answer
        assert "too many connections from your address (2 at most)" in json.loads(answer.split(b"\r\n\r\n")[1])["error"]
        other = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=("127.0.0.2", 0))
        other.sendall(b"GET /boards.json HTTP/1.0\r\n\r\n")
        assert _answer(other).startswith(b"HTTP/1.0 200 ")
        for s in silent:                                # sent nothing: closed once the header is late
            assert _answer(s) == b""
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/boards.json", timeout=10) as r:
            assert r.status == 200
    finally:
        srv.shutdown()
        srv.server_close()
        store.close()
