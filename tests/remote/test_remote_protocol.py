"""The remote player's protocol on one board, in process: a link that only records what is sent
and hands the test's messages in as the peer's (no broker), the real session on the simulated
board. What the broker adds (the ACL, the processes) is test_remote_games.py's."""

from __future__ import annotations

import threading
import time

import pytest

from board_driver.host.game_host import GameHost, GameRequest, SimSeat
from board_driver.journal import GameStore
from board_driver.referee.opponent import Expect, Wait
from board_driver.referee.reconcile import Explanation
from board_driver.remote.protocol import position_hash
from board_driver.remote.side import Remote
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
    session.apply_decision(remote.decide(session))
    assert remote.hint() is None and session.expected is not None   # nothing to show: waiting
    assert ("resend", {"from": 0}) in link.sent                       # the hole is asked for
    states = [p for k, p in link.sent if k == "state"]
    assert states[-1]["have"] == 0
    link.deliver("action", gid, msgs[0])                              # the gap is filled
    session.apply_decision(remote.decide(session))
    assert remote.hint() is not None and remote.hint().text == "e2e4"
    play_local(session, "e2e4")                                       # the player carries it out
    session.apply_decision(remote.decide(session))
    assert remote.hint() is None                                      # this board's own turn
    play_local(session, "e7e5")
    session.apply_decision(remote.decide(session))                                              # the held action, with no new message
    assert remote.hint() is not None and remote.hint().text == "g1f3"
    assert remote.fork is None
    sent = [p["seq"] for k, p in link.sent if k == "action"]
    assert sent[:2] == [0, 1]                                         # this board's record goes back
    host.close()


def test_an_action_from_another_position_stops_the_board_and_says_so(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=1)      # the peer plays Black
    gid = session.game_id
    play_local(session, "e2e4")
    session.apply_decision(remote.decide(session))
    link.deliver("action", gid, record(session.game, ["e2e4"])[0])  # the peer heard e2e4 ...
    forged = record(session.game, ["d2d4", "d7d5"])[1]               # ... and answers from a position this board never had
    link.deliver("action", gid, forged)
    session.apply_decision(remote.decide(session))
    assert remote.fork is not None and remote.hint() is None
    assert any("The two boards disagree" in n for n in session.notices)
    session.apply_decision(remote.decide(session))                                              # the loop's next step tells the peer
    states = [p for k, p in link.sent if k == "state"]
    assert states[-1]["fork"]                                         # the peer is told
    host.close()


def sent(link, kind: str) -> list:
    return [p for k, p in link.sent if k == kind]


def moves_to(session, remote, link, texts: list[str]) -> None:
    """Play ``texts`` from the start: this board's player's own, and the peer's as it sends
    them (carried out by the player once shown)."""
    msgs = record(session.game, texts)
    for seq, t in enumerate(texts):
        if (seq % 2) == remote.side:
            link.deliver("action", session.game_id, msgs[seq])
            session.apply_decision(remote.decide(session))
            assert remote.hint() is not None and remote.hint().text == t
        play_local(session, t)
        session.apply_decision(remote.decide(session))


def test_a_takeback_asked_here_is_made_once_the_peer_accepts(tmp_path):
    from board_driver.journal import load_any
    host, session, remote, link = open_remote(tmp_path, side=1)      # the peer plays Black
    moves_to(session, remote, link, ["e2e4", "e7e5"])
    replies = session.command("takeback")
    assert replies == ["Asked b2 to take back e2e4, e7e5: waiting for the answer ('decline' withdraws the request)."]
    session.apply_decision(remote.decide(session))
    ask = sent(link, "ask")[-1]
    assert ask["what"] == "takeback" and ask["n"] == 2 and ask["to"] == 0
    assert len(session.game.history) == 2                             # nothing taken back before the answer
    old = record(session.game, ["e2e4", "e7e5"])
    link.deliver("answer", session.game_id, {"id": ask["id"], "accept": True})
    link.deliver("action", session.game_id, old[1])                   # the peer's older record, resent meanwhile
    session.apply_decision(remote.decide(session))
    assert session.game.history == []
    assert any("b2 accepts your takeback: e7e5, e2e4." in n for n in session.notices)
    kinds = [(k, p.get("n") if k == "state" and p else p) for k, p in link.sent if k in ("state", "ask")]
    assert kinds.index(("state", 0)) < kinds.index(("ask", None))     # the record taken back is said first
    assert 1 not in remote.peer_actions and remote.hint() is None
    pops = [r for r in load_any(tmp_path / "games" / f"{session.game_id}.jsonl").records if r["type"] == "pop"]
    assert [(r["action"], r["by"]) for r in pops] == [("e7e5", "b2"), ("e2e4", "b2")]
    host.close()


def test_the_peer_s_takeback_is_asked_here_and_made_after_the_peer_has_made_it(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=1)      # the peer plays Black
    moves_to(session, remote, link, ["e2e4", "e7e5"])
    g = session.game
    ask = {"id": "takeback-2-1", "what": "takeback", "n": 2, "hash": position_hash(g), "to": 1, "side": "black"}
    link.deliver("ask", session.game_id, ask)
    session.apply_decision(remote.decide(session))
    assert session.notices[-1] == "b2 (black) asks to take back e7e5: say accept or decline."
    assert remote.requests()["asked"] == {"what": "takeback", "text": "b2 (black) asks to take back e7e5"}
    assert session.command("accept") == ["Accepted b2's takeback request: it is carried out on both boards."]
    assert sent(link, "answer")[-1]["accept"] is True and len(g.history) == 2
    assert session.expected == Expect.waiting(Wait.AGREED) and not session.bases.base(0).actions     # no action is accepted meanwhile
    after_e4 = record(g, ["e2e4"])[0]["hash"]
    link.deliver("state", session.game_id, {"n": 1, "hash": after_e4, "have": 1})
    link.deliver("ask", session.game_id, None)                        # the peer's request is gone
    session.apply_decision(remote.decide(session))
    assert [a.text for a in g.history] == ["e2e4"]
    assert any(n.startswith("Taken back as b2 asked: e7e5.") for n in session.notices)
    assert sent(link, "answer")[-1] is None and remote.requests()["asked"] is None
    host.close()


def test_a_takeback_asked_across_a_move_lapses_and_changes_nothing(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=1)      # the peer plays Black
    moves_to(session, remote, link, ["e2e4", "e7e5"])
    g = session.game
    ask = {"id": "takeback-2-1", "what": "takeback", "n": 2, "hash": position_hash(g), "to": 1, "side": "black"}
    play_local(session, "g1f3")                                       # the player moved before the request came
    session.apply_decision(remote.decide(session))
    link.deliver("ask", session.game_id, ask)
    session.apply_decision(remote.decide(session))
    assert sent(link, "answer")[-1] == {**sent(link, "answer")[-1], "id": ask["id"], "accept": False, "why": "stale"}
    assert "b2 asked for a takeback after your move: it lapsed." in session.notices
    assert [a.text for a in g.history] == ["e2e4", "e7e5", "g1f3"]
    with pytest.raises(Exception, match="has asked nothing"):
        session.command("accept")
    host.close()


def test_a_draw_offered_here_ends_the_game_once_the_peer_accepts_and_a_move_withdraws_it(tmp_path):
    from board_driver.journal import load_any
    host, session, remote, link = open_remote(tmp_path, side=1)
    moves_to(session, remote, link, ["e2e4", "e7e5"])
    session.command("draw")
    session.apply_decision(remote.decide(session))
    first = sent(link, "ask")[-1]
    assert first["what"] == "draw" and first["n"] == 2
    play_local(session, "g1f3")                                       # the offerer's next move withdraws it
    session.apply_decision(remote.decide(session))
    assert sent(link, "ask")[-1] is None and "Your draw offer is withdrawn: a move was made." in session.notices
    link.deliver("answer", session.game_id, {"id": first["id"], "accept": True})   # too late: nothing happens
    session.apply_decision(remote.decide(session))
    assert session.outcome() is None
    moves_to_peer = record(session.game, ["e2e4", "e7e5", "g1f3", "b8c6"])[3]
    link.deliver("action", session.game_id, moves_to_peer)
    session.apply_decision(remote.decide(session))
    play_local(session, "b8c6")
    session.apply_decision(remote.decide(session))
    session.command("draw")
    session.apply_decision(remote.decide(session))
    offer = sent(link, "ask")[-1]
    link.deliver("answer", session.game_id, {"id": offer["id"], "accept": True})
    session.apply_decision(remote.decide(session))
    out = session.outcome()
    assert (out.result, out.reason) == ("1/2-1/2", "agreement")
    assert sent(link, "state")[-1]["result"] == ["1/2-1/2", "agreement"]
    rec = load_any(tmp_path / "games" / f"{session.game_id}.jsonl")
    assert (rec.result, rec.reason) == ("1/2-1/2", "agreement")
    host.close()


def test_the_peer_s_takeback_of_a_move_not_yet_carried_out_here_unlights_it(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=0)      # the peer plays White
    g = session.game
    msgs = record(g, ["e2e4"])
    link.deliver("action", session.game_id, msgs[0])
    session.apply_decision(remote.decide(session))
    assert remote.hint() is not None and remote.hint().text == "e2e4"  # shown, not yet carried out
    link.deliver("ask", session.game_id, {"id": "takeback-1-1", "what": "takeback", "n": 1, "hash": msgs[0]["hash"],
                                          "to": 0, "side": "white"})
    session.apply_decision(remote.decide(session))
    assert session.notices[-1] == "b2 (white) asks to take back e2e4: say accept or decline."
    session.command("accept")
    assert remote.hint() is None and session.expected == Expect.waiting(Wait.AGREED)
    link.deliver("state", session.game_id, {"n": 0, "hash": position_hash(g), "have": 0})
    session.apply_decision(remote.decide(session))
    assert g.history == [] and remote.hint() is None and 0 not in remote.peer_actions
    assert "Taken back as b2 asked: e2e4 (1 not yet made here)." in session.notices
    link.deliver("action", session.game_id, record(g, ["d2d4"])[0])   # the peer plays another move
    session.apply_decision(remote.decide(session))
    assert remote.hint() is not None and remote.hint().text == "d2d4" and remote.fork is None
    host.close()


def test_a_hint_while_the_other_board_is_to_move_names_that_board(tmp_path):
    from board_driver.referee.commands import CommandError
    host, session, remote, link = open_remote(tmp_path, side=0)      # the peer (b2) plays White
    with pytest.raises(CommandError, match=r"^hint: b2 \(white\) is to move$"):
        session.command("hint")
    host.close()
