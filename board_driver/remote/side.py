"""A remote opponent: the other side is a player on another board, over the club's broker.

``--white remote:board-02`` on board-01 (whose player then plays Black) and ``--black
remote:board-01`` on board-02 start one game on both boards (docs/remote.md). To the session a
:class:`Remote` is a side played from elsewhere, exactly like the computer (the same protocol,
:class:`board_driver.referee.opponent.Opponent`: ``decide``, ``hint``, ``news``, ``deadline``,
``plays``): when the remote side has moved, its action is lit on the LEDs and said in words, and
the reconciler accepts only that action for the remote side; its silent actions (a purchase, a
design, the end of a turn) are applied at once.

This is the adapter between three things that know nothing of each other: the session (this
board's game, its one writer), the link (:mod:`.transport`, which only moves messages) and the
protocol (:class:`.protocol.PeerSync`, which decides, with no clock, thread or session of its
own). At each step it feeds the protocol what the link heard, the wall clock and this board's
game (:class:`.protocol.LocalGame`), and carries out what comes back: messages go to the link,
words and changes to the game through the session's intents (``notify``, ``take_back``,
``agree_draw``, ``resign``, ``adjust_clock``, ``adopt``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from board_driver.opponents.computer import describe_move
from board_driver.referee.commands import takeback_plies
from board_driver.referee.opponent import Decision
from board_driver.referee.reconcile import VerdictStatus
from board_driver.remote.protocol import (
    AdjustClock, Adopt, AgreeDraw, Arrived, Effect, LocalGame, PeerSync, PeerResigns, Say, SayMove, Send, Steps, TakeBack,
    drive)
from engine.game import Action

if TYPE_CHECKING:       # pragma: no cover
    from board_driver.referee.reconcile import Verdict
    from board_driver.referee.session import Session

POLL_MS = 10            # how often the loop looks at the link when nothing arrived

T = TypeVar("T")


def parse_spec(name: str) -> str | None:
    """The peer's board name of a ``remote:BOARD`` player, else None."""
    head, _, rest = (name or "").partition(":")
    return rest.strip() if head.strip().lower() == "remote" and rest.strip() else None


class Remote:
    """The side of a game played on the peer's board (see the module docstring)."""

    background = True
    polls = True            # its deadline is a look at the link, not something due on the board

    def __init__(self, link: Any, side: int, game_id: str, *, log: Callable[[str], None] | None = None,
                 wall_clock: Callable[[], float] = time.time, key: bytes | None = None) -> None:
        self.link = link
        self.side = side                    # the side the peer plays (0 white, 1 black)
        self.game_id = game_id
        self.peer: str | None = link.peer     # the peer's board name (the Opponent protocol's None: the computer)
        self.log = log or (lambda line: None)
        self.wall_clock = wall_clock        # seconds: the protocol's only clock
        self.players = {side: self}         # as Computer.players: the sides played from elsewhere
        self.protocol = PeerSync(side, game_id, link.peer, key=key, me=getattr(link, "me", ""))
        self.errors: list[str] = self.protocol.errors

    # -- what the protocol knows, read by the page, the tests and the latency figures -----------------
    @property
    def stopped(self) -> bool:
        """The two boards disagree (either found it): nothing of the remote side is accepted."""
        return self.protocol.stopped

    @property
    def dropped(self) -> int:
        """How many of the peer's messages were dropped unsigned, replayed or out of line."""
        return self.protocol.dropped

    @property
    def fork(self) -> str | None:
        return self.protocol.fork

    @property
    def shown(self) -> Action | None:
        """The peer's action lit for the player once its record arrived (not a preview)."""
        return self.protocol.shown

    @property
    def agreed(self) -> dict | None:
        """The peer's request accepted here, not yet carried out there."""
        return self.protocol.agreed

    @property
    def previews(self) -> bool:
        """Whether this board's tentative moves go out as previews."""
        return self.protocol.previews

    @previews.setter
    def previews(self, on: bool) -> None:
        self.protocol.previews = on

    @property
    def hashes(self) -> list[str]:
        return self.protocol.hashes

    @property
    def peer_actions(self) -> dict[int, dict]:
        return self.protocol.peer_actions

    @property
    def sent_at(self) -> dict[int, float]:
        return self.protocol.sent_at

    @property
    def received_at(self) -> dict[int, float]:
        return self.protocol.received_at

    @property
    def shown_at(self) -> dict[int, float]:
        return self.protocol.shown_at

    @property
    def preview_sent_at(self) -> dict[int, float]:
        return self.protocol.preview_sent_at

    def requests(self) -> dict:
        return self.protocol.requests()

    # -- the session's hook (as Computer) -----------------------------------------------------------
    def plays(self, side: int) -> bool:
        return side == self.side

    def think_in_background(self) -> None:
        pass

    @property
    def thinking(self) -> bool:
        return False

    def news(self) -> bool:
        """True when something arrived from the peer (taken in at the next step)."""
        items = self._heard()
        self.protocol.arrive(items)
        return bool(items)

    def deadline(self, now: int) -> int | None:
        return now + POLL_MS                # the link is looked at every POLL_MS

    def hint(self) -> Action | None:
        return self.protocol.hint()

    def close(self) -> None:
        self.link.close()

    def decide(self, session: Session) -> Decision:
        """What the protocol makes of what arrived (:meth:`.protocol.PeerSync.step`), its words
        and the changes it asks for carried out here first."""
        self.protocol.arrive(self._heard())
        return self._run(session, self.protocol.step(self._here(session), self.wall_clock()))

    def on_verdict(self, session: Session, v: Verdict) -> None:
        """The session's every verdict: the move this board's player has set down and the board
        holds tentatively (a hold, a prompt with a default) goes to the peer as a preview
        (:meth:`.protocol.PeerSync.held`)."""
        if not self.protocol.previews or not self.link.connected.is_set():
            return                          # nothing to say: no copy of the game made at every verdict
        a = None
        if v.status in (VerdictStatus.HOLD, VerdictStatus.PROMPT):
            e = v.chosen
            if e is not None and e.depth == 0 and len(e.actions) == 1 and not e.actions[0].silent:
                a = e.actions[0]
        self._run(session, self.protocol.held(self._here(session), self.wall_clock(), a))

    def peer_player(self) -> Remote:
        return self                         # the other board's player answers takebacks and draws

    # -- the commands: asked of the other board's player -----------------------------------------------
    def ask_takeback(self, session: Session) -> str:
        """The ``takeback`` command: ask the peer's player (the answer comes later)."""
        plies = takeback_plies(session)
        return self._run(session, self.protocol.ask_takeback(self._here(session), self.wall_clock(), plies))

    def offer_draw(self, session: Session) -> str:
        """The ``draw`` command: offer the peer's player a draw (withdrawn by this side's next move)."""
        return self._run(session, self.protocol.offer_draw(self._here(session), self.wall_clock()))

    def answer(self, session: Session, accept: bool) -> str:
        """The ``accept`` / ``decline`` commands: the peer's open request; ``decline`` with none
        open withdraws this board's own."""
        return self._run(session, self.protocol.answer(self._here(session), self.wall_clock(), accept))

    def adopt(self, session: Session) -> str:
        """``remote adopt``: go on from the peer's record."""
        return self._run(session, self.protocol.adopt(self._here(session), self.wall_clock()))

    # -- carrying out what the protocol says -------------------------------------------------------------
    def _heard(self) -> list[Arrived]:
        return [Arrived(kind, game, payload, at) for kind, game, payload, at in self.link.drain()]

    def _here(self, session: Session) -> LocalGame:
        c = session.clock
        return LocalGame(game=session.game.copy(), connected=self.link.connected.is_set(),
                         outcome=session.outcome(), recover=session.recover,
                         tentative=session.tentative is not None, expected=session.expected,
                         clock=c.remaining(session.now) if c is not None else None)

    def _run(self, session: Session, steps: Steps[T]) -> T:
        return drive(steps, lambda effect: self._carry_out(session, effect))

    def _carry_out(self, session: Session, e: Effect) -> object:
        if isinstance(e, Send):
            return self.link.send(e.kind, e.payload, game=e.game, retain=e.retain)
        if isinstance(e, Say):
            if e.log:
                self.log(e.text)
            session.notify(e.text)
            return None
        if isinstance(e, SayMove):
            session.notify(describe_move(session, e.action, head=e.head))
            return None
        if isinstance(e, TakeBack):
            session.take_back(e.plies, why="takeback", by=e.by)
        elif isinstance(e, AgreeDraw):
            session.agree_draw(by=e.by)
        elif isinstance(e, PeerResigns):
            session.resign(e.side, by=e.by)
        elif isinstance(e, AdjustClock):
            session.adjust_clock(e.side, e.ms, by=e.by, ply=e.ply)
        elif isinstance(e, Adopt):
            def each() -> None:             # the protocol takes in each action as it is applied
                self._run(session, self.protocol.synced(self._here(session), self.wall_clock()))
            session.adopt(e.common, e.actions, after_each=each)
        return self._here(session)
