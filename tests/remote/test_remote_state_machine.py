"""The remote protocol's state machine (board_driver/remote/protocol.py) on its own, in virtual
time: two boards' protocols wired to each other through an in-memory network the test controls
(it drops, delays, reorders and repeats messages), each board's record an engine game that its
player plays on. No broker, no session, no thread, no wall clock: what a player at either board
would notice is asserted -- which actions both records end with, what is accepted, what is
said. What the broker adds is test_remote_games.py's; the session's side, test_remote_protocol.py's."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from board_driver.config import load_variant
from board_driver.referee.commands import CommandError
from board_driver.referee.opponent import Decision, Expect, Wait
from board_driver.remote import protocol, signing
from board_driver.remote.protocol import (
    AdjustClock, Adopt, AgreeDraw, Arrived, LocalGame, PeerSync, PeerResigns, Say, SayMove, Send, TakeBack, drive)
from engine.contract import Termination
from engine.game import new_game

GAME = "g1"
WHITE, BLACK = 0, 1


class Net:
    """The broker between two boards, in virtual time: what is sent waits in ``pending`` until
    the test delivers it (``deliver``), loses it (``drop``) or shuffles it. Retained messages are
    kept per topic and handed to a board again when it reconnects."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.boards: dict[str, Board] = {}
        self.pending: list[tuple[str, Arrived]] = []        # (to, message)
        self.retained: dict[tuple[str, str], Arrived] = {}  # (to, kind) -> the last retained
        self.lose: Callable[[str, Send], bool] = lambda frm, send: False   # True: the message is lost

    def send(self, frm: str, to: str, s: Send) -> bool:
        board = self.boards[frm]
        if not board.connected:
            return False
        if self.lose(frm, s):
            return True                     # it went out; the network lost it
        m = Arrived(s.kind, s.game, s.payload, self.now)
        if s.retain:
            self.retained[(to, s.kind)] = m
        self.pending.append((to, m))
        return True

    def deliver(self, to: str | None = None, kinds: tuple[str, ...] | None = None) -> int:
        """Hand what waits to its board (only to ``to``, only ``kinds`` when given), in order."""
        keep, n = [], 0
        for dest, m in self.pending:
            if (to is None or dest == to) and (kinds is None or m.kind in kinds) and self.boards[dest].connected:
                self.boards[dest].inbox.append(Arrived(m.kind, m.game, m.payload, self.now))
                n += 1
            else:
                keep.append((dest, m))
        self.pending = keep
        return n

    def tick(self, seconds: float = 0.05) -> None:
        self.now += seconds

    def settle(self, rounds: int = 40) -> None:
        """Deliver and step both boards until nothing is under way."""
        for _ in range(rounds):
            self.tick()
            moved = self.deliver()
            for b in self.boards.values():
                b.step()
            if not moved and not self.pending:
                return


KEY = bytes(range(32))


@pytest.fixture(autouse=True, params=["signed", "unsigned"])
def mode(request):
    """Every test runs with the game's messages signed (as games are played now) and unsigned
    (a game agreed before they were)."""
    Board.key = KEY if request.param == "signed" else None
    yield request.param
    Board.key = None


class Board:
    """One board: its engine game (the record), its protocol, what its player was told, and what
    the reconciler accepts of the peer's side. Effects are carried out as the adapter does."""

    key: bytes | None = None

    def __init__(self, net: Net, name: str, peer: str, peer_side: int, variant: str = "orthodox") -> None:
        self.net, self.name, self.peer = net, name, peer
        self.game = new_game(load_variant(variant))
        self.sync = PeerSync(peer_side, GAME, peer, key=self.key, me=name)
        self.connected = True
        self.inbox: list[Arrived] = []
        self.said: list[str] = []
        self.expect: Expect | None = None
        self.clock: tuple[int, int] | None = None
        self.adjusted: list[tuple[int, int, int]] = []      # (ply, side, ms) journaled adjustments
        net.boards[name] = self

    # -- the adapter's part --------------------------------------------------------------------
    def here(self) -> LocalGame:
        return LocalGame(game=self.game.copy(), connected=self.connected, outcome=self.game.outcome(),
                         expected=self.expect, clock=self.clock)

    def run(self, steps):
        return drive(steps, self.carry_out)

    def carry_out(self, e) -> object:
        if isinstance(e, Send):
            return self.net.send(self.name, self.peer, e)
        if isinstance(e, Say):
            self.said.append(e.text)
            return None
        if isinstance(e, SayMove):
            self.said.append(f"{e.head} {e.action.text}")
            return None
        g = self.game
        if isinstance(e, TakeBack):
            for _ in range(e.plies):
                g.pop()
        elif isinstance(e, AgreeDraw):
            g.resign(g.turn, Termination.AGREEMENT, draw=True)
        elif isinstance(e, PeerResigns):
            g.resign(e.side)
        elif isinstance(e, AdjustClock):
            assert self.clock is not None
            left = list(self.clock)
            left[e.side] = e.ms
            self.clock = (left[0], left[1])
            self.adjusted.append((e.ply, e.side, e.ms))
        elif isinstance(e, Adopt):
            while len(g.history) > e.common:
                g.pop()
            for a in e.actions:
                g.push(a)
                self.run(self.sync.synced(self.here(), self.net.now))
        else:
            raise AssertionError(e)
        return self.here()

    def step(self) -> None:
        """What the session's update does: ask for a decision and apply it, again while that
        changed something (the peer's silent actions, one a step)."""
        self.sync.arrive(self.inbox)
        self.inbox = []
        for _ in range(64):
            d: Decision = self.run(self.sync.step(self.here(), self.net.now))
            self.said.extend(d.notices)
            changed = d.changed
            for s in d.silent:
                self.said.append(s.notice)
                self.game.push(s.action)
                changed = True
            if not d.keep_expect:
                changed |= d.expect != self.expect
                self.expect = d.expect
            if not changed:
                return

    # -- the player at this board ----------------------------------------------------------------
    def play(self, text: str) -> None:
        """The player's own move, committed (a peer's move is carried out with :meth:`carry`)."""
        assert self.game.turn != self.sync.side, f"{self.name}: not this board's turn"
        self.game.push(self.game.parse(text))
        self.step()

    def carry(self) -> str:
        """The player carries out the peer's move the LEDs show (its record arrived)."""
        e = self.expect
        assert e is not None and e.action is not None and not e.preview, f"{self.name}: nothing to carry out ({e})"
        self.game.push(e.action)
        self.step()
        return e.action.text

    def hold(self, text: str | None) -> None:
        """The player has set ``text`` down and the board holds it (None: lifted again)."""
        a = self.game.parse(text) if text is not None else None
        self.run(self.sync.held(self.here(), self.net.now, a))

    def command(self, what: str, *args):
        return self.run(getattr(self.sync, what)(self.here(), self.net.now, *args))

    @property
    def record(self) -> list[str]:
        return [a.text for a in self.game.history]


def signed(frm: str, to: str, kind: str, payload: dict, key: bytes | None = None) -> dict:
    """``payload`` as board ``frm``'s protocol sends it to ``to`` in this run (signed with the
    game's key, or ``key``, when games are signed)."""
    key = key or Board.key
    if key is None:
        return payload
    return {**payload, "mac": signing.mac(key, sender=frm, receiver=to, game=GAME, kind=kind, payload=payload)}


@pytest.fixture
def boards():
    """b1's player plays White (b1's protocol: the peer plays Black), b2's plays Black."""
    net = Net()
    b1 = Board(net, "b1", "b2", BLACK)
    b2 = Board(net, "b2", "b1", WHITE)
    net.settle()
    return net, b1, b2


def play_line(net: Net, white: Board, black: Board, texts: list[str]) -> None:
    """Each move played on its player's board, carried out on the other once shown."""
    for i, t in enumerate(texts):
        mover, other = (white, black) if i % 2 == 0 else (black, white)
        mover.play(t)
        net.settle()
        assert other.carry() == t
        net.settle()


# -- the record: in order, nothing lost ------------------------------------------------------------

def test_a_move_is_lit_on_the_other_board_and_both_records_agree(boards):
    net, b1, b2 = boards
    assert b2.expect == Expect.waiting(Wait.THINKING)
    assert "Waiting for b1 (white) to move." in b2.said
    b1.play("e2e4")
    net.settle()
    assert b2.expect == Expect.play(b2.game.parse("e2e4"))
    assert b2.said[-1] == "b1 (white) plays e2e4"
    b2.carry()
    b2.play("e7e5")
    net.settle()
    b1.carry()
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5"]
    assert b1.sync.fork is None and b2.sync.fork is None


def lose_once(net: Net, frm: str, seq: int) -> list[Send]:
    """Lose ``frm``'s first message of its action ``seq``; the list fills with what was lost."""
    lost: list[Send] = []

    def lose(sender: str, s: Send) -> bool:
        if sender == frm and s.kind == "action" and (s.payload or {}).get("seq") == seq and not lost:
            lost.append(s)
            return True
        return False
    net.lose = lose
    return lost


def test_a_lost_action_is_asked_for_again_from_the_peer_s_state(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    lost = lose_once(net, "b1", 2)
    net.tick(2.0)
    b1.play("g1f3")                 # its action is lost; b1's retained state says it has 3
    net.settle()
    assert lost
    assert b2.carry() == "g1f3"     # b2 asked for it again and b1 sent it
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5", "g1f3"]
    assert not any("disagree" in line for line in b1.said + b2.said)


def test_an_action_past_a_gap_is_held_until_the_missing_one_arrives():
    """Cost Progressive: White's second turn is two pawn moves. The first is lost on the way: the
    second, heard alone, is not lit; the first is asked for again, then both are carried out."""
    net = Net()
    b1 = Board(net, "b1", "b2", BLACK, variant="cost-progressive")
    b2 = Board(net, "b2", "b1", WHITE, variant="cost-progressive")
    net.settle()
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    lost = lose_once(net, "b1", 2)
    net.tick(2.0)
    b1.play("d2d4")
    b1.play("c2c4")
    net.deliver()
    b2.step()
    assert lost and b2.expect == Expect.waiting(Wait.THINKING)     # c2c4 heard, d2d4 not: nothing lit
    net.settle()
    assert b2.carry() == "d2d4"
    net.settle()
    assert b2.carry() == "c2c4"
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5", "d2d4", "c2c4"]


def test_the_peer_s_silent_action_is_applied_at_once_and_said():
    """Cost Progressive: White ends its second turn after one move. The end of the turn is
    nothing the board can see: once the move is carried out it is applied at once, and said."""
    net = Net()
    b1 = Board(net, "b1", "b2", BLACK, variant="cost-progressive")
    b2 = Board(net, "b2", "b1", WHITE, variant="cost-progressive")
    net.settle()
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    b1.play("d2d4")
    b1.play("end")
    net.settle()
    assert b2.carry() == "d2d4"
    assert b2.record == ["e2e4", "e7e5", "d2d4", "end"] and "b1 (white): ends its turn." in b2.said
    assert b2.expect is None                            # b2's own turn: any legal action of its player
    net.settle()
    assert b1.record == b2.record


def test_messages_repeated_and_reordered_change_nothing(boards):
    net, b1, b2 = boards
    b1.play("e2e4")
    net.settle()
    b2.carry()
    b2.play("c7c5")
    net.settle()
    b1.carry()
    b1.play("g1f3")
    b1.step()
    # b1's messages to b2, twice each and the last first
    msgs = [(to, m) for to, m in net.pending if to == "b2"]
    net.pending = [(to, m) for to, m in net.pending if to != "b2"] + list(reversed(msgs)) + msgs
    net.deliver()
    b2.step()
    net.settle()
    assert b2.carry() == "g1f3"
    net.settle()
    assert b1.record == b2.record == ["e2e4", "c7c5", "g1f3"]
    assert not any("disagree" in line for line in b1.said + b2.said)


def test_a_board_away_catches_up_from_the_retained_state_when_back(boards):
    net, b1, b2 = boards
    b2.connected = False
    b1.play("d2d4")
    net.settle()
    assert b2.expect == Expect.waiting(Wait.THINKING)
    net.pending = [(to, m) for to, m in net.pending if to != "b2"]     # lost while b2 was away
    b2.connected = True
    b2.inbox += [Arrived("connected", None, {}, net.now)] + [m for (to, _), m in net.retained.items() if to == "b2"]
    net.settle()
    for _ in range(20):
        net.tick(0.3)
        net.deliver()
        b1.step()
        b2.step()
    assert b2.carry() == "d2d4"
    net.settle()
    assert b1.record == b2.record == ["d2d4"]


# -- forks and remote adopt ------------------------------------------------------------------------

def test_a_different_move_at_the_same_ply_stops_both_boards_and_adopt_joins_them(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    b2.game.push(b2.game.parse("g1f3"))        # b2's record went its own way: White's move made there
    b2.game.push(b2.game.parse("b8c6"))
    b1.play("d2d4")
    net.settle()
    net.settle()
    for b in (b1, b2):
        assert b.expect == Expect.waiting(Wait.FORKED)
        assert any("disagree" in line for line in b.said)
    assert any("part at action 3" in line and "The longer record is b2's" in line for line in b1.said)
    with pytest.raises(CommandError, match="disagree"):
        b1.command("offer_draw")
    reply = b1.command("adopt")
    assert reply.startswith("Took b2's record: 4 actions (1 of this board's taken back)")
    net.settle()
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5", "g1f3", "b8c6"]
    assert any("agree again" in line for line in b1.said + b2.said)
    b1.play("f1b5")
    net.settle()
    assert b2.carry() == "f1b5"


def test_adopt_with_nothing_longer_there_changes_nothing(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4"])
    assert b2.command("adopt") == "Nothing to adopt: this board's record is as long as the peer's."
    assert b2.record == ["e2e4"]


# -- previews ----------------------------------------------------------------------------------------

def test_a_preview_is_lit_retracted_replaced_then_its_record_arrives(boards):
    net, b1, b2 = boards
    b1.hold("e2e4")
    net.settle()
    assert b2.expect == Expect.previewed(b2.game.parse("e2e4"))        # lit, its commit withheld
    assert b2.sync.hint() is not None and b2.record == []
    b1.hold(None)                                                       # lifted again
    net.settle()
    assert b2.expect == Expect.waiting(Wait.THINKING) and b2.sync.hint() is None
    b1.hold("d2d4")
    net.settle()
    assert b2.expect == Expect.previewed(b2.game.parse("d2d4"))
    b1.hold("d2d3")                                                     # slid on: replaced
    net.settle()
    assert b2.expect == Expect.previewed(b2.game.parse("d2d3"))
    b1.play("d2d3")                                                     # committed: the record goes out
    net.settle()
    assert b2.expect == Expect.play(b2.game.parse("d2d3"))
    assert b2.carry() == "d2d3"
    net.settle()
    assert b1.record == b2.record == ["d2d3"]                           # no preview is ever a move


def test_a_preview_from_another_position_is_not_lit_and_no_fork(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    net.pending.append(("b2", Arrived("preview", GAME, signed("b1", "b2", "preview", {
        "seq": 2, "action": "g1f3", "side": "white", "prev": "0" * 16, "t": net.now}), net.now)))
    net.settle()
    assert b2.expect == Expect.waiting(Wait.THINKING) and b2.sync.fork is None


# -- takebacks ----------------------------------------------------------------------------------------

def test_a_takeback_accepted_is_made_on_both_boards(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5", "g1f3", "b8c6"])
    assert b1.command("ask_takeback", 2).startswith("Asked b2 to take back g1f3, b8c6")
    net.settle()
    assert b2.said[-1] == "b1 (white) asks to take back g1f3, b8c6: say accept or decline."
    assert b2.sync.requests()["asked"]["what"] == "takeback"
    assert b2.command("answer", True) == "Accepted b1's takeback request: it is carried out on both boards."
    b2.step()
    assert b2.expect == Expect.waiting(Wait.AGREED)                    # nothing moves until b1 has made it
    net.settle()
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5"]
    assert "b2 accepts your takeback: b8c6, g1f3." in b1.said
    assert "Taken back as b1 asked: b8c6, g1f3." in b2.said
    play_line(net, b1, b2, ["d2d4"])                                    # play goes on from there
    assert b1.record == b2.record == ["e2e4", "e7e5", "d2d4"]


def test_the_peer_s_older_record_resent_during_a_takeback_is_no_news(boards):
    """b2's record up to b8c6, sent again (a reconnection) just behind its acceptance, reaches b1
    after b1 has taken back: it is dropped, not lit and not a fork, and play goes on."""
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5", "g1f3", "b8c6"])
    b1.command("ask_takeback", 2)
    net.settle()
    b2.command("answer", True)
    b2.step()
    old = [Arrived("action", GAME, signed("b2", "b1", "action", {"seq": seq, "action": a, **hashes, "t": net.now}),
                   net.now) for seq, a, hashes in resent_record(b2)]
    answer = [(to, m) for to, m in net.pending if m.kind == "answer"]
    rest = [(to, m) for to, m in net.pending if m.kind != "answer"]
    net.pending = answer + [("b1", m) for m in old] + rest
    net.settle()
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5"]
    assert not any("disagree" in line for line in b1.said + b2.said)
    play_line(net, b1, b2, ["d2d4", "d7d5"])
    assert b1.record == b2.record == ["e2e4", "e7e5", "d2d4", "d7d5"]


def resent_record(b: Board) -> list[tuple[int, str, dict]]:
    """``b``'s record as its action messages say it: (seq, action, {"side", "hash", "prev"})."""
    g = b.game.copy()
    while g.history:
        g.pop()
    out = []
    for seq, a in enumerate(b.game.history):
        prev = protocol.position_hash(g)
        side = g.turn
        g.push(a)
        out.append((seq, a.text, {"side": ("white", "black")[side], "hash": protocol.position_hash(g), "prev": prev}))
    return out


def test_a_takeback_declined_changes_nothing(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    b2.command("ask_takeback", 1)
    net.settle()
    assert b1.command("answer", False) == "Declined b2's takeback request."
    net.settle()
    assert "b1 declines your takeback request." in b2.said
    assert b1.record == b2.record == ["e2e4", "e7e5"]
    assert b2.sync.requests()["asking"] is None


def test_a_takeback_asked_across_a_move_lapses(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    b2.command("ask_takeback", 1)
    b1.play("g1f3")                         # b1's player moved before the request came
    net.settle()
    net.settle()
    assert "b2 asked for a takeback after your move: it lapsed." in b1.said
    assert any("came too late and lapsed" in line or "withdrawn" in line for line in b2.said)
    assert b2.carry() == "g1f3"
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5", "g1f3"]


# -- draws and resignations -----------------------------------------------------------------------------

def test_a_draw_offered_and_accepted_ends_the_game_on_both_boards(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    assert b1.command("offer_draw").startswith("Offered b2 a draw")
    net.settle()
    assert b2.said[-1] == "b1 (white) offers a draw: say accept or decline."
    b2.command("answer", True)
    net.settle()
    net.settle()
    for b in (b1, b2):
        out = b.game.outcome()
        assert out is not None and (out.result, out.reason) == ("1/2-1/2", "agreement")
    assert "b2 accepts your draw offer: drawn by agreement, 1/2-1/2." in b1.said
    assert "b1 and you agree to a draw: drawn by agreement, 1/2-1/2." in b2.said


def test_a_draw_offer_lapses_with_the_offerer_s_next_move(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    b1.command("offer_draw")
    b1.play("g1f3")
    net.settle()
    assert "Your draw offer is withdrawn: a move was made." in b1.said
    assert b1.game.outcome() is None and b2.game.outcome() is None


def test_a_resignation_ends_the_game_on_both_boards(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    b2.game.resign(BLACK)                   # b2's player resigns (the session's resign)
    b2.step()
    net.settle()
    assert "b2 (black) resigns: 1-0." in b1.said
    assert b1.game.outcome().result == b2.game.outcome().result == "1-0"


def test_a_resignation_heard_before_the_last_move_waits_for_it(boards):
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4"])
    b2.play("e7e5")
    b2.game.resign(BLACK)
    b2.step()
    resign = [(to, m) for to, m in net.pending if m.kind == "action" and "resign" in m.payload]
    rest = [(to, m) for to, m in net.pending if (to, m) not in resign]
    net.pending = resign + rest                                     # the resignation first
    net.deliver("b1", kinds=("action",))
    b1.step()
    assert b1.game.outcome() is None                                # e7e5 not carried out yet
    net.settle()
    b1.carry()
    net.settle()
    assert b1.game.outcome() is not None and b1.game.outcome().result == "1-0"


# -- clocks ----------------------------------------------------------------------------------------------

def test_the_peer_s_clock_reading_goes_with_its_move_and_is_taken_as_is(boards):
    net, b1, b2 = boards
    b2.clock = (300_000, 300_000)
    b1.clock = (291_500, 300_000)           # b1's player thought 8.5 s
    b1.play("e2e4")
    net.settle()
    b2.clock = (290_000, 300_000)           # b2's own clock ran on while the move travelled
    b2.carry()
    net.settle()
    assert b2.adjusted == [(0, WHITE, 291_500)] and b2.clock == (291_500, 300_000)


# -- the state machine is pure -------------------------------------------------------------------------

def test_the_protocol_reads_no_clock_and_runs_no_thread_or_network():
    tree = ast.parse(Path(protocol.__file__).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    banned = {"time", "threading", "queue", "datetime", "paho", "asyncio", "socket", "random"}
    assert not {n for n in names if n.split(".")[0] in banned}
    assert not [n for n in names if n.startswith(("board_driver.referee.session", "board_driver.remote.transport",
                                                    "board_driver.club"))]


# -- signed games: only the boards themselves put anything on the other board ---------------------------

def third_party(net: Net, to: str, kind: str, payload: dict) -> None:
    """A client that writes on the broker as the other board (no ACL, or its password), without
    the game's key."""
    net.pending.append((to, Arrived(kind, GAME, payload, net.now)))


@pytest.mark.parametrize("mac", ["none", "wrong key"])
def test_a_forged_legal_action_with_the_right_hashes_is_dropped_and_play_goes_on(boards, mode, mac):
    if mode != "signed":
        pytest.skip("a game agreed before messages were signed takes what arrives")
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    forged = {"seq": 2, "action": "d2d4", "side": "white", "hash": "", "prev": b2.sync.hashes[2], "t": net.now + 5}
    g = b2.game.copy()
    g.push(g.parse("d2d4"))
    forged["hash"] = protocol.position_hash(g)
    if mac == "wrong key":
        forged = signed("b1", "b2", "action", forged, key=bytes(32))
    third_party(net, "b2", "action", forged)
    third_party(net, "b2", "state", {"n": 3, "hash": "0" * 16, "have": 2, "fork": "forged", "t": net.now + 5})
    net.settle()
    assert b2.expect == Expect.waiting(Wait.THINKING)                  # nothing lit, nothing stopped
    assert b2.sync.fork is None and not b2.sync.stopped and b2.sync.dropped == 2
    assert [line for line in b2.said if line.startswith("Dropped")] == [
        "Dropped an action message not signed by b1's board: it changes nothing, play goes on."]
    play_line(net, b1, b2, ["g1f3", "b8c6"])                          # the genuine move applies
    assert b1.record == b2.record == ["e2e4", "e7e5", "g1f3", "b8c6"]


def test_a_record_ahead_that_does_not_follow_is_dropped_and_the_real_ones_apply(boards, mode):
    """An action two past the record with a bogus hash (unsigned, or signed by the peer but not
    following its action before it) is dropped when it shows it does not follow; the real actions
    arriving after it apply and the game goes on."""
    net, b1, b2 = boards
    play_line(net, b1, b2, ["e2e4", "e7e5"])
    bogus = {"seq": 3, "action": "b8c6", "side": "black", "hash": "1" * 16, "prev": "2" * 16, "t": net.now}
    third_party(net, "b1", "action", signed("b2", "b1", "action", bogus))
    net.settle()
    b1.play("g1f3")
    net.settle()
    assert b2.carry() == "g1f3"
    net.settle()
    b2.play("b8c6")
    net.settle()
    assert b1.carry() == "b8c6"
    net.settle()
    play_line(net, b1, b2, ["f1c4", "g8f6"])
    assert b1.record == b2.record == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]
    assert not b1.sync.stopped and not b2.sync.stopped
    assert not any("disagree" in line for line in b1.said + b2.said)


def test_an_old_signed_record_sent_again_after_a_takeback_is_ignored(boards, mode):
    if mode != "signed":
        pytest.skip("a game agreed before messages were signed cannot tell a copy from the peer's word")
    net, b1, b2 = boards
    heard: list[Arrived] = []
    play_line(net, b1, b2, ["e2e4", "e7e5", "g1f3", "b8c6"])
    real_send = net.send

    def keep(frm: str, to: str, s: Send) -> bool:
        if frm == "b2" and s.kind in ("action", "state"):
            heard.append(Arrived(s.kind, s.game, s.payload, net.now))
        return real_send(frm, to, s)
    net.send = keep         # type: ignore[method-assign]
    net.tick(1.0)
    net.boards["b2"].sync.state_sent = None
    net.boards["b2"].sync.sent = 0                                     # b2 says its whole record again
    net.settle()
    old = [m for m in heard if m.kind == "action" and m.payload["seq"] == 3]
    old_state = [m for m in heard if m.kind == "state"][-1]
    assert old
    net.send = real_send    # type: ignore[method-assign]
    b1.command("ask_takeback", 2)
    net.settle()
    b2.command("answer", True)
    net.settle()
    net.settle()
    play_line(net, b1, b2, ["d2d4", "d7d5"])
    for m in old + [old_state]:                                        # someone sends them again
        net.pending.append(("b1", m))
    net.settle()
    assert b1.record == b2.record == ["e2e4", "e7e5", "d2d4", "d7d5"]
    assert not b1.sync.stopped and b1.sync.dropped >= 2
    play_line(net, b1, b2, ["c2c4"])
    assert b1.record == b2.record == ["e2e4", "e7e5", "d2d4", "d7d5", "c2c4"]
