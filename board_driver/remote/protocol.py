"""The remote game's protocol on one board, as a state machine: messages and a clock in,
messages to send and decisions out (docs/remote.md). No wall clock, no threads, no network
and no session here: :mod:`.side` feeds it what the link heard and the time, and carries out
what it returns.

What it does (:meth:`PeerSync.step`, :meth:`~PeerSync.held`, the commands) is a generator of
:data:`Effect` values, each answered by the caller:

* :class:`Send` a message to the peer (answered with True when it went out, False when the link
  is down: it is sent again once the link is back);
* :class:`Say` words to this board's player, :class:`SayMove` the peer's move to carry out;
* :class:`TakeBack`, :class:`AgreeDraw`, :class:`PeerResigns`, :class:`AdjustClock`,
  :class:`Adopt`: what this board's game is to do for the peer, answered with the game as it
  then stands (a new :class:`LocalGame`).

So each change is carried out before the protocol reads the game again, words come in the order
they are meant, and a test can play two of these against each other in virtual time
(tests/remote/test_remote_state_machine.py).

Nothing lost, nothing forked:

* every action either board has committed goes out as ``{"seq": ply, "action", "side", "hash",
  "prev"}``: ``seq`` its index in the game, ``hash`` the first 16 hex digits of the sha256 of the
  position's FEN after it, ``prev`` the same before it. Each board sends its whole record (the
  peer's actions it carried out too), so each checks the other's positions ply by ply;
* an action is taken only in order: one whose ``seq`` is past the end of this board's record
  is held and the missing ones asked for (``resend``); one whose ``prev`` is not this board's
  position is refused as a fork once it follows the peer's record heard in order (held past a
  gap, it is dropped and asked for again, never a fork);
* in a signed game (``key``: agreed at the invitation, :mod:`.signing`) every message carries
  ``"mac"`` and one not signed with the key, or a copy of an older one, is dropped and said,
  never taken (:meth:`PeerSync._authentic`);
* each board keeps a retained ``state`` (``n`` actions, the position's ``hash``, ``have``: how
  many of the peer's record it has heard): a board that was away (link, broker, power) learns
  from it what it missed and asks for it, and the peer re-sends what the state says was never
  heard. The board's own journal is the record; the broker holds nothing that matters;
* when the two positions differ at a ply both have, both boards stop (no action of the remote
  side is accepted), say so, and ``remote adopt`` on the board whose record is shorter takes
  the longer record;
* a takeback or a draw is asked of the peer's player (``takeback``, ``draw``; ``accept``,
  ``decline``) and made on both boards only once accepted, on the record the request names
  (see *takebacks and draw offers* below);
* a move this board holds tentatively (a hold, a prompt with a default) goes out at once as a
  *preview* (``.../GAME/preview``, retracted with ``"action": null``): the peer lights it like a
  remote move and accepts nothing of it until the action's record arrives (``Expect.previewed``).
  A preview is never part of the record.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, Callable, TypeVar, Union

from board_driver.opponents.computer import describe_silent
from board_driver.referee.commands import CommandError
from board_driver.referee.opponent import Decision, Expect, Silent, Wait
from board_driver.referee.texts import COLOR
from board_driver.remote import signing
from engine.contract import ActionKind, Termination
from engine.game import Action, Outcome

RESEND_EVERY = 1.0      # seconds between two requests for the same missing actions
DROP_SAY_EVERY = 30.0   # seconds between two notices of the peer's messages dropped
GAME_KINDS = frozenset({"action", "state", "resend", "preview", "ask", "answer"})     # signed in a signed game

Game = Any              # an engine game of any family (engine.game.BoardView and its family's moves)


def _a(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def position_hash(game: Game) -> str:
    return hashlib.sha256(game.fen().encode()).hexdigest()[:16]


# -- what goes in ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Arrived:
    """A message the peer sent (``payload`` None: a retained message emptied), or the link's own
    word (``connected``, ``presence``); ``at``: when it arrived, seconds."""

    kind: str
    game: str | None
    payload: Any
    at: float


@dataclass(frozen=True)
class LocalGame:
    """This board's game as the protocol needs it, a value made afresh at every step: the
    ``game`` (a copy: its record, whose turn, the parser), whether the link is up, the outcome,
    whether the player is putting pieces right (``recover``) or has a move held (``tentative``),
    what the reconciler accepts of the peer's side now (``expected``) and each side's time left
    (ms, None without a clock)."""

    game: Game
    connected: bool = True
    outcome: Outcome | None = None
    recover: bool = False
    tentative: bool = False
    expected: Expect | None = None
    clock: tuple[int, int] | None = None


# -- what comes out ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Send:
    """A message to the peer (answered True once it went out)."""

    kind: str
    payload: dict | None
    game: str | None
    retain: bool = False


@dataclass(frozen=True)
class Say:
    """Words to this board's player (``log``: to the log too)."""

    text: str
    log: bool = False


@dataclass(frozen=True)
class SayMove:
    """The peer's move, to be said as what the player carries out (``head``: who plays it)."""

    action: Action
    head: str


@dataclass(frozen=True)
class TakeBack:
    """Take back the last ``plies`` actions, as the peer (``by``) agreed."""

    plies: int
    by: str


@dataclass(frozen=True)
class AgreeDraw:
    """The game is drawn by agreement with the peer (``by``)."""

    by: str


@dataclass(frozen=True)
class PeerResigns:
    """``side`` resigns (the peer's player, said by the peer's board ``by``)."""

    side: int
    by: str


@dataclass(frozen=True)
class AdjustClock:
    """``side``'s time left is ``ms``: the peer's own reading of its player's time, heard with its
    action at ``ply``."""

    side: int
    ms: int
    ply: int
    by: str


@dataclass(frozen=True)
class Adopt:
    """Go on from the peer's record: this board's actions after the first ``common`` are taken
    back and ``actions`` applied in their place."""

    common: int
    actions: tuple[Action, ...]


Effect = Union[Send, Say, SayMove, TakeBack, AgreeDraw, PeerResigns, AdjustClock, Adopt]

T = TypeVar("T")
Steps = Generator[Effect, object, T]


def drive(steps: Steps[T], carry_out: Callable[[Effect], object]) -> T:
    """Run one of :class:`PeerSync`'s answers to its end: each effect it yields is carried out
    (``carry_out``, which answers what the protocol needs to go on: the game as it is after a
    takeback, say) and the answer sent back in. Returns what the protocol returns."""
    reply: object = None
    while True:
        try:
            effect = steps.send(reply)
        except StopIteration as done:
            return done.value
        reply = carry_out(effect)


class PeerSync:
    """One remote game's protocol on this board: ``side`` is the side the peer plays."""

    def __init__(self, side: int, game_id: str, peer: str, *, key: bytes | None = None, me: str = "") -> None:
        self.side = side
        self.game_id = game_id
        self.peer = peer
        self.me = me
        self.key = key                      # the game's key (.signing): every message signed and checked; None: unsigned
        self.dropped = 0                    # the peer's messages dropped (unsigned, replayed, out of line)
        self.drop_said_at = -DROP_SAY_EVERY
        self.drop_unsaid = 0
        self.last_t: dict[str, float] = {}  # kind -> the latest "t" taken from the peer (a signed game's replays)
        self.t_floor = -math.inf            # actions older than this were taken back: never news again
        self.here: LocalGame | None = None  # this board's game, as last fed
        self.hashes: list[str] = []         # position hash after 0, 1, ... n plies of this board's record
        self.texts: list[str] = []          # this board's record, as action texts
        self.sides: list[int] = []          # who played each
        self.clks: dict[int, int] = {}      # seq -> its mover's time left just after it, this board's clock
        self.pending_resign: dict | None = None
        self.started = False                # the link's first connection was taken in
        self.items: list[Arrived] = []      # what arrived, not yet taken in
        self.peer_actions: dict[int, dict] = {}     # seq -> the peer's message (its record as heard)
        self.peer_n = 0                     # the peer's record length (its state)
        self.peer_have = 0                  # how much of this board's record the peer has heard
        self.peer_result: Any = None
        self.sent = 0                       # this board's actions published so far (this connection)
        self.shown: Action | None = None    # the peer's action lit for the player
        self.waiting_said = False
        self.fork: str | None = None        # why this board found the two records to part
        self.fork_at = 0                    # at which ply
        self.peer_fork: str | None = None   # the peer found them to part (its state says so)
        self.peer_hash: str | None = None   # the peer's position hash after its peer_n actions
        self.asked_at = -RESEND_EVERY       # when missing actions were last asked for
        self.state_sent: tuple | None = None
        self.result_sent: Any = None
        self.errors: list[str] = []
        self.received_at: dict[int, float] = {}     # seq -> time the peer's action arrived
        self.shown_at: dict[int, float] = {}        # seq -> time it was lit for the player
        self.sent_at: dict[int, float] = {}         # seq -> time this board first sent it
        self.now = 0.0
        self.init_requests()
        self.init_previews()

    # -- feeding it -----------------------------------------------------------------------------------
    def arrive(self, items: Sequence[Arrived]) -> None:
        """What the link heard, taken in at the next step."""
        self.items.extend(items)

    def feed(self, here: LocalGame, now: float) -> None:
        self.here = here
        self.now = now

    @property
    def game(self) -> Game:
        assert self.here is not None
        return self.here.game

    @property
    def stopped(self) -> bool:
        """The two boards disagree (either found it): nothing of the remote side is accepted."""
        return self.fork is not None or self.peer_fork is not None

    def hint(self) -> Action | None:
        return self.shown if self.shown is not None else self.preview_action

    def _change(self, effect: Effect) -> Steps[LocalGame]:
        here = yield effect
        assert isinstance(here, LocalGame)
        self.here = here
        return here

    def _send(self, kind: str, payload: dict | None, *, retain: bool = False) -> Steps[bool]:
        if self.key is not None:
            if payload is None:             # a retained message emptied: said signed, so it cannot be forged
                payload = {"cleared": True, "t": self.now}
            payload = {**payload, "mac": signing.mac(self.key, sender=self.me, receiver=self.peer, game=self.game_id,
                                                  kind=kind, payload=payload)}
        ok = yield Send(kind, payload, self.game_id, retain)
        return bool(ok)

    # -- signed games: what the peer did not sign, or said before, is dropped and reported --------------
    def _authentic(self) -> Steps[None]:
        """Drop what arrived for this game that the peer's board did not sign with the game's key,
        and what it signed long ago and someone sends again (its ``t`` older than the latest of its
        kind taken): each dropped message is counted and said (one notice and log line at most
        every 30 s), and changes nothing."""
        if self.key is None:
            return
        keep: list[Arrived] = []
        for item in self.items:
            if item.game != self.game_id or item.kind not in GAME_KINDS:
                keep.append(item)
                continue
            p = item.payload
            if not signing.verify(self.key, sender=self.peer, receiver=self.me, game=self.game_id, kind=item.kind,
                               payload=p):
                yield from self._drop(f"{_a(item.kind)} message not signed by {self.peer}'s board")
                continue
            if item.kind == "resend" or (item.kind == "action" and "resign" in p):
                keep.append(item)           # said again, they change nothing: no time needed
                continue
            t = p.get("t")
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
                yield from self._drop(f"{_a(item.kind)} message without its time")
                continue
            if item.kind != "action":
                if t < self.last_t.get(item.kind, -math.inf):
                    yield from self._drop(f"an old {item.kind} message sent again")
                    continue
                self.last_t[item.kind] = t
            keep.append(item)
        self.items = keep

    def _drop(self, what: str) -> Steps[None]:
        self.dropped += 1
        self.drop_unsaid += 1
        if self.now - self.drop_said_at < DROP_SAY_EVERY:
            return
        n, self.drop_unsaid = self.drop_unsaid, 0
        self.drop_said_at = self.now
        more = f" ({n - 1} more since the last notice)" if n > 1 else ""
        yield Say(f"Dropped {what}{more}: it changes nothing, play goes on.", log=True)

    def _over(self) -> bool:
        assert self.here is not None
        return self.here.outcome is not None

    # -- a step ---------------------------------------------------------------------------------------
    def step(self, here: LocalGame, now: float) -> Steps[Decision]:
        """Take in what the peer said and say what the session is to do: the peer's next silent
        action to apply (one a step), its army to record, or what the reconciler accepts of its
        side -- its action once its record arrived, its preview, or nothing while it is to move,
        while the boards disagree or while an accepted request waits for the asking board.
        Requests, resignations and clock readings from the peer come out as effects first."""
        self.feed(here, now)
        yield from self._authentic()
        yield from self._sync()
        changed = yield from self._requests_in()
        changed |= yield from self._take()
        assert self.here is not None
        cur = self.here.expected
        if self._settle_preview() and cur is not None and cur.preview:
            cur = None                      # the step says what is accepted now
        yield from self._publish()

        def only(want: Expect | None) -> Decision:
            return Decision(expect=want, changed=changed or want != cur)

        if (yield from self._requests_out()):   # a request accepted here: nothing moves until it is carried out
            self.shown = None
            return only(Expect.waiting(Wait.AGREED))
        if self.stopped:
            self.shown = None
            return only(Expect.waiting(Wait.FORKED))
        here = self.here
        g = here.game
        if here.recover or here.outcome is not None or g.turn != self.side or here.tentative:
            self.shown = None
            self.waiting_said = False
            return only(None)
        n = len(g.history)
        msg = self.peer_actions.get(n)
        a = (yield from self._action(msg)) if msg is not None else None
        if a is not None and a.silent:      # the peer's silent actions, applied at once (one a step)
            note = (f"{self.peer} ({COLOR[g.turn]}) sets up its army: {a.text}." if a.kind is ActionKind.SETUP
                    else f"{self.peer} ({COLOR[g.turn]}): {describe_silent(a)}.")
            return Decision(silent=(Silent(a, note, setup=a.kind is ActionKind.SETUP),), expect=cur, changed=True)
        if a is None:
            lit = self._show_preview(n)
            if lit is not None:
                return only(lit)
            self.shown = None
            if not self.waiting_said:
                self.waiting_said = True
                yield Say(f"Waiting for {self.peer} ({COLOR[self.side]}) to move.")
            return only(Expect.waiting(Wait.THINKING))
        self.waiting_said = False
        want = Expect.play(a)
        if cur != want:
            self.shown = a
            self.shown_at.setdefault(n, self.now)
            yield SayMove(a, f"{self.peer} ({COLOR[g.turn]}) plays")
        return only(want)

    def _action(self, msg: dict) -> Steps[Action | None]:
        g = self.game
        n = len(g.history)
        ahead = n > self._heard()           # held past a gap: not yet known to follow the peer's record
        why = None
        if msg.get("prev") != self.hashes[n]:
            why = f"its position before action {n + 1} is not this board's"
        else:
            try:
                return g.parse(msg["action"])
            except Exception as exc:    # the engine's parse errors are of many kinds: all mean "not legal here"
                why = f"its action {n + 1} ({msg.get('action')!r}) is not legal here: {exc}"
        if ahead:                           # dropped, never a fork: the real one may still come
            del self.peer_actions[n]
            yield from self._drop(f"{self.peer}'s action {n + 1}, heard before its action {n} and not following "
                                  f"this board's position")
            yield from self._ask(self._heard())
            return None
        yield from self._forked(n, why)
        return None

    # -- this board's record --------------------------------------------------------------------------
    def synced(self, here: LocalGame, now: float) -> Steps[None]:
        """Take in this board's game as it now stands (after an action adopted from the peer)."""
        self.feed(here, now)
        yield from self._sync()

    def _sync(self) -> Steps[None]:
        """Keep the per-ply hashes in step with the game (a commit adds, a takeback removes)."""
        g = self.game
        hist = g.history
        if not self.hashes:
            self._rebuild(g)
            return
        n = len(hist)
        k = min(len(self.texts), n)
        while k > 0 and self.texts[k - 1] != hist[k - 1].text:
            k -= 1
        if k == n and len(self.texts) == n:
            return
        if n - k == 1:
            del self.texts[k:], self.hashes[k + 1:], self.sides[k:]
            c = g.copy()
            c.pop()
            self.sides.append(c.turn)
            self.texts.append(hist[-1].text)
            self.hashes.append(position_hash(g))
            yield from self._clocks(k)
        elif n == k:
            del self.texts[k:], self.hashes[k + 1:], self.sides[k:]
        else:
            self._rebuild(g)
        self.sent = min(self.sent, k)
        yield from self._check_peer()

    def _clocks(self, seq: int) -> Steps[None]:
        """Each side's clock is its own board's: this board's reading of its player's time goes
        out with the action, and the peer's reading of its own time, heard with its action, is
        this board's for the peer's side (journaled as an adjustment), so the time an action
        spends on its way (and being carried out here) is charged to neither player."""
        assert self.here is not None
        left = self.here.clock
        if left is None:
            return
        mover = self.sides[seq]
        if mover != self.side:
            self.clks[seq] = left[mover]
            return
        clk = (self.peer_actions.get(seq) or {}).get("clk")
        if type(clk) is int and clk >= 0 and clk != left[mover]:
            yield from self._change(AdjustClock(mover, clk, seq, self.peer))

    def _rebuild(self, g: Game) -> None:
        c = g.copy()
        popped = []
        while c.history:
            popped.append(c.pop())
        self.hashes = [position_hash(c)]
        self.texts = []
        self.sides = []
        for a in reversed(popped):
            self.sides.append(c.turn)
            c.push(a)
            self.texts.append(a.text)
            self.hashes.append(position_hash(c))

    def _publish(self) -> Steps[None]:
        here = self.here
        assert here is not None
        if not here.connected:
            return
        g = here.game
        n = len(self.texts)
        for seq in range(self.sent, n):
            msg = {"seq": seq, "action": self.texts[seq], "side": COLOR[self.sides[seq]],
                   "hash": self.hashes[seq + 1], "prev": self.hashes[seq], "t": self.now}
            if seq in self.clks:
                msg["clk"] = self.clks[seq]
            if not (yield from self._send("action", msg)):
                return
            self.sent_at.setdefault(seq, self.now)
        self.sent = n
        out = here.outcome
        result = (out.result, out.reason) if out is not None else None
        if result != self.result_sent and out is not None and out.termination.name == "RESIGNATION":
            color = 1 - ("1-0", "0-1").index(out.result) if out.result in ("1-0", "0-1") else g.turn
            yield from self._send("action", {"seq": n, "resign": COLOR[color], "hash": self.hashes[n]})
        self.result_sent = result
        have = self._heard()
        state = (n, self.hashes[n], have, result, self.fork)
        if state != self.state_sent:
            if (yield from self._send("state", {"n": n, "hash": self.hashes[n], "have": have,
                                                "result": list(result) if result else None, "fork": self.fork,
                                                "t": self.now}, retain=True)):
                self.state_sent = state

    def _heard(self) -> int:
        """How many of the peer's record this board has heard, in order."""
        n = 0
        while n in self.peer_actions:
            n += 1
        return n


    # -- what the peer says -----------------------------------------------------------------------------
    def _take(self) -> Steps[bool]:
        changed = False
        items, self.items = self.items, []
        assert self.here is not None
        if not self.started and self.here.connected:
            self.started = True
            items.insert(0, Arrived("connected", None, {}, self.now))
        for item in items:
            kind, payload = item.kind, item.payload
            if item.game is not None and item.game != self.game_id:
                continue
            if kind == "connected":
                self._preview_link_changed()
                self.sent = min(self.sent, self.peer_have)
                self.state_sent = None
                yield from self._ask(0 if not self.peer_actions else self._heard(), force=True)
            elif kind == "action" and payload is not None:
                changed |= yield from self._on_action(payload, item.at)
            elif kind == "state" and payload is not None:
                yield from self._on_state(payload)
            elif kind == "resend" and payload is not None:
                frm = payload.get("from")
                if type(frm) is int and frm >= 0:
                    self.sent = min(self.sent, frm)
                    self.peer_have = min(self.peer_have, frm)
            elif kind == "preview" and payload is not None:
                self._on_preview(payload)
            elif kind == "presence" and payload is not None:
                self._preview_link_changed()
                yield Say(f"{self.peer} is {'online' if payload.get('online') else 'offline'}.")
        yield from self._check_peer()
        p = self.pending_resign
        if p is not None and p["seq"] == len(self.game.history) and self.fork is None:
            changed |= yield from self._on_resign(p)
        return changed

    def _on_action(self, p: dict, at: float) -> Steps[bool]:
        seq = p.get("seq")
        if type(seq) is not int or seq < 0:
            return False
        if "resign" in p:
            return (yield from self._on_resign(p))
        if not isinstance(p.get("action"), str) or not isinstance(p.get("hash"), str):
            return False
        old = self.peer_actions.get(seq)
        if self.key is not None and (p["t"] <= self.t_floor or (old is not None and p["t"] < old.get("t", 0))):
            if old is None or old.get("hash") != p["hash"]:
                yield from self._drop(f"{self.peer}'s old action {seq + 1} sent again")
            return False
        if old is not None and old.get("hash") != p["hash"]:
            # the peer's record changed at this ply (a takeback it made): the later word wins
            for k in [k for k in self.peer_actions if k >= seq]:
                del self.peer_actions[k]
        heard = self._heard()
        before = self.peer_actions.get(seq - 1)
        after = self.peer_actions.get(seq + 1)
        if before is not None and seq > heard and p.get("prev") != before.get("hash"):
            # held past a gap, and not following what came before it: not the peer's record
            yield from self._drop(f"{self.peer}'s action {seq + 1}, which does not follow its action {seq}")
            return False
        if after is not None and seq + 1 > heard and after.get("prev") != p["hash"]:
            for k in [k for k in self.peer_actions if k > seq]:     # held ahead, and this one shows it was not the peer's
                del self.peer_actions[k]
            yield from self._drop(f"{self.peer}'s action {seq + 2}, which does not follow its action {seq + 1}")
        self.peer_actions[seq] = p
        self.received_at.setdefault(seq, at)
        heard = self._heard()
        if seq >= heard:                    # a hole before it: never taken out of order
            yield from self._ask(heard)
        return False

    def _on_state(self, p: dict) -> Steps[None]:
        n, have = p.get("n"), p.get("have")
        if type(n) is not int or type(have) is not int:
            return
        self.peer_n = n
        self.peer_have = have
        self.peer_result = p.get("result")
        h = p.get("hash")
        self.peer_hash = h if isinstance(h, str) else None
        fork = p.get("fork") if isinstance(p.get("fork"), str) else None
        if fork != self.peer_fork:
            self.peer_fork = fork
            if fork is not None:
                yield Say(f"{self.peer} says the two boards disagree: {fork}. Play stops.")
            elif self.fork is None:
                yield Say(f"{self.peer} agrees again: play goes on.")
        if n > self._heard():
            yield from self._ask(self._heard())
        if have < len(self.texts):
            self.sent = min(self.sent, have)
        if isinstance(h, str) and n < len(self.hashes) and self.hashes[n] != h and n == self._heard():
            yield from self._forked(n, f"its position after {n} actions is not this board's")

    def _on_resign(self, p: dict) -> Steps[bool]:
        color = p.get("resign")
        if color not in COLOR or self._over():
            return False
        if p["seq"] != len(self.game.history):
            self.pending_resign = p         # taken once this board has caught up
            return False
        self.pending_resign = None
        here = yield from self._change(PeerResigns(COLOR.index(color), self.peer))
        out = here.outcome
        assert out is not None
        self.result_sent = (out.result, out.reason)
        yield Say(f"{self.peer} ({color}) resigns: {out.result}.")
        return True

    def _check_peer(self) -> Steps[None]:
        """The peer's record against this board's, ply by ply where both have it. A fork found
        here ends once the two agree again (the other board adopted this one's record)."""
        if self.fork is not None:
            if self._agree():
                self.fork = None
                self.state_sent = None
                yield Say(f"The two boards agree again ({self.peer}'s record and this board's): play goes on.")
            return
        heard = self._heard()
        for seq in sorted(self.peer_actions):
            if seq >= len(self.texts) or seq >= heard:     # one held past a gap is checked once it follows
                break
            p = self.peer_actions[seq]
            if p.get("hash") != self.hashes[seq + 1]:
                why = (f"action {seq + 1} differs ({p.get('action')} there, {self.texts[seq]} here)"
                       if p.get("action") != self.texts[seq] else
                       f"action {seq + 1} ({self.texts[seq]}) leads to another position there")
                yield from self._forked(seq, why)
                return

    def _agree(self) -> bool:
        """Everything heard from the peer fits this board's record, past the ply they parted at."""
        n = len(self.texts)
        if self._heard() <= self.fork_at:
            return False
        for seq, p in self.peer_actions.items():
            if seq < n and p.get("hash") != self.hashes[seq + 1]:
                return False
            if seq == n and p.get("prev") != self.hashes[n]:
                return False
        return self.peer_hash is None or self.peer_n >= len(self.hashes) or self.hashes[self.peer_n] == self.peer_hash

    def _ask(self, frm: int, force: bool = False) -> Steps[None]:
        if not force and self.now - self.asked_at < RESEND_EVERY:
            return
        self.asked_at = self.now
        yield from self._send("resend", {"from": frm})

    def _forked(self, seq: int, why: str) -> Steps[None]:
        if self.fork is not None:
            return
        self.fork = why
        self.fork_at = seq
        n, peer_n = len(self.texts), max(self.peer_n, self._heard())
        if peer_n == n:
            advice = "The records are as long: 'remote adopt' on either board goes on from the other's."
        else:
            longer = self.peer if peer_n > n else "this board"
            advice = f"The longer record is {longer}'s: 'remote adopt' on the other board goes on from it."
        msg = (f"The two boards disagree: {self.peer}'s record ({peer_n} actions) and this board's "
               f"({n} actions) part at action {seq + 1}: {why}. Play stops. {advice}")
        self.errors.append(msg)
        yield Say(msg, log=True)

    # -- previews: the move the sender's board holds tentatively, lit on this board at once -----------
    def init_previews(self) -> None:
        self.previews = True                # send this board's tentative moves as previews
        self.preview_sent: tuple[int, str | None] | None = None    # (seq, action text or None: retracted)
        self.peer_preview: dict | None = None       # the peer's latest preview (or retraction) heard
        self.previewing: tuple[int, Action] | None = None   # the peer's preview lit now: (seq, action)
        self.preview_sent_at: dict[int, float] = {}     # seq -> time this board first previewed it
        self.preview_shown_at: dict[int, float] = {}    # seq -> time the peer's preview was first lit

    @property
    def preview_action(self) -> Action | None:
        return self.previewing[1] if self.previewing is not None else None

    def held(self, here: LocalGame, now: float, action: Action | None) -> Steps[None]:
        """After every verdict: ``action`` is the move this board's player has set down and the
        board holds tentatively (a hold, a prompt with a default), None when there is none. It
        goes to the peer as a preview (``.../GAME/preview``: ``{"seq", "action", "side", "prev",
        "t"}``); once it is no longer held (the piece lifted again) without being committed, a
        retraction (``"action": null``). A preview is never part of the record: only the
        committed action, sent as before, changes the game on either board."""
        self.feed(here, now)
        if not self.previews or not here.connected:
            return
        g = here.game
        n = len(g.history)
        a = action
        if self.stopped or g.turn == self.side or here.recover or here.outcome is not None:
            a = None
        last = self.preview_sent
        if a is None:
            if last is None or last[1] is None:
                return
            if last[0] < n:                 # committed: the action itself went out instead
                self.preview_sent = None
                return
            key: tuple[int, str | None] = (n, None)
        else:
            key = (n, a.text)
            if key == last:
                return
        prev = self.hashes[n] if len(self.hashes) == n + 1 else position_hash(g)
        msg = {"seq": n, "action": key[1], "side": COLOR[g.turn], "prev": prev, "t": now}
        if (yield from self._send("preview", msg)):
            self.preview_sent = key
            if a is not None:
                self.preview_sent_at.setdefault(n, now)

    def _on_preview(self, p: dict) -> None:
        seq = p.get("seq")
        if type(seq) is not int or seq < 0:
            return
        self.peer_preview = p               # the latest word: a preview, or its retraction

    def _preview_link_changed(self) -> None:
        """A (re)connection or the peer going off line: what was said before may not hold any
        more (a retraction lost on the way). The peer's preview is dropped, and this board's
        own is said again at the next verdict."""
        self.peer_preview = None
        self.preview_sent = None

    def _previews_taken_back(self, to: int) -> None:
        """A takeback to ``to`` plies: what was previewed from there on is played afresh."""
        for times in (self.preview_sent_at, self.preview_shown_at):
            for k in [k for k in times if k >= to]:
                del times[k]
        if self.peer_preview is not None and self.peer_preview.get("seq", 0) >= to:
            self.peer_preview = None
        if self.preview_sent is not None and self.preview_sent[0] >= to:
            self.preview_sent = None

    def _settle_preview(self) -> bool:
        """The preview lit ends when the record's action for its ply arrives, when it is retracted
        or replaced, when a request accepted here waits to be carried out, or when the game moved
        on. True when what is accepted changed."""
        if self.previewing is None:
            return False
        seq, a = self.previewing
        here = self.here
        assert here is not None
        g = here.game
        p = self.peer_preview
        if (not self.stopped and self.agreed is None and seq == len(g.history) and seq not in self.peer_actions
                and g.turn == self.side and not here.recover and here.outcome is None
                and p is not None and p.get("seq") == seq and p.get("action") == a.text):
            return False
        self.previewing = None
        return True

    def _show_preview(self, n: int) -> Expect | None:
        """The peer's preview of its action ``n`` (no record of it yet): lit like a remote move,
        followed by the reconciler, its commit withheld. None when there is none to show (the
        step then waits as before); else what the reconciler is to accept."""
        p = self.peer_preview
        if (p is None or p.get("seq") != n or n in self.peer_actions or not isinstance(p.get("action"), str)
                or p.get("prev") != self.hashes[n]):
            return None
        if self.previewing is None or self.previewing[0] != n or self.previewing[1].text != p["action"]:
            try:
                a = self.game.parse(p["action"])
            except Exception:       # not legal here: a preview is only a hint, never a fork
                return None
            if a.silent or a.kind is ActionKind.SETUP:
                return None
            self.previewing = (n, a)
            self.preview_shown_at.setdefault(n, self.now)
        self.shown = None
        return Expect.previewed(self.previewing[1])

    # -- the remote command ------------------------------------------------------------------------------
    def adopt(self, here: LocalGame, now: float) -> Steps[str]:
        """Go on from the peer's record: this board's actions after the common part are taken
        back (journaled as pops) and the peer's applied; the board is then put right as the
        LEDs show."""
        self.feed(here, now)
        g = here.game
        heard = self._heard()
        if heard <= len(self.texts) and not self.stopped:
            return "Nothing to adopt: this board's record is as long as the peer's."
        common = 0
        while common < min(heard, len(self.texts)) and self.peer_actions[common].get("hash") == self.hashes[common + 1]:
            common += 1
        self.fork = None
        self.texts, self.hashes, self.sides = self.texts[:common], self.hashes[:common + 1], self.sides[:common]
        theirs = []
        c = g.copy()
        while len(c.history) > common:
            c.pop()
        for seq in range(common, heard):    # parsed in turn, each in the position before it
            a = c.parse(self.peer_actions[seq]["action"])
            c.push(a)
            theirs.append(a)
        mine = len(g.history) - common
        yield from self._change(Adopt(common, tuple(theirs)))
        self.state_sent = None
        return (f"Took {self.peer}'s record: {heard} actions ({mine} of this board's taken back). "
                f"Put the pieces as the LEDs show.")

    # -- takebacks and draw offers: asked of the other board's player -------------------------------
    #
    # One request open per board, ``{"id", "what": "takeback" | "draw", "n", "hash", "to"}``, retained
    # on ``.../GAME/ask`` (emptied once answered or withdrawn): ``n`` and ``hash`` name the record it
    # applies to (its length and the position after it), ``to`` the record's length once a takeback
    # is made. The other board answers on ``.../GAME/answer`` (retained, ``{"id", "accept", "why"}``).
    # A request is answered only on the record it names: a board whose record has gone past it (its
    # player moved meanwhile) declines it at once ("stale"), and the asker withdraws it when its own
    # record moves on (its player moved: a draw offer lapses with the offerer's next move). The
    # answering board, having accepted, accepts no action until the asking board has carried it out
    # (its state shows the record taken back, or the agreed draw): only then does it do the same.
    # So both boards take back the same actions, or end in the same draw, or nothing changes.

    def init_requests(self) -> None:
        self.asking: dict | None = None     # this board's open request
        self.asked: dict | None = None      # the peer's open request, not yet answered here
        self.asked_said: str | None = None  # its id once the player was asked
        self.agreed: dict | None = None     # the peer's request accepted here, not yet carried out there
        self.agreed_said = False
        self.answer_out: dict | None = None     # this board's answer (retained until the request is gone)
        self.undo_to: int | None = None     # taken back to here: the peer's older record is no news
        self.req_sent: dict[str, Any] = {"ask": (), "answer": ()}

    def ask_takeback(self, here: LocalGame, now: float, plies: int) -> Steps[str]:
        """The ``takeback`` command: ask the peer's player to take back the last ``plies``
        actions (the answer comes later)."""
        self.feed(here, now)
        yield from self._sync()
        self._can_ask("takeback")
        if not here.game.history:
            raise CommandError("takeback: no action to take back")
        n = len(self.texts)
        to = n - plies
        self.asking = self._request("takeback", n, to)
        return (f"Asked {self.peer} to take back {', '.join(self.texts[to:])}: waiting for the answer "
                f"('decline' withdraws the request).")

    def offer_draw(self, here: LocalGame, now: float) -> Steps[str]:
        """The ``draw`` command: offer the peer's player a draw (withdrawn by this side's next move)."""
        self.feed(here, now)
        yield from self._sync()
        self._can_ask("draw")
        n = len(self.texts)
        self.asking = self._request("draw", n, n)
        return f"Offered {self.peer} a draw: waiting for the answer (your next move withdraws it)."

    def _can_ask(self, what: str) -> None:
        if self._over():
            raise CommandError(f"{what}: the game is over")
        if self.stopped:
            raise CommandError(f"{what}: the two boards disagree; first 'remote adopt' (see the notices)")
        if self.asking is not None:
            raise CommandError(f"{what}: {self.peer} has not answered your {self._what(self.asking)} yet "
                               f"('decline' withdraws it)")
        if self.agreed is not None:
            raise CommandError(f"{what}: first {self.peer} carries out what you accepted")

    def _request(self, what: str, n: int, to: int) -> dict:
        return {"id": f"{what}-{n}-{int(self.now * 1000)}", "what": what, "n": n, "hash": self.hashes[n],
                "to": to, "side": COLOR[1 - self.side], "t": self.now}

    @staticmethod
    def _what(req: dict) -> str:
        return "draw offer" if req.get("what") == "draw" else "takeback request"

    def answer(self, here: LocalGame, now: float, accept: bool) -> Steps[str]:
        """The ``accept`` / ``decline`` commands: the peer's open request; ``decline`` with none
        open withdraws this board's own."""
        self.feed(here, now)
        yield from self._sync()
        req = self.asked
        if req is None or self.asked_said != req["id"]:
            if not accept and self.asking is not None:
                what = self._what(self.asking)
                self.asking = None
                return f"Your {what} is withdrawn."
            raise CommandError(f"{'accept' if accept else 'decline'}: {self.peer} has asked nothing")
        self.asked = None
        if not accept:
            self.answer_out = {"id": req["id"], "accept": False, "why": "declined", "t": now}
            return f"Declined {self.peer}'s {self._what(req)}."
        if self._fits(req) != "ok":
            self.answer_out = {"id": req["id"], "accept": False, "why": "stale", "t": now}
            return f"{self.peer}'s {self._what(req)} no longer fits the game here: declined."
        if self.asking is not None:     # one agreement at a time: this board's own request goes
            yield Say(f"Your {self._what(self.asking)} is withdrawn.")
            self.asking = None
        self.agreed, self.agreed_said = req, False
        self.answer_out = {"id": req["id"], "accept": True, "t": now}
        return f"Accepted {self.peer}'s {self._what(req)}: it is carried out on both boards."

    def _fits(self, req: dict) -> str:
        """The peer's request against this board's record: "ok", "wait" (this board has not yet
        carried out all the actions it names) or "stale" (this board's record went past it, or
        parted from it)."""
        n, to = req["n"], req["to"]
        mine = len(self.texts)
        if self._over() or self.stopped:
            return "stale"
        if mine > n:
            return "stale"
        if mine < n:
            if req["what"] == "draw" or mine < to or self._heard() < n:
                return "wait"                   # the peer's last actions are still to be carried out here
            seen = self.peer_actions[n - 1].get("hash") if n > 0 else self.hashes[0]
            return "ok" if seen == req["hash"] else "stale"
        return "ok" if self.hashes[n] == req["hash"] else "stale"

    def _requests_in(self) -> Steps[bool]:
        """What the peer asked and answered, taken in the order it arrived (before the rest of
        its messages: an agreed takeback carried out here drops the older record behind it)."""
        items = self.items
        keep: list[Arrived] = []
        changed = False
        for item in items:
            kind, p = item.kind, item.payload
            if item.game is not None and item.game != self.game_id:
                continue
            if kind == "connected":
                self.req_sent = {"ask": (), "answer": ()}      # said again: the broker may have forgotten
            elif kind == "ask":
                yield from self._on_ask(p)
                continue
            elif kind == "answer":
                if isinstance(p, dict) and (yield from self._on_answer(p)):
                    changed = True
                    to = self.undo_to
                    keep = [k for k in keep if not self._older(k, to)]
                continue
            elif kind == "state" and isinstance(p, dict):
                if self.agreed is not None and self._carried_out_there(p):
                    changed |= yield from self._carry_out(self.agreed, asked_here=False)
                    assert self.agreed is not None
                    to = self.agreed["to"]
                    self.agreed = None
                    keep = [k for k in keep if not self._older(k, to)]
                elif self.undo_to is not None and type(p.get("n")) is int and p["n"] <= self.undo_to:
                    self.undo_to = None         # the peer has taken back too: its record is news again
            elif kind == "action" and self._older(item, self.undo_to):
                continue
            keep.append(item)
        self.items = keep
        return changed

    @staticmethod
    def _older(item: Arrived, to: int | None) -> bool:
        """An action of the record taken back (a resignation is never one)."""
        p = item.payload
        return (to is not None and item.kind == "action" and isinstance(p, dict) and "resign" not in p
                and type(p.get("seq")) is int and p["seq"] >= to)

    def _on_ask(self, p: Any) -> Steps[None]:
        if not isinstance(p, dict) or p.get("cleared") is True:     # emptied: answered, or withdrawn by the peer
            asked = self.asked if self.asked is not None and self.asked_said == self.asked["id"] else None
            gone = self.agreed if self.agreed is not None else asked
            if gone is not None:
                yield Say(f"{self.peer} withdrew its {self._what(gone)}.")
            self.asked = self.agreed = None
            self.asked_said = None
            self.answer_out = None
            return
        if (not isinstance(p.get("id"), str) or p.get("what") not in ("takeback", "draw")
                or type(p.get("n")) is not int or type(p.get("to")) is not int or not isinstance(p.get("hash"), str)
                or not 0 <= p["to"] <= p["n"]):
            return
        if any(r is not None and r["id"] == p["id"] for r in (self.asked, self.agreed)):
            return                              # heard again (a reconnection)
        if self.answer_out is not None and self.answer_out["id"] == p["id"]:
            return                              # answered already
        self.asked, self.asked_said = p, None
        self.agreed = None
        self.answer_out = None

    def _on_answer(self, p: dict) -> Steps[bool]:
        req = self.asking
        if req is None or p.get("id") != req["id"]:
            return False                        # an answer to a request withdrawn meanwhile
        self.asking = None
        if not p.get("accept"):
            if p.get("why") == "stale":
                yield Say(f"{self.peer} had moved on: your {self._what(req)} came too late "
                          f"and lapsed (ask again if you still want it).")
            else:
                yield Say(f"{self.peer} declines your {self._what(req)}.")
            return False
        if len(self.texts) != req["n"] or self.hashes[req["n"]] != req["hash"] or self._over():
            return False                        # this board moved on meanwhile: withdrawn, the peer is told
        return (yield from self._carry_out(req, asked_here=True))

    def _carried_out_there(self, p: dict) -> bool:
        """The peer's state shows the request accepted here carried out on its board."""
        req = self.agreed
        assert req is not None
        if req["what"] == "draw":
            return p.get("n") == req["n"] and p.get("hash") == req["hash"] and \
                p.get("result") == ["1/2-1/2", str(Termination.AGREEMENT)]
        to = req["to"]
        return p.get("n") == to and to < len(self.hashes) and p.get("hash") == self.hashes[to]

    def _carry_out(self, req: dict, *, asked_here: bool) -> Steps[bool]:
        """The agreed takeback or draw, on this board."""
        who = self.peer
        if req["what"] == "draw":
            if self._over():
                return False
            here = yield from self._change(AgreeDraw(who))
            out = here.outcome
            assert out is not None
            head = f"{who} accepts your draw offer" if asked_here else f"{who} and you agree to a draw"
            yield Say(f"{head}: drawn by agreement, {out.result}.")
            return True
        to = req["to"]
        names = list(reversed(self._texts_of(req)))     # the last first, as the takeback says them
        n = len(self.game.history)
        popped = 0
        if n > to:
            yield from self._change(TakeBack(n - to, who))
            popped = n - to
        yield from self._sync()
        for k in [k for k in self.peer_actions if k >= to]:
            t = self.peer_actions.pop(k).get("t")
            if self.key is not None and isinstance(t, (int, float)):
                self.t_floor = max(self.t_floor, t)     # taken back: a copy of it sent again is no news
        for times in (self.received_at, self.shown_at, self.sent_at):   # those plies are played afresh
            for k in [k for k in times if k >= to]:
                del times[k]
        self._previews_taken_back(to)
        self.shown = None
        self.waiting_said = False
        if asked_here:
            self.undo_to = to
        head = f"{who} accepts your takeback" if asked_here else f"Taken back as {who} asked"
        assert self.here is not None
        put = " Put the pieces back as the LEDs show." if self.here.recover else ""
        unmade = "" if popped == len(names) else f" ({len(names) - popped} not yet made here)"
        yield Say(f"{head}: {', '.join(names)}{unmade}.{put}")
        return True

    def _requests_out(self) -> Steps[bool]:
        """Requests against the game as it stands now, then said to the peer; True while this
        board waits for the peer to carry out what it accepted."""
        req = self.asking
        if req is not None and (len(self.texts) != req["n"] or self.hashes[req["n"]] != req["hash"]
                                or self._over() or self.stopped):
            self.asking = None
            why = "a move was made" if not self._over() else "the game is over"
            yield Say(f"Your {self._what(req)} is withdrawn: {why}.")
        req = self.asked
        if req is not None:
            fit = self._fits(req)
            if fit == "stale":
                self.asked = None
                self.answer_out = {"id": req["id"], "accept": False, "why": "stale", "t": self.now}
                if not self._over():
                    late = "after your move" if self.asked_said is None else "and then you moved"
                    yield Say(f"{self.peer} asked for a {'draw' if req['what'] == 'draw' else 'takeback'} "
                              f"{late}: it lapsed.")
            elif fit == "ok" and self.asked_said != req["id"]:
                self.asked_said = req["id"]
                side = f"{self.peer} ({COLOR[self.side]})"
                if req["what"] == "draw":
                    yield Say(f"{side} offers a draw: say accept or decline.")
                else:
                    yield Say(f"{side} asks to take back {', '.join(self._texts_of(req))}: say accept or decline.")
        if self.agreed is not None and self._over():
            self.agreed = None
        yield from self._say_requests()
        if self.agreed is not None and not self.agreed_said:
            self.agreed_said = True
            yield Say(f"Waiting for {self.peer} to carry out the {self.agreed['what']}.")
        return self.agreed is not None

    def _texts_of(self, req: dict) -> list[str]:
        """The actions a takeback request takes back, as this board has them."""
        out = []
        for seq in range(req["to"], req["n"]):
            if seq < len(self.texts):
                out.append(self.texts[seq])
            elif seq in self.peer_actions:
                out.append(str(self.peer_actions[seq].get("action")))
        return out

    def _say_requests(self) -> Steps[None]:
        """This board's request and answer, retained (emptied when there is none), each said
        once a connection (``()``: not yet said on this one)."""
        assert self.here is not None
        if not self.here.connected:
            return
        for kind, payload in (("ask", self.asking), ("answer", self.answer_out)):
            key = payload["id"] if payload is not None else None
            if self.req_sent[kind] != key and (yield from self._send(kind, payload, retain=True)):
                self.req_sent[kind] = key

    def requests(self) -> dict:
        """The open requests, for the page: ``{"peer", "asked", "asking"}``, ``asked`` what the
        peer asks this board's player (null when nothing), ``asking`` what this board asked."""
        def view(req: dict | None, text: str | None) -> dict | None:
            return None if req is None else {"what": req["what"], "text": text}
        asked = self.asked if self.asked is not None and self.asked_said == self.asked["id"] else None
        side = f"{self.peer} ({COLOR[self.side]})"
        return {
            "peer": self.peer,
            "asked": view(asked, None if asked is None else
                          f"{side} offers a draw" if asked["what"] == "draw" else
                          f"{side} asks to take back {', '.join(self._texts_of(asked))}"),
            "asking": view(self.asking, None if self.asking is None else
                           f"Waiting for {self.peer} to answer your {self._what(self.asking)}"),
        }
