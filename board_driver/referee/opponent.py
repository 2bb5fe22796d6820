"""What the session knows of a side played from elsewhere (the computer, a remote board) and
of the ``hint`` command's engine: two declared protocols, and the values they answer with.

The session owns the game; an opponent never writes it. At each step it is asked what it
decided (:meth:`Opponent.decide`) and answers with a :class:`Decision`: notices to say,
actions the board cannot see to apply at once, an army to record, and what the reconciler may
accept of its side (:class:`Expect`). The session applies the decision
(:meth:`.session.Session.apply_decision`), as ``chess.engine``'s ``play(board, limit)`` returns
a ``PlayResult`` and leaves the caller's board alone.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.game import Action

if TYPE_CHECKING:
    from board_driver.records import Hint as HintRecord
    from board_driver.referee.reconcile import Explanation, Verdict
    from board_driver.referee.session import Session


class Wait(enum.Enum):
    """Why nothing of the side played from elsewhere is accepted now."""

    THINKING = "thinking"   # its move is not known yet (a search, the remote player)
    FORKED = "forked"       # the two boards of a remote game disagree: play stops
    AGREED = "agreed"       # a takeback or draw accepted here waits for the asking board


@dataclass(frozen=True)
class Expect:
    """What the reconciler accepts of the side played from elsewhere.

    ``action`` alone: that one action, committed when the board shows it. ``action`` with
    ``preview``: the board is followed towards it (the LEDs show the move under way) but its
    commit is withheld until the action's record arrives (docs/remote.md, *Previews*).
    ``wait``: no action of that side at all."""

    action: Action | None = None
    preview: bool = False
    wait: Wait | None = None

    @classmethod
    def play(cls, action: Action) -> Expect:
        return cls(action=action)

    @classmethod
    def previewed(cls, action: Action) -> Expect:
        return cls(action=action, preview=True)

    @classmethod
    def waiting(cls, why: Wait) -> Expect:
        return cls(wait=why)

    def admits(self, action: Action) -> bool:
        """The reconciler may explain the board by ``action``."""
        return self.action is not None and action == self.action

    def withholds(self, expl: Explanation) -> bool:
        """A commit of the previewed action: the board shows it, its record has not arrived."""
        return (self.preview and self.action is not None and expl.depth == 0 and len(expl.actions) == 1
                and expl.actions[0] == self.action)

    def __repr__(self) -> str:
        if self.wait is not None:
            return self.wait.name
        assert self.action is not None
        return f"{'PREVIEWED' if self.preview else 'PLAY'}({self.action.text})"


@dataclass(frozen=True)
class Silent:
    """An action the board cannot see (a purchase, a design, the end of a turn), applied at
    once with its notice; ``setup``: an army recorded, which the player then sets up."""

    action: Action
    notice: str
    setup: bool = False


@dataclass(frozen=True)
class Decision:
    """What a side played from elsewhere decided at one step, applied by the session in order:
    the notices, the silent actions (each with its notice), then ``expect`` (unless
    ``keep_expect``)."""

    notices: tuple[str, ...] = ()
    silent: tuple[Silent, ...] = ()
    expect: Expect | None = None
    keep_expect: bool = False       # leave what is accepted as it is
    changed: bool = False           # the game changed meanwhile (a remote board's agreed takeback)


class Opponent(Protocol):
    """A side played from elsewhere (:class:`board_driver.opponents.computer.Computer`,
    :class:`board_driver.remote.side.Remote`)."""

    polls: bool             # its deadline is a look at a link, not something due on the board
    background: bool        # it thinks (or listens) off the game loop
    errors: list[str]       # what went wrong, said to the player as it happened
    peer: str | None        # the other board's name (a remote game), None for the computer

    def plays(self, side: int) -> bool: ...

    def decide(self, session: Session) -> Decision:
        """What it does now that the board is explained. It reads the session and writes none of
        its parts: the computer only answers; a remote board carries out what the other board's
        player agreed to (a takeback, a draw) through the session's intents."""
        ...

    def news(self) -> bool:
        """Something arrived (a search ended, a message): the next tick asks :meth:`decide`."""
        ...

    def deadline(self, now: int) -> int | None: ...

    def hint(self) -> Action | None:
        """The action the LEDs show the player to carry out for it, or None."""
        ...

    def on_verdict(self, session: Session, v: Verdict) -> None:
        """The board's verdict after each update (a remote board previews a held move)."""
        ...

    def think_in_background(self) -> None: ...

    def peer_player(self) -> PeerRequests | None:
        """The other board's player, who can be asked for a takeback or a draw (None: the
        computer, which takes no requests)."""
        ...

    def close(self) -> None: ...


class PeerRequests(Protocol):
    """What the commands ask of the player at the other board (docs/remote.md): each answers
    with the words to say, or raises :class:`.commands.CommandError`."""

    def ask_takeback(self, session: Session) -> str: ...

    def offer_draw(self, session: Session) -> str: ...

    def answer(self, session: Session, accept: bool) -> str: ...

    def adopt(self, session: Session) -> str: ...

    def requests(self) -> dict | None:
        """The open takeback request or draw offer, either way, as the page shows it (None: none)."""
        ...


@dataclass(frozen=True)
class HintFound:
    """A hint found: the action to light (None: nothing to light), its words, its record."""

    action: Action | None
    words: str
    record: HintRecord              # journaled when it is said


class HintEngine(Protocol):
    """What the ``hint`` command asks (:class:`board_driver.opponents.computer.Hinter`)."""

    background: bool        # True: :meth:`start` it and take the answer up when :meth:`news` says so

    def __call__(self, session: Session) -> HintFound:
        """The hint for the side to move, waited for."""
        ...

    def start(self, session: Session) -> bool:
        """Look for a hint in the background (False: one is already being looked for)."""
        ...

    def news(self) -> bool: ...

    def deadline(self, now: int) -> int | None: ...

    def take(self, session: Session) -> HintFound | None: ...

    def think_in_background(self) -> None: ...

    def close(self) -> None: ...
