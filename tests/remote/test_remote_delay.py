"""A remote game over a slow link: board b2 reaches the broker through a relay that delays
everything by 1 s each way (tests/remote/netdelay.py), so whatever one board says reaches the
other 1 s later in either direction. Real mosquitto, each board a process of its own
(tests/remote/side.py), as in test_remote_games.py."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
from clubtools import MOSQUITTO, OPERA
from latency import figures
from netdelay import DelayProxy
from test_remote_games import broker, finish, plies_of, same_game, side, wait_for  # noqa: F401  (broker: the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]

DELAY = 1.0
SCHOLAR = "e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7".split()     # White (b1) mates in 7 plies


@pytest.fixture
def slow_link(broker):
    proxy = DelayProxy(broker.port, up=DELAY, down=DELAY)
    yield proxy
    proxy.close()


def records(tmp_path, name, gid):
    path = tmp_path / name / "games" / f"{gid}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def own_times(recs, color) -> dict[int, int]:
    """The mover's time left after each of its own actions, on its own board, by ply."""
    out, ply = {}, 0
    for r in recs:
        if r["type"] == "push":
            if ply % 2 == color:
                out[ply] = r["clk"][color]
            ply += 1
    return out


def adjusted(recs, color) -> dict[int, int]:
    return {r["ply"]: r["clk"][color] for r in recs
            if r["type"] == "clock" and r.get("op") == "adjust" and r.get("color") == ("white", "black")[color]}


def test_a_game_through_a_link_with_1_s_of_delay_each_way(tmp_path, broker, slow_link):
    """The scholar's mate with clocks, b2 behind the slow link: both journals end with the
    same actions, nothing forks, previews are lit, and neither player's clock is charged the
    delay: each board takes the other's reading of its own player's time, and a player's own
    clock only runs on its own board."""
    lat = tmp_path / "latency.jsonl"
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(SCHOLAR[0::2]),
              "--clock", "300+0", "--keepalive", "10", latency=lat)
    time.sleep(0.3)
    b2 = side(tmp_path, SimpleNamespace(port=slow_link.port), "b2", "--white", "remote:b1",
              "--moves", " ".join(SCHOLAR[1::2]), "--keepalive", "10", latency=lat)
    r1, r2 = finish(tmp_path, [b1, b2], timeout=240)
    same_game(tmp_path, r1, r2)
    assert r1["moves"] == SCHOLAR and r1["result"] == "1-0" and r1["reason"] == "checkmate"
    got = figures(lat)
    print("latency with 1 s each way", got)
    assert got["n"] == len(SCHOLAR) and got["previewed"] > 0, got
    # every move of the peer reached the other board at least the delay later (the relay works)
    assert got["event_to_led_p50"] >= DELAY * 1000, got

    rec1, rec2 = records(tmp_path, "b1", r1["game"]), records(tmp_path, "b2", r1["game"])
    for mover, own_recs, other_recs in ((0, rec1, rec2), (1, rec2, rec1)):     # b1 plays White
        own, adj = own_times(own_recs, mover), adjusted(other_recs, mover)
        assert own and set(adj) <= set(own) and len(adj) >= len(own) - 1, (own, adj)
        assert all(adj[p] == own[p] for p in adj), (own, adj)      # the mover's board's reading, as is
        used = 300_000 - min(own.values())
        # a round trip (2 s) passes between two moves of a player; charged to it, its clock
        # would have lost at least that much a move
        assert used < len(own) * 2 * DELAY * 1000 / 2, (mover, used, own)


def test_the_slow_link_dropped_mid_game(tmp_path, broker, slow_link):
    """The slow link fails mid-game (every connection dropped, what was on its way lost) and
    comes back two seconds later: the boards catch up and finish the same game."""
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(OPERA[0::2]),
              "--keepalive", "10", "--resign-after", "14")
    time.sleep(0.3)
    b2 = side(tmp_path, SimpleNamespace(port=slow_link.port), "b2", "--white", "remote:b1",
              "--moves", " ".join(OPERA[1::2]), "--keepalive", "10", "--resign-after", "14")
    wait_for(lambda: plies_of(tmp_path, "b1") >= 5, 90, "five plies on b1")
    slow_link.cut()
    time.sleep(2.0)
    slow_link.restore()
    r1, r2 = finish(tmp_path, [b1, b2], timeout=240)
    same_game(tmp_path, r1, r2)
    assert r1["moves"] == OPERA[:14] and r1["result"] is not None
    assert slow_link.connections >= 2                       # b2 did connect again
    assert "lost the broker" in (tmp_path / "b2.out").read_text()
