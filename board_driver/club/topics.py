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
