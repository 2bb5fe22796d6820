"""The handshake of a remote game: which game both boards start (docs/remote.md, *How the game starts*).

Before any game is open the two boards agree on one: the peer's standing invitation when it
fits, else this board's own, retained on ``PREFIX/ME/remote/PEER/invite`` until the peer accepts
(``.../accept``) or declines. It runs over a :class:`.transport.RemoteLink` (or, to decline from
the page, the lobby's connection: anything with a ``send``).
"""

from __future__ import annotations

import time

from board_driver.referee.texts import COLOR
from board_driver.remote import signing


class Declined(Exception):
    """The peer declined the invitation, or none was agreed before the front end stopped."""


def agree(link, proposal: dict, *, say, stop=lambda: False, known=lambda gid: False,
          timeout: float | None = None) -> dict:
    """The game both boards start: the peer's standing invitation when it fits (its sides are
    this board's the other way round, and its game is not here yet), accepted; else this board's
    ``proposal``, published as a retained invitation until the peer accepts (or declines). When
    both invite at once, the invitation of the board whose name sorts first is played.

    ``proposal``: ``{"game", "variant", "fen", "clock", "players", "side"}``, ``side`` the colour the
    proposing board's player plays. The invitation and the acceptance carry each board's public
    Diffie-Hellman value (``"dh"``); the game agreed comes back with ``"key"``, the 32 bytes that
    sign the game's messages (:mod:`.signing`), which never cross the broker."""
    me, peer = link.me, link.peer
    end = None if timeout is None else time.monotonic() + timeout
    said = False
    while not link.connected.wait(0.2):
        if stop() or (end is not None and time.monotonic() > end):
            raise Declined(f"no broker to reach {peer} through")
        if not said:
            said = True
            say(f"remote: waiting for the broker {link.cfg.host}:{link.cfg.port}")

    def fits(p) -> bool:
        return isinstance(p, dict) and isinstance(p.get("game"), str) and p.get("side") in COLOR \
            and p["side"] != proposal["side"] and isinstance(p.get("variant"), str) and not known(p["game"]) \
            and signing.valid_public(p.get("dh"))

    item = link.wait({"invite"}, 1.0, stop)       # a standing invitation arrives with the subscription
    if item is not None and fits(item[2]):
        return _accept(link, item[2], say)
    x = signing.private()
    mine = signing.public(x)
    link.send("invite", {**proposal, "dh": mine, "t": time.time()}, retain=True)
    say(f"Invited {peer} to play {proposal['variant']} ({COLOR[1 - COLOR.index(proposal['side'])]}); "
        f"waiting for {peer} to accept.")
    while not stop() and (end is None or time.monotonic() < end):
        item = link.wait({"invite", "accept"}, 0.5, stop)
        if item is None:
            continue
        kind, _, p, _ = item
        if kind == "accept" and isinstance(p, dict) and p.get("game") == proposal["game"]:
            link.send("invite", None, retain=True)        # answered: nothing left standing
            if p.get("declined"):
                raise Declined(f"{peer} declined the game")
            if not signing.valid_public(p.get("dh")):
                raise Declined(f"{peer} accepted without a key exchange (an older fairyboard?): not played")
            key = signing.game_key(x, p["dh"], game=proposal["game"], inviter=me, accepter=peer,
                                invite_dh=mine, accept_dh=p["dh"])
            say(f"{peer} accepted: game {proposal['game']}.")
            return {**proposal, "key": key}
        if kind == "invite" and fits(p) and peer < me:
            link.send("invite", None, retain=True)
            return _accept(link, p, say)
    link.send("invite", None, retain=True)
    raise Declined(f"{peer} did not accept")


def _accept(link, p: dict, say) -> dict:
    y = signing.private()
    mine = signing.public(y)
    key = signing.game_key(y, p["dh"], game=p["game"], inviter=link.peer, accepter=link.me,
                        invite_dh=p["dh"], accept_dh=mine)
    link.send("accept", {"game": p["game"], "dh": mine, "t": time.time()}, retain=True)
    say(f"Accepted {link.peer}'s game {p['game']} ({p['variant']}); you play {COLOR[1 - COLOR.index(p['side'])]}.")
    return {**{k: v for k, v in p.items() if k not in ("dh", "t")}, "key": key}


def decline(link, game: str) -> None:
    link.send("accept", {"game": game, "declined": True, "t": time.time()}, retain=True)
