"""The remote player's protocol on one board, in process: a link that only records what is sent
and hands the test's messages in as the peer's (no broker), the real session on the simulated
board. What the broker adds (the ACL, the processes) is test_remote_games.py's."""

from __future__ import annotations

import threading
import time

import pytest

from board_driver.host.game_host import GameHost, GameRequest, SimSeat
from board_driver.journal import GameStore
from board_driver.opponents.remote import Remote, position_hash
from board_driver.referee.reconcile import Explanation
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import VirtualClock

pytestmark = pytest.mark.slow


class FakeLink:
    """The peer's side of the broker, played by the test."""

    def __init__(self, peer: str = "b2") -> None:
        self.peer = peer
        self.me = "b1"
        self.connected = threading.Event()
        self.connected.set()
        self.inbox: list[tuple] = []
        self.sent: list[tuple[str, dict | None]] = []

    def drain(self) -> list[tuple]:
        out, self.inbox = self.inbox, []
        return out

    def send(self, kind, payload, *, game=None, retain=False) -> bool:
        self.sent.append((kind, payload))
        return True

    def close(self) -> None:
        pass

    def deliver(self, kind: str, game: str, payload: dict) -> None:
        self.inbox.append((kind, game, payload, time.time()))


def open_remote(tmp_path, side: int):
    store = GameStore(tmp_path)
    clock = VirtualClock(0)
    host = GameHost(store, settings=load_settings(), profile=load_profile("sim"), seat=SimSeat(store, clock),
                    clock=clock, say=lambda line: None)
    session = host.open(GameRequest(new=True))
    link = FakeLink()
    remote = Remote(link, side, session.game_id)
    session.attach_computer(remote)
    return host, session, remote, link


def record(session_game, texts: list[str]) -> list[dict]:
    """The peer's messages for the actions ``texts`` from the start of ``session_game``'s game."""
    g = session_game.copy()
    while g.history:
        g.pop()
    out = []
    for seq, t in enumerate(texts):
        prev = position_hash(g)
        a = g.parse(t)
        side = g.turn
        g.push(a)
        out.append({"seq": seq, "action": t, "side": ("white", "black")[side], "hash": position_hash(g), "prev": prev})
    return out


def play_local(session, text: str) -> None:
    a = session.game.parse(text)
    session.commit(Explanation(0, (a,)), len(session.events))


def test_an_action_past_a_gap_is_held_until_the_missing_one_arrives(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=0)      # the peer plays White
    gid = session.game_id
    msgs = record(session.game, ["e2e4", "e7e5", "g1f3"])
    link.deliver("action", gid, msgs[2])                             # the peer's second move first
    remote.step(session)
    assert remote.hint() is None and session.bases.only is not None   # nothing to show: waiting
    assert ("resend", {"from": 0}) in link.sent                       # the hole is asked for
    states = [p for k, p in link.sent if k == "state"]
    assert states[-1]["have"] == 0
    link.deliver("action", gid, msgs[0])                              # the gap is filled
    remote.step(session)
    assert remote.hint() is not None and remote.hint().text == "e2e4"
    play_local(session, "e2e4")                                       # the player carries it out
    remote.step(session)
    assert remote.hint() is None                                      # this board's own turn
    play_local(session, "e7e5")
    remote.step(session)                                              # the held action, with no new message
    assert remote.hint() is not None and remote.hint().text == "g1f3"
    assert remote.fork is None
    sent = [p["seq"] for k, p in link.sent if k == "action"]
    assert sent[:2] == [0, 1]                                         # this board's record goes back
    host.close()


def test_an_action_from_another_position_stops_the_board_and_says_so(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=1)      # the peer plays Black
    gid = session.game_id
    play_local(session, "e2e4")
    remote.step(session)
    forged = record(session.game, ["d2d4", "d7d5"])[1]               # prev: a position this board never had
    link.deliver("action", gid, forged)
    remote.step(session)
    assert remote.fork is not None and remote.hint() is None
    assert any("The two boards disagree" in n for n in session.notices)
    remote.step(session)                                              # the loop's next step tells the peer
    states = [p for k, p in link.sent if k == "state"]
    assert states[-1]["fork"]                                         # the peer is told
    host.close()
