"""`fairyboard serve` as the service runs it, on a Pico board over a real pty: a damaged game
record or `current` pointer never stops it (one log line naming the file), a bad command is
an error message, the link going away and coming back is logged once each, one process per
data folder, and `--resume ID`."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time

import pytest
from test_cli_hw import G8, Expect, pico, spawn, start_position_sensors  # noqa: F401  (pico: a fixture)

from board_driver.journal import GameStore

pytestmark = pytest.mark.slow          # the service as a process, killed and restarted


class Lines:
    """A child's stderr, read as it comes."""

    def __init__(self, stream):
        self.fd, self.buf = stream.fileno(), ""

    def until(self, pattern: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while not rx.search(self.buf):
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {pattern!r} on stderr:\n{self.buf}"
            if select.select([self.fd], [], [], min(left, 0.2))[0]:
                chunk = os.read(self.fd, 4096)
                assert chunk, f"stderr closed before {pattern!r}:\n{self.buf}"
                self.buf += chunk.decode()
        return self.buf

    def drain(self, seconds: float) -> str:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([self.fd], [], [], 0.1)[0]:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    break
                self.buf += chunk.decode()
        return self.buf


def stop(proc) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_survives_damage_bad_commands_and_a_lost_link(pico, tmp_path):
    layout, closed = start_position_sensors()
    pico.closed = set(closed)
    data = tmp_path / "data"
    games = data / "games"
    games.mkdir(parents=True)
    bad = games / "20250101-120000.jsonl"
    bad.write_bytes(b'{"type":"game","version":1,"id":"20250101-120000","variant":"orthodox","start_fen":'
                    b'"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","players":{}}\n'
                    b'{"type":"push","ply":1,"action":"e2e4","w":0}\n\x13\x37 not json\n'
                    b'{"type":"push","ply":2,"action":"e7e5","w":0}\n')
    damaged = bad.read_bytes()
    (data / "current").write_text("20250101-120000\n")
    env = {"FAIRYBOARD_DATA": str(data)}
    proc = spawn("serve", "--board", str(pico.profile), env=env)
    out, err = Expect(proc), Lines(proc.stderr)
    try:
        out.until(r"Resumed game 20250101-120000-recovered \(orthodox\), 1 actions so far\.")
        log = err.until(r"line 3")
        assert len([x for x in log.splitlines() if str(bad) in x]) == 1
        # one process per data folder
        second = subprocess.run([proc.args[0], "-m", "board_driver.cli", "play",
                                 "--events", "-"], input="", capture_output=True, text=True,
                                env={**os.environ, **env}, timeout=60)
        assert second.returncode == 2 and f"in use by process {proc.pid} (fairyboard serve)" in second.stderr
        # a bad command from the console is an error message; the game goes on
        proc.stdin.write(b"new nosuch\n")
        proc.stdin.flush()
        out.until(r"error: new: unknown variant 'nosuch'")
        e7, e5 = (layout.sensor_of(G8.parse(s)) for s in ("e7", "e5"))
        pico.closed = (closed - {layout.sensor_of(G8.parse("e2")), e7}) | {layout.sensor_of(G8.parse("e4")), e5}
        out.until(r"Black: e5")
        # the board stops answering, then comes back: logged once each
        pico.hung = True
        err.until(r"board link lost", timeout=30)
        err.drain(3.0)
        pico.hung = False
        log = err.until(r"board link back", timeout=30)
        assert log.count("board link lost") == 1 and log.count("board link back") == 1
        # a new game from the console: the game replaced is recorded as left, not unfinished forever
        proc.stdin.write(b"new chego\n")
        proc.stdin.flush()
        out.until(r"New game \S+: chego\.")
        err.until(r"left game 20250101-120000-recovered \(orthodox, 2 actions\) unfinished")
    finally:
        stop(proc)
    assert proc.returncode == 0
    assert bad.read_bytes() == damaged                          # left as it was
    rec = GameStore(data).load("20250101-120000-recovered")
    assert rec.actions == ["e2e4", "e7e5"] and rec.status == "abandoned"


def test_serve_new_ignores_a_current_pointer_of_random_bytes_and_resume_takes_a_game_by_id(pico, tmp_path):
    layout, closed = start_position_sensors()
    pico.closed = set(closed)
    data = tmp_path / "data"
    data.mkdir()
    (data / "current").write_bytes(os.urandom(48) + b"\xff")
    env = {"FAIRYBOARD_DATA": str(data)}
    proc = spawn("serve", "--board", str(pico.profile), "--new", "--white", "Ann", env=env)
    out, err = Expect(proc), Lines(proc.stderr)
    try:
        first = out.until(r"New game (\S+): orthodox\.")
        err.until(re.escape(str(data / "current")) + r": not a game id")
    finally:
        stop(proc)
    assert proc.returncode == 0
    gid = re.search(r"New game (\S+): orthodox\.", first).group(1)
    store = GameStore(data)
    assert store.load(gid).header["players"]["white"] == "Ann"
    proc = spawn("serve", "--board", str(pico.profile), "--variant", "chego", env=env)
    out, err = Expect(proc), Lines(proc.stderr)
    try:
        out.until(r"New game \S+: chego\.")
        err.until(rf"left game {gid} \(orthodox, 0 actions\) unfinished")
    finally:
        stop(proc)
    proc = spawn("serve", "--board", str(pico.profile), "--resume", gid, env=env)
    out = Expect(proc)
    try:
        out.until(rf"Resumed game {gid} \(orthodox\)")
    finally:
        stop(proc)
    assert store.current() == gid and store.load(gid).result is None
    assert json.loads(json.dumps(store.load(gid).header))["players"]["white"] == "Ann"
