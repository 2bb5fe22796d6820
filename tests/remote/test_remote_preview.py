"""Previews (docs/remote.md, *Previews*), in process: one board's real session on the simulated
board, its peer played by the test through a link that records what is sent. A move the sender's
board holds tentatively goes out as a preview; the receiving board lights it like a remote move
at once and accepts nothing of it until the committed action arrives."""

from __future__ import annotations

import pytest
from test_remote_protocol import open_remote, play_local, record

pytestmark = pytest.mark.slow


class Hand:
    """A player at the simulated board, in the session's virtual time."""

    def __init__(self, host, session) -> None:
        self.host, self.session = host, session
        self.board = host.seat.board
        self.t = 1000

    def feed(self, ms: int = 0) -> None:
        end = self.t + ms
        while True:
            f = self.board.read(0.0)
            while f is not None:
                self.session.on_frame(f)
                f = self.board.read(0.0)
            self.session.tick(self.t)
            if self.t >= end:
                return
            self.t = min(end, self.t + 10)

    def lift(self, sq: str) -> None:
        self.board.lift(sq, self.t)
        self.feed(60)

    def place(self, sq: str) -> None:
        self.board.place(sq, self.t)
        self.feed(60)

    def move(self, uci: str) -> None:
        self.lift(uci[:2])
        self.place(uci[2:4])


def lit(session, squares) -> dict:
    """The LED layer on each of ``squares`` (their names)."""
    g = session.game.geometry
    return {sq: session.led_layers[session.layout.physical(g.parse(sq))] for sq in squares}


def pushes(session) -> list[str]:
    import json
    return [json.loads(line)["action"] for line in session.journal.path.read_text().splitlines()
            if line and json.loads(line).get("type") == "push"]


def preview(msgs, seq, action=None):
    m = msgs[seq]
    return {"seq": seq, "action": m["action"] if action is None else action, "side": m["side"], "prev": m["prev"]}


def test_a_preview_is_lit_at_once_and_accepted_only_with_its_record(tmp_path):
    """The peer (White) previews e2e4: this board lights it like a remote move before any record
    arrives. The player carries it out at once: nothing is applied and nothing is said to be
    wrong; when the committed action arrives, the board (already showing it) takes it."""
    host, session, remote, link = open_remote(tmp_path, side=0)
    hand = Hand(host, session)
    gid = session.game_id
    msgs = record(session.game, ["e2e4", "e7e5"])
    hand.feed(20)
    link.deliver("preview", gid, preview(msgs, 0))
    hand.feed(20)
    assert remote.hint() is not None and remote.hint().text == "e2e4"
    assert lit(session, ["e2", "e4"]) == {"e2": "computer from", "e4": "computer to"}
    hand.move("e2e4")                                   # the player does not wait for the record
    hand.feed(500)
    assert [a.text for a in session.game.history] == [] and pushes(session) == []
    assert not any("does not match" in n or "Not allowed" in n for n in session.notices), session.notices
    link.deliver("action", gid, msgs[0])                # the record arrives: the board already shows it
    hand.feed(20)
    assert [a.text for a in session.game.history] == ["e2e4"] and pushes(session) == ["e2e4"]
    assert session.verdict.status.name == "SETTLED" and remote.hint() is None
    hand.move("e7e5")                                   # this board's player answers
    hand.feed(100)
    assert [a.text for a in session.game.history] == ["e2e4", "e7e5"]
    assert [p["seq"] for k, p in link.sent if k == "action"] == [0, 1] and remote.fork is None
    host.close()


def test_a_preview_is_only_lit_while_the_record_is_shown_as_before(tmp_path):
    """The record arrives after the preview, the player waiting for it: the LEDs stay as they
    were, the move is said and then carried out."""
    host, session, remote, link = open_remote(tmp_path, side=0)
    hand = Hand(host, session)
    gid = session.game_id
    msgs = record(session.game, ["g1f3"])
    link.deliver("preview", gid, preview(msgs, 0))
    hand.feed(20)
    before = lit(session, ["g1", "f3"])
    assert before == {"g1": "computer from", "f3": "computer to"}
    assert not any("plays" in n for n in session.notices)           # a preview is not said
    link.deliver("action", gid, msgs[0])
    hand.feed(20)
    assert lit(session, ["g1", "f3"]) == before
    assert any("b2 (white) plays" in n for n in session.notices)
    hand.move("g1f3")
    assert [a.text for a in session.game.history] == ["g1f3"]
    host.close()


def test_a_retraction_clears_the_leds_and_a_move_carried_out_must_go_back(tmp_path):
    """The peer's player lifts the previewed piece again: the LEDs go dark. A player who had
    already carried the preview out is told to put it back; then the real move is taken."""
    host, session, remote, link = open_remote(tmp_path, side=0)
    hand = Hand(host, session)
    gid = session.game_id
    msgs = record(session.game, ["d2d4"])
    link.deliver("preview", gid, {**preview(msgs, 0, "d2d3")})
    hand.feed(20)
    assert remote.hint().text == "d2d3"
    hand.move("d2d3")
    link.deliver("preview", gid, {**preview(msgs, 0), "action": None})     # retracted
    hand.feed(20)
    assert remote.hint() is None
    assert session.verdict.status.name == "MISMATCH"
    assert any("The board does not match" in n for n in session.notices)
    assert [a.text for a in session.game.history] == []
    hand.lift("d3")
    hand.place("d2")                                    # put back as told
    assert session.verdict.status.name == "SETTLED"
    assert lit(session, ["d2", "d3"]) == {"d2": None, "d3": None}
    link.deliver("action", gid, msgs[0])                # the peer's move is d2d4 after all
    hand.feed(20)
    assert remote.hint().text == "d2d4"
    hand.move("d2d4")
    assert [a.text for a in session.game.history] == ["d2d4"] and pushes(session) == ["d2d4"]
    host.close()


def test_a_record_other_than_the_preview_is_what_counts(tmp_path):
    """The peer previewed d2d3 and committed d2d4 (its piece slid on): the player who carried
    out the preview is shown how to get to the recorded move, and only that is applied."""
    host, session, remote, link = open_remote(tmp_path, side=0)
    hand = Hand(host, session)
    gid = session.game_id
    msgs = record(session.game, ["d2d4"])
    link.deliver("preview", gid, preview(msgs, 0, "d2d3"))
    hand.feed(20)
    hand.move("d2d3")
    link.deliver("action", gid, msgs[0])
    hand.feed(20)
    assert [a.text for a in session.game.history] == []
    assert session.verdict.status.name in ("MISMATCH", "PENDING")
    hand.lift("d3")
    hand.place("d4")
    assert [a.text for a in session.game.history] == ["d2d4"] and pushes(session) == ["d2d4"]
    assert remote.fork is None
    host.close()


def test_a_preview_that_does_not_fit_is_ignored_never_a_fork(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=0)
    hand = Hand(host, session)
    gid = session.game_id
    msgs = record(session.game, ["e2e4"])
    link.deliver("preview", gid, {**preview(msgs, 0), "prev": "0" * 16})     # another position
    hand.feed(20)
    assert remote.hint() is None
    link.deliver("preview", gid, preview(msgs, 0, "e2e5"))                  # not legal
    hand.feed(20)
    assert remote.hint() is None
    link.deliver("preview", gid, {**preview(msgs, 0, "e7e5"), "seq": 1})    # not this ply
    hand.feed(20)
    assert remote.hint() is None and remote.fork is None
    assert not any(p.get("fork") for k, p in link.sent if k == "state")
    link.deliver("action", gid, msgs[0])
    hand.feed(20)
    assert remote.hint().text == "e2e4"
    host.close()


def test_the_move_held_tentatively_goes_out_as_a_preview_and_a_retraction(tmp_path):
    """This board's player (White) sets a pawn down on d3, a move the board holds (the pawn may
    go on to d4): a preview goes out at once, no action. The pawn lifted again: a retraction.
    Set down on d3 again and held to the end: the action goes out, as the record says."""
    host, session, remote, link = open_remote(tmp_path, side=1)
    hand = Hand(host, session)
    hand.feed(20)
    link.sent.clear()
    hand.lift("d2")
    hand.place("d3")                                    # 60 ms later: debounced, held
    assert session.verdict.status.name == "HOLD"
    previews = [p for k, p in link.sent if k == "preview"]
    assert [(p["seq"], p["action"]) for p in previews] == [(0, "d2d3")]
    assert previews[0]["prev"] == remote.hashes[0] and previews[0]["side"] == "white"
    assert not [p for k, p in link.sent if k == "action"]
    hand.lift("d3")                                     # not that after all
    assert [(p["seq"], p["action"]) for k, p in link.sent if k == "preview"] == [(0, "d2d3"), (0, None)]
    hand.place("d3")
    hand.feed(600)                                      # the hold runs out: committed
    assert [a.text for a in session.game.history] == ["d2d3"]
    assert [(p["seq"], p["action"]) for k, p in link.sent if k == "preview"] == \
        [(0, "d2d3"), (0, None), (0, "d2d3")]
    assert [(p["seq"], p["action"]) for k, p in link.sent if k == "action"] == [(0, "d2d3")]
    host.close()


def test_a_move_committed_at_once_sends_no_preview(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=1)
    hand = Hand(host, session)
    hand.feed(20)
    hand.move("g1f3")                                   # a knight: nothing to hold
    assert [a.text for a in session.game.history] == ["g1f3"]
    assert not [p for k, p in link.sent if k == "preview"]
    assert [p["action"] for k, p in link.sent if k == "action"] == ["g1f3"]
    host.close()


def test_no_previews_when_turned_off(tmp_path):
    host, session, remote, link = open_remote(tmp_path, side=1)
    remote.previews = False
    hand = Hand(host, session)
    hand.feed(20)
    hand.lift("d2")
    hand.place("d3")
    assert session.verdict.status.name == "HOLD"
    assert not [p for k, p in link.sent if k == "preview"]
    host.close()


def test_the_peer_going_off_line_drops_its_preview(tmp_path):
    """A retraction may be lost with the link: the peer going off line puts the LEDs out."""
    host, session, remote, link = open_remote(tmp_path, side=0)
    hand = Hand(host, session)
    gid = session.game_id
    msgs = record(session.game, ["e2e4"])
    link.deliver("preview", gid, preview(msgs, 0))
    hand.feed(20)
    assert remote.hint().text == "e2e4"
    link.inbox.append(("presence", None, {"online": False}, 0.0))
    hand.feed(20)
    assert remote.hint() is None and lit(session, ["e2", "e4"]) == {"e2": None, "e4": None}
    host.close()
