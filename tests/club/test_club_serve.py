"""``fairyboard serve`` with a ``broker:`` section publishes its game; ``fairyboard recorder``
stores it and serves the page and the PGN. Both as subprocesses of the real command line."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml
from clubtools import free_port


def _cli(*args, env):
    return subprocess.Popen([sys.executable, "-m", "board_driver.cli", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> tuple[int, str]:
    try:
        with _OPENER.open(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except urllib.error.URLError:
        return 0, ""


@pytest.mark.slow
def test_serve_publishes_and_recorder_serves(tmp_path, broker):
    profile = tmp_path / "board.yaml"
    profile.write_text(yaml.safe_dump({"name": "sim", "files": 12, "ranks": 8,
                                       "broker": {"host": "127.0.0.1", "port": broker.port, "name": "b1",
                                                  "password": "pw-b1", "keepalive": 5}}))
    (tmp_path / "rec.pass").write_text("pw-rec\n")
    web = free_port()
    env = {**os.environ, "FAIRYBOARD_DATA": str(tmp_path / "board-data"), "PYTHONUNBUFFERED": "1"}
    rec = _cli("recorder", "--broker", f"127.0.0.1:{broker.port}", "--password-file", str(tmp_path / "rec.pass"),
               "--db", str(tmp_path / "club.sqlite"), "--web", f"127.0.0.1:{web}", "--round", "R1", env=env)
    serve = _cli("serve", "--board", str(profile), "--variant", "orthodox", env=env)
    try:
        deadline = time.monotonic() + 30
        boards = []
        while time.monotonic() < deadline:
            code, body = _get(f"http://127.0.0.1:{web}/boards.json") if rec.poll() is None else (0, "[]")
            boards = json.loads(body) if code == 200 else []
            if boards and boards[0].get("game") and boards[0].get("online") and boards[0].get("health"):
                break
            time.sleep(0.3)
        assert boards and boards[0]["board"] == "b1", boards
        assert boards[0]["online"] is True and boards[0]["health"]["sensors"] == "sim"
        g = boards[0]["game"]
        assert g["variant"] == "orthodox" and g["result"] is None
        assert boards[0]["position"]["fen"].startswith("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w")
        code, page = _get(f"http://127.0.0.1:{web}/")
        assert code == 200 and 'id="board-b1"' in page and "\u2654" in page
        code, text = _get(f"http://127.0.0.1:{web}/round/R1.pgn")
        assert code == 200 and '[Site "b1"]' in text and '[Round "R1"]' in text and f'[GameId "b1/{g["game"]}"]' in text \
            and g["id"] == f'b1/{g["game"]}'
        code, text = _get(f"http://127.0.0.1:{web}/round/R9.pgn")
        assert code == 404 and "R1" in text
        serve.send_signal(signal.SIGTERM)
        out = serve.communicate(timeout=20)[0]
        assert serve.returncode == 0, out
        assert f"club: publishing to 127.0.0.1:{broker.port} as b1" in out
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            boards = json.loads(_get(f"http://127.0.0.1:{web}/boards.json")[1])
            if boards[0]["online"] is False:
                break
            time.sleep(0.2)
        assert boards[0]["online"] is False          # a clean stop says so
    finally:
        for p in (serve, rec):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
    assert rec.returncode == 0, rec.stdout.read() if rec.stdout else ""


def test_serve_rejects_a_bad_broker_section(tmp_path):
    profile = tmp_path / "board.yaml"
    profile.write_text(yaml.safe_dump({"name": "sim", "broker": {"host": "x", "name": "b/1"}}))
    env = {**os.environ, "FAIRYBOARD_DATA": str(tmp_path / "d")}
    p = subprocess.run([sys.executable, "-m", "board_driver.cli", "serve", "--board", str(profile)],
                       env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "broker.name" in p.stderr and "'b/1'" in p.stderr
    assert not (tmp_path / "d" / "games").exists()      # nothing started


@pytest.mark.slow
def test_tls_broker(tmp_path):
    """Boards and recorder over TLS (a test CA, the profile's tls: {ca: FILE}, the recorder's
    --ca): the game arrives; a board that does not trust the broker's certificate sends nothing."""
    import shutil

    import pytest
    from clubtools import MOSQUITTO, MOSQUITTO_PASSWD, OPERA, Broker, SimBoard

    from board_driver.club.broker import broker_of
    from board_driver.hardware.backends import load_board
    if not (MOSQUITTO and MOSQUITTO_PASSWD and shutil.which("openssl")):
        pytest.skip("needs mosquitto and openssl")
    broker = Broker(tmp_path / "broker", {"recorder": "pw-rec", "b1": "pw-b1", "b2": "pw-b2"},
                    prefer="mosquitto", tls=True).start()
    try:
        profile = tmp_path / "board.yaml"
        profile.write_text(yaml.safe_dump({"name": "sim", "broker": {
            "host": "127.0.0.1", "port": broker.port, "name": "b1", "password": "pw-b1",
            "tls": {"ca": str(broker.ca)}}}))
        board = load_board(str(profile))
        cfg = broker_of(board.data, str(board.path))
        (tmp_path / "rec.pass").write_text("pw-rec\n")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        rec = _cli("recorder", "--broker", f"127.0.0.1:{broker.port}", "--ca", str(broker.ca),
                   "--password-file", str(tmp_path / "rec.pass"), "--db", str(tmp_path / "club.sqlite"), env=env)
        b1 = SimBoard(tmp_path / "b1", "b1", broker.port, "pw-b1", tls=cfg.tls)
        b2 = SimBoard(tmp_path / "b2", "b2", broker.port, "pw-b2")       # plain MQTT to a TLS port
        try:
            b1.start()
            b2.start()
            gid = b1.new_game()
            b2.new_game()
            for i, m in enumerate(OPERA[:6], 1):
                b1.move(m, i)
                b2.move(m, i)
            assert b1.pub.wait_idle(15)
            from board_driver.club.store import RecorderStore
            ro = None
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if (tmp_path / "club.sqlite").exists():
                    ro = ro or RecorderStore(tmp_path / "club.sqlite", readonly=True)
                    try:
                        if len(ro.journal_lines("b1", gid)) == len(b1.lines()):
                            break
                    except sqlite3.OperationalError:       # the file is there, its tables not yet
                        pass
                time.sleep(0.2)
            assert ro is not None and ro.journal_lines("b1", gid) == b1.lines()
            assert [g["board"] for g in ro.games()] == ["b1"] and b2.pub.pending() == len(b2.lines())
        finally:
            b1.stop()
            b2.stop()
            rec.send_signal(signal.SIGTERM)
            rec.communicate(timeout=10)
    finally:
        broker.stop()
