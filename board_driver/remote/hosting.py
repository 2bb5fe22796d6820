"""What the game host (board_driver/host/game_host.py) asks of remote play: the peer a
``remote:BOARD`` player names, the game both boards agree on before it opens, and the remote
side attached to a game whose journal header names the peer (docs/remote.md, *How the game
starts*). The host keeps the store, the seat and the loop; the protocol stays here."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from board_driver.club.broker import NAME_RE, BrokerConfig
from board_driver.referee.texts import COLOR
from board_driver.remote.signing import check_code, load_key, save_key
from board_driver.remote.handshake import Declined, agree
from board_driver.remote.invitations import RemoteError
from board_driver.remote.side import Remote, parse_spec
from board_driver.remote.transport import RemoteLink

if TYPE_CHECKING:       # pragma: no cover
    from board_driver.referee.session import Session


def remote_of(white: str | None, black: str | None, broker: BrokerConfig | None) -> tuple[str, int] | None:
    """(the peer's board name, the side it plays) when a player is ``remote:BOARD``, else None;
    :class:`.invitations.RemoteError` when that cannot be played from here."""
    found: list[tuple[str, int]] = []
    for i, v in enumerate((white, black)):
        head, colon, _ = (v or "").partition(":")
        if colon and head.strip().lower() == "remote" and not parse_spec(v or ""):
            raise RemoteError(f"{v!r}: remote: needs the other board's name, as in remote:board-02 "
                              f"(docs/remote.md)")
        peer = parse_spec(v or "")
        if peer:
            found.append((peer, i))
    if not found:
        return None
    if len(found) == 2:
        raise RemoteError("remote: only one side can be played from another board")
    if broker is None:
        raise RemoteError("a remote player needs the board profile's broker: section (docs/remote.md)")
    peer, side = found[0]
    if not NAME_RE.match(peer) or peer == broker.name:
        raise RemoteError(f"remote:{peer}: not another board's name")
    return peer, side


def agree_game(broker: BrokerConfig, peer: str, side: int, *, variant: str, fen: str | None, clock: dict | None,
               white: str | None, black: str | None, say: Callable[[str], None], stop: Callable[[], bool],
               known: Callable[[str], bool]) -> tuple[dict, RemoteLink]:
    """The game both boards start (:func:`.handshake.agree`: the peer's standing invitation, or
    this board's until the peer accepts) and the link it is played over;
    :class:`.invitations.RemoteError` when the peer declines or none is agreed."""
    link = RemoteLink(broker, peer, log=say).start()
    names = {"white": white, "black": black}
    names[COLOR[side]] = peer
    local = COLOR[1 - side]
    if not names[local] or names[local] == ("White", "Black")[1 - side]:
        names[local] = broker.name
    proposal = {"game": datetime.now().strftime("%Y%m%d-%H%M%S"), "variant": variant, "fen": fen,
                "clock": clock, "players": names, "side": local}
    try:
        agreed = agree(link, proposal, say=say, stop=stop, known=known)
    except Declined as exc:
        link.close()
        raise RemoteError(str(exc)) from None
    return agreed, link


def header(peer: str, side: int, me: str) -> dict:
    """The journal header's part that makes a game a remote one (a resume re-attaches it)."""
    return {"remote": {"peer": peer, "side": COLOR[side], "me": me}}


def keep_key(journal: Path, agreed: dict) -> None:
    """Keep the key both boards agreed (:mod:`.signing`) beside the game's journal ``journal``."""
    key = agreed.get("key")
    if isinstance(key, bytes):
        save_key(journal, key)


def attach_remote(session: Session, header: dict, broker: BrokerConfig | None, link: Any,
                  say: Callable[[str], None], journal: Path | None = None) -> None:
    """A game whose ``header`` names the peer: its side is played from the peer's board, over
    ``link`` when the handshake made one for that peer, else over a new one; its messages are
    signed with the key kept beside ``journal`` (a game agreed before games were signed has
    none, and plays on unsigned, said once)."""
    r = header.get("remote")
    if not isinstance(r, dict) or r.get("side") not in COLOR or not isinstance(r.get("peer"), str):
        return
    if broker is None:
        session.notify(f"This game is played against {r['peer']} over the broker, and this board "
                       f"has no broker: section: its moves cannot arrive.")
        return
    if link is None or link.peer != r["peer"]:
        link = RemoteLink(broker, r["peer"], log=say).start()
    assert session.game_id is not None
    key = load_key(journal) if journal is not None else None
    if key is None:
        session.notify(f"This game with {r['peer']} was agreed before games were signed: its messages are "
                       f"not checked (docs/remote.md, Signed records).")
    else:
        session.notify(f"The messages of this game with {r['peer']} are signed; check code {check_code(key)} "
                       f"(the same on {r['peer']}'s board).")
    session.attach_computer(Remote(link, COLOR.index(r["side"]), session.game_id, log=say, key=key))
