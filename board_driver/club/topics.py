"""Topic names (see the package's docstring) and their parsing."""

from __future__ import annotations

import re

_GAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def valid_game(gid: str) -> bool:
    return bool(_GAME_RE.match(gid))


def record(prefix: str, board: str, game: str) -> str:
    return f"{prefix}/{board}/game/{game}/record"


def state(prefix: str, board: str, game: str) -> str:
    return f"{prefix}/{board}/game/{game}/state"


def health(prefix: str, board: str) -> str:
    return f"{prefix}/{board}/health"


def presence(prefix: str, board: str) -> str:
    return f"{prefix}/{board}/presence"


def resend(prefix: str, board: str) -> str:
    return f"{prefix}/{board}/resend"


def ack(prefix: str, board: str) -> str:
    return f"{prefix}/{board}/ack"


def subscriptions(prefix: str) -> list[str]:
    """What the recorder subscribes to."""
    return [f"{prefix}/+/game/+/record", f"{prefix}/+/game/+/state", f"{prefix}/+/health",
            f"{prefix}/+/presence"]


def parse(prefix: str, topic: str) -> tuple[str, str, str | None] | None:
    """``(kind, board, game)`` of a topic the recorder hears: kind is record, state, health or
    presence; None for anything else."""
    parts = topic.split("/")
    if len(parts) < 3 or parts[0] != prefix:
        return None
    board = parts[1]
    if not _GAME_RE.match(board):
        return None
    if len(parts) == 5 and parts[2] == "game" and parts[4] in ("record", "state") and valid_game(parts[3]):
        return parts[4], board, parts[3]
    if len(parts) == 3 and parts[2] in ("health", "presence"):
        return parts[2], board, None
    return None


# -- a remote game between two boards (docs/remote.md) ----------------------------------------
# Everything a board says to its opponent goes under its own name (the club's ACL lets a board
# write only there) and names the board it is for (the ACL lets a board read only what is
# addressed to it: ``pattern read PREFIX/+/remote/%u/#``).

def remote(prefix: str, board: str, peer: str, kind: str, game: str | None = None) -> str:
    """``PREFIX/BOARD/remote/PEER/invite`` (and ``accept``), or, for a game,
    ``PREFIX/BOARD/remote/PEER/GAME/KIND`` (``action``, ``state``, ``resend``, ``ask``, ``answer``)."""
    if game is None:
        return f"{prefix}/{board}/remote/{peer}/{kind}"
    return f"{prefix}/{board}/remote/{peer}/{game}/{kind}"


def remote_inbox(prefix: str, board: str) -> str:
    """What a board subscribes to: everything any board addresses to it."""
    return f"{prefix}/+/remote/{board}/#"


def parse_remote(prefix: str, topic: str) -> tuple[str, str, str, str | None] | None:
    """``(sender, receiver, kind, game)`` of a remote topic, or None."""
    parts = topic.split("/")
    if len(parts) not in (5, 6) or parts[0] != prefix or parts[2] != "remote":
        return None
    sender, receiver = parts[1], parts[3]
    if not (_GAME_RE.match(sender) and _GAME_RE.match(receiver)):
        return None
    if len(parts) == 5:
        return sender, receiver, parts[4], None
    if not valid_game(parts[4]):
        return None
    return sender, receiver, parts[5], parts[4]
