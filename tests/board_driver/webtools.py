"""Helpers for the page's tests: the real CLI serving the page, an HTTP client, PNG pixels."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib

CLI = [sys.executable, "-m", "board_driver.cli"]


class Server:
    """``fairyboard play --web 127.0.0.1:0`` in a subprocess, with its own data folder."""

    def __init__(self, data_dir, *args: str, listen: str = "127.0.0.1:0"):
        self.data_dir = data_dir
        self.url = None
        self._start(listen, args)

    def _start(self, listen: str, args) -> None:
        env = dict(os.environ)
        env["FAIRYBOARD_DATA"] = str(self.data_dir)
        env.pop("XDG_DATA_HOME", None)
        self.proc = subprocess.Popen(CLI + ["play", "--web", listen, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env)
        self.lines: list[str] = []
        end = time.monotonic() + 30
        url = None
        while time.monotonic() < end and url is None:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if r:
                line = self.proc.stdout.readline().decode()
                if not line:
                    break
                self.lines.append(line)
                m = re.search(r"the page is at (http://\S+)", line)
                if m:
                    url = m.group(1).rstrip("/")
        if url is None:
            self.stop()
            raise RuntimeError("play --web did not start: " + "".join(self.lines))
        self.url = url
        self.wait_state()

    def restart(self, *args: str) -> str:
        """Stop the server (as Ctrl-C does) and start it again on the same port and data folder
        (without ``--new`` it resumes the game); returns what the first run printed."""
        said = self.stop()
        port = self.url.rsplit(":", 1)[1]
        end = time.monotonic() + 10
        while True:
            try:
                self._start(f"127.0.0.1:{port}", args)
                return said
            except RuntimeError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.2)

    def wait_state(self, timeout: float = 10) -> dict:
        end = time.monotonic() + timeout
        while True:
            status, body = self.get("/api/state")
            if status == 200:
                return body
            if time.monotonic() > end:
                raise RuntimeError(f"/api/state: {status} {body}")
            time.sleep(0.05)

    def request(self, method: str, path: str, body=None, *, token: str | None = None,
                headers: dict | None = None, raw: bytes | None = None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        h = {"Content-Type": "application/json"} if data is not None else {}
        if token:
            h["Authorization"] = f"Bearer {token}"
        h.update(headers or {})
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, _decode(r), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, _decode(e), dict(e.headers)

    def get(self, path: str, **kw):
        status, body, _ = self.request("GET", path, **kw)
        return status, body

    def post(self, path: str, body=None, **kw):
        status, body, _ = self.request("POST", path, body if body is not None else {}, **kw)
        return status, body

    def sim(self, *events) -> dict:
        status, body = self.post("/api/sim", list(events))
        assert status == 200, body
        return body

    def move(self, a: str, b: str, *, capture: bool = False) -> dict:
        evs = ([{"t": 0, "lift": b}] if capture else []) + [{"t": 20, "lift": a}, {"t": 120, "place": b}]
        return self.sim(*evs)

    def pair(self) -> str:
        """Pair as a player at the board would: lift the lit piece and put it back."""
        status, p = self.post("/api/pair")
        assert status == 200, p
        self.sim({"t": 0, "lift": p["square"]}, {"t": 150, "place": p["square"]})
        status, st = self.get(f"/api/pair/{p['id']}")
        assert st["state"] == "granted", st
        return st["token"]

    def new_game(self, token: str, variant: str, **kw) -> dict:
        version = self.wait_state()["version"]
        status, body = self.post("/api/new", {"variant": variant, **kw}, token=token)
        assert status == 200, body
        end = time.monotonic() + 10
        while time.monotonic() < end:
            st = self.wait_state()
            same = st["variant"] == variant or (variant == "random" and st["variant"].startswith("random-"))
            if same and st["version"] > version and st["pending"] is None and not st["moves"]:
                return st
            time.sleep(0.05)
        raise AssertionError(f"no new {variant} game: {st}")

    def output(self) -> list[str]:
        """Every line the server has printed so far (its console), read without waiting."""
        out = self.proc.stdout
        if out is None or out.closed:
            return list(self.lines)
        os.set_blocking(out.fileno(), False)
        try:
            data = out.read() or b""        # what is buffered and what the pipe holds now
        finally:
            os.set_blocking(out.fileno(), True)
        text = getattr(self, "_partial", "") + data.decode(errors="replace")
        *done, self._partial = text.split("\n")
        self.lines += [line + "\n" for line in done]
        return list(self.lines)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is None or self.proc.stdout.closed:      # stopped before
            return "".join(self.lines)
        rest = self.proc.stdout.read().decode()
        self.proc.stdout.close()
        return "".join(self.lines) + rest


def _decode(resp):
    raw = resp.read()
    if "json" in (resp.headers.get("Content-Type") or ""):
        return json.loads(raw)
    return raw.decode()


# -- PNG pixels (screenshots), without an imaging library ---------------------------------------

def read_png(path) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows) of an 8-bit RGB/RGBA non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def colours_in(png, rect, step: int = 4) -> set[tuple[int, int, int]]:
    """The colours seen in a rectangle (x, y, width, height) of a decoded PNG, sampled."""
    w, h, bpp, rows = png
    x0, y0, rw, rh = (int(v) for v in rect)
    out = set()
    for y in range(max(0, y0), min(h, y0 + rh), step):
        row = rows[y]
        for x in range(max(0, x0), min(w, x0 + rw), step):
            out.add(tuple(row[x * bpp:x * bpp + 3]))
    return out


def start_serve(args: list[str], env: dict) -> tuple[subprocess.Popen, Server, list[str]]:
    """``fairyboard serve ARGS`` (with ``--web 127.0.0.1:0`` among them) as a subprocess: the
    process, a Server client on its page, and the lines it printed until the page was up."""
    proc = subprocess.Popen(CLI + ["serve", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)
    out: list[str] = []
    url = None
    end = time.monotonic() + 30
    while url is None and time.monotonic() < end and proc.poll() is None:
        if select.select([proc.stdout], [], [], 0.5)[0]:
            line = proc.stdout.readline().decode()
            out.append(line)
            m = re.search(r"the page is at (http://\S+)", line)
            url = m and m.group(1).rstrip("/")
    if url is None:
        proc.kill()
        raise AssertionError("serve did not start its page: " + "".join(out) + proc.stdout.read().decode())
    s = Server.__new__(Server)
    s.url = url
    return proc, s, out


def until(fn, timeout: float = 20.0, what: str = "it", every: float = 0.05):
    """``fn()``'s first true answer within ``timeout`` seconds, else an AssertionError naming
    ``what`` and the last answer."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not seen in {timeout} s (last: {last!r})")


def pair_when_ready(s, timeout: float = 120) -> str:
    """A player's token from ``s.pair()``, once the service's loop runs (an engine it starts
    first may take seconds: a WebAssembly one does)."""
    def attempt():
        try:
            return s.pair()
        except AssertionError:
            return None
    return until(attempt, timeout=timeout, what="pairing")
