"""Fixtures: a real broker per test, boards and a recorder talking to it."""

from __future__ import annotations

import pytest
from clubtools import Broker

BOARDS = {f"b{i}": f"pw-b{i}" for i in range(1, 5)}


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "broker", {"recorder": "pw-rec", **BOARDS})
    if b.kind == "amqtt" and not b.available():
        pytest.skip("no MQTT broker: install mosquitto (scripts/system-deps) or the test extra (amqtt)")
    b.start()
    yield b
    b.stop()


@pytest.fixture
def make_recorder(tmp_path, broker):
    """make_recorder(port=None) -> a started Recorder on one store file; closed at the end."""
    from board_driver.club.recorder import Recorder, RecorderConfig
    from board_driver.club.store import RecorderStore
    made = []

    def make(port=None, *, grace=0.5, retry=1.0):
        store = RecorderStore(tmp_path / "club.sqlite")
        cfg = RecorderConfig(port=port or broker.port, username="recorder", password="pw-rec",
                             keepalive=5, grace=grace, retry=retry)
        r = Recorder(cfg, store).start()
        made.append(r)
        assert r.connected.wait(10), "the recorder did not connect"
        assert r.subscribed.wait(10), "the broker did not acknowledge the recorder's subscriptions"
        return r
    yield make
    for r in made:
        r.close()
        r.store.close()


@pytest.fixture
def make_board(tmp_path, broker):
    made = []

    def make(name="b1", port=None, password=None, *, start=True):
        from clubtools import SimBoard
        b = SimBoard(tmp_path / name, name, port or broker.port, password or BOARDS[name])
        made.append(b)
        return b.start() if start else b
    yield make
    for b in made:
        b.stop()
