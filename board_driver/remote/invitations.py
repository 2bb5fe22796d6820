"""Remote games asked for while a game is on (the page's boards online, invitations, accept
and decline; docs/remote.md, docs/web.md).

``serve --white remote:PEER`` agrees on its game before the board loop starts. Asked from the
page (or ``POST /api/new`` with a ``remote:PEER`` player) the game in progress goes on
meanwhile: the handshake (:func:`board_driver.remote.handshake.agree`, this board's invitation
until the peer accepts or declines, or the peer's invitation accepted) runs on a thread of its
own, and once both boards agree the loop is handed a :class:`RemoteStart`, which the game host
opens in place of the game in progress. The :class:`~board_driver.remote.lobby.Lobby` lists the
boards online and the invitations addressed to this board; a new one is said on the console
and among the page's notices.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

from board_driver.errors import BoardDriverError
from board_driver.referee.commands import HandOver
from board_driver.referee.texts import COLOR
from board_driver.remote.handshake import Declined, agree, decline
from board_driver.remote.lobby import Lobby
from board_driver.remote.transport import RemoteLink

if TYPE_CHECKING:       # pragma: no cover
    from board_driver.club.broker import BrokerConfig
    from board_driver.host.game_host import GameHost
    from board_driver.referee.session import Session

INVITE_SECONDS = 600.0      # an invitation from the page stands this long unanswered


class RemoteError(BoardDriverError):
    """A remote request cannot be carried out (no broker, no such invitation, one waiting)."""


@dataclass
class RemoteStart(HandOver):
    """Both boards agreed on a game: it comes on the loop's queue and the loop hands it to the
    game host, which opens it in place of the game in progress."""

    agreed: dict
    link: Any
    peer: str
    side: int                       # the side the peer plays


NO_BROKER = "no broker configured (the board's profile has no broker section: docs/club.md, docs/remote.md)"


class Invitations:
    """The remote side of one game host: its lobby, its handshake under way, and what the page
    shows of them (:meth:`status`)."""

    def __init__(self, host: GameHost):
        self.host = host
        self.broker = host.broker
        self.lobby: Any = None
        self.on_change: Callable[[], None] | None = None
        self.outgoing: dict | None = None       # this board's invitation: to, game, variant, you_play, state
        self._cancel: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._said: set[tuple[str, str]] = set()    # the invitations said already (peer, game)
        self._lock = threading.Lock()

    # -- the lobby -----------------------------------------------------------------------------
    def start(self, *, announce: bool = False, on_change: Callable[[], None] | None = None) -> None:
        """Read the broker's boards and invitations (``announce``: keep this board's presence
        too, when no club publisher does)."""
        self.on_change = on_change
        if self.broker is None or self.lobby is not None:
            return
        self.lobby = Lobby(self.broker, announce=announce, on_change=self._lobby_changed, log=self.later).start()

    def close(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        if self.lobby is not None:
            self.lobby.close()
            self.lobby = None

    def _cfg(self) -> BrokerConfig:
        """The broker this board's remote games go through."""
        if self.broker is None:
            raise RemoteError(NO_BROKER)
        return self.broker

    def _need(self):
        if self.broker is None:
            raise RemoteError(NO_BROKER)
        if self.lobby is None:
            raise RemoteError("the broker is not being read (the lobby was not started)")
        return self.lobby

    def boards(self) -> dict:
        lobby = self._need()
        return {"me": self._cfg().name, "connected": lobby.connected.is_set(), "boards": lobby.boards()}

    def status(self) -> dict | None:
        """The snapshot's ``lobby``: None without a broker."""
        if self.broker is None:
            return None
        lobby = self.lobby
        invites = [self._public(p) for p in (lobby.invitations() if lobby is not None else [])
                   if not self._known(p["game"])]
        return {"me": self.broker.name, "connected": bool(lobby is not None and lobby.connected.is_set()),
                "invitations": invites, "outgoing": dict(self.outgoing) if self.outgoing else None}

    def _known(self, gid: str) -> bool:
        """Whether game ``gid`` is here already (played, or not a game id this board could keep:
        such an invitation is not shown)."""
        try:
            return self.host.store.path(gid).exists()
        except (BoardDriverError, ValueError, OSError):
            return True

    @staticmethod
    def _public(p: dict) -> dict:
        you = COLOR[1 - COLOR.index(p["side"])]
        clock = p.get("clock") if isinstance(p.get("clock"), dict) else None
        return {"from": p["from"], "game": p["game"], "variant": p["variant"], "you_play": you,
                "players": p.get("players") if isinstance(p.get("players"), dict) else None,
                "clock": clock.get("tc") if clock else None, "fen": p.get("fen")}

    def _lobby_changed(self) -> None:
        lobby = self.lobby
        if lobby is not None:
            for p in lobby.invitations():
                key = (p["from"], p["game"])
                if key in self._said or self._known(p["game"]):
                    continue
                self._said.add(key)
                q = self._public(p)
                self.later(f"{q['from']} invites this board to play {q['variant']} (you play {q['you_play']}"
                           + (f", {q['clock']}" if q["clock"] else "") + "): accept or decline it on the page.")
        self.changed()

    def changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:
                pass

    def later(self, line: str) -> None:
        """Say ``line`` from any thread: through the loop when it runs (the console and the
        page's notices), else at once."""
        q = self.host.loop_queue()
        if q is None:
            self.host.say(line)
            return

        def job(session: Session) -> None:
            session.notify(line)
        q.put(job)

    # -- the handshake ---------------------------------------------------------------------------
    def busy(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def new_game_started(self, *, agreed: bool = False) -> None:
        """A new game is on the board: the answer to this board's invitation is old news (kept
        while a handshake is still under way, unless that handshake's game is the one started)."""
        if agreed or not self.busy():
            self.outgoing = None

    def invite(self, peer: str, side: int, *, variant: str, fen: str | None, clock: dict | None,
               players: dict) -> dict:
        """This board invites ``peer`` (who plays ``side``) from the loop's thread: the handshake
        starts on its own thread; the game in progress goes on until both agree."""
        self._need()
        if self.busy():
            raise RemoteError(f"an invitation is already under way ({(self.outgoing or {}).get('to', '?')}): "
                              "cancel it first")
        names = dict(players)
        names[COLOR[side]] = peer
        local = COLOR[1 - side]
        if not names.get(local) or names[local] == ("White", "Black")[1 - side] or names[local].startswith("remote:"):
            names[local] = self._cfg().name
        # the time and this board's name: never the id of a game the peer started in the same second
        gid = f"{datetime.now():%Y%m%d-%H%M%S}-{re.sub('[^A-Za-z0-9_-]', '_', self._cfg().name)}"[:64]
        proposal = {"game": gid, "variant": variant, "fen": fen,
                    "clock": clock, "players": names, "side": local}
        self.outgoing = {"to": peer, "game": proposal["game"], "variant": variant, "you_play": local,
                         "state": "waiting", "error": None}
        self._run(peer, side, proposal)
        self.changed()
        return {"invited": peer, "game": proposal["game"], "variant": variant, "you_play": local}

    def accept(self, peer: str) -> dict:
        """Accept ``peer``'s standing invitation: the same handshake, with the matching sides
        (it finds the invitation and accepts it, as ``serve`` with the matching spec does)."""
        lobby = self._need()
        p = lobby.invitation(peer)
        if p is None or self._known(p["game"]):
            raise LookupError(f"no invitation from {peer} stands")
        if self.busy():
            raise RemoteError(f"an invitation is already under way ({(self.outgoing or {}).get('to', '?')}): "
                              "cancel it first")
        side = COLOR.index(p["side"])           # the side the inviting board's player plays
        proposal = {"game": p["game"], "variant": p["variant"], "fen": p.get("fen"), "clock": p.get("clock"),
                    "players": p.get("players") or {}, "side": COLOR[1 - side]}
        self.outgoing = None
        self._run(peer, side, proposal)
        lobby.forget(peer)
        return {"accepted": peer, "game": p["game"], "variant": p["variant"], "you_play": COLOR[1 - side]}

    def decline(self, peer: str) -> dict:
        lobby = self._need()
        p = lobby.invitation(peer)
        if p is None:
            raise LookupError(f"no invitation from {peer} stands")
        decline(lobby.sender(peer), p["game"])
        lobby.forget(peer)
        self.later(f"Declined {peer}'s invitation ({p['variant']}).")
        return {"declined": peer, "game": p["game"]}

    def cancel(self) -> dict:
        if not self.busy() or self._cancel is None or not self.outgoing:
            raise RemoteError("no invitation of this board is waiting")
        self._cancel.set()
        return {"cancelled": self.outgoing["to"], "game": self.outgoing["game"]}

    def _run(self, peer: str, side: int, proposal: dict) -> None:
        cancel = threading.Event()
        self._cancel = cancel
        self._thread = threading.Thread(target=self._handshake, args=(peer, side, proposal, cancel),
                                        name=f"fairyboard-invite-{peer}", daemon=True)
        self._thread.start()

    def _handshake(self, peer: str, side: int, proposal: dict, cancel: threading.Event) -> None:
        host = self.host
        link = RemoteLink(self._cfg(), peer, log=self.later).start()
        try:
            agreed = agree(link, proposal, say=self.later, stop=lambda: cancel.is_set() or host.stopping(),
                           known=lambda gid: host.store.path(gid).exists(), timeout=INVITE_SECONDS)
        except Declined as exc:
            link.close()
            why = str(exc)
            state = "cancelled" if cancel.is_set() else "declined" if "declined" in why else "failed"
            if self.outgoing is not None and self.outgoing.get("game") == proposal["game"]:
                self.outgoing = dict(self.outgoing, state=state, error=why)
            self.later(f"remote: {why}." if state != "cancelled" else f"Withdrew the invitation to {peer}.")
            self.changed()
            return
        if self.outgoing is not None:
            self.outgoing = dict(self.outgoing, state="agreed", game=agreed["game"])
        q = self.host.loop_queue()
        if q is None:               # no loop to hand it to
            link.close()
            return
        q.put(RemoteStart(agreed, link, peer, side))
        self.changed()
