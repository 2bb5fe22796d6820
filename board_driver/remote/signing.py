"""The boards' own signature on a remote game's messages (docs/remote.md, *Signed records*).

When an invitation is accepted the two boards agree a key by a Diffie-Hellman exchange in the
RFC 7919 group ffdhe2048 (Python's ``pow``; no library beyond the standard one): the invitation
carries the inviting board's public value (``"dh"``), the acceptance the other's. The key never
crosses the broker. Every message of the game then carries ``"mac"``: HMAC-SHA256 with that key
over the message's direction, game, kind and canonical JSON (:func:`mac`), checked with
:func:`hmac.compare_digest`. So a client that reads and writes the broker (one without an ACL, or
one holding a board's password) cannot put an action, a state or a request on either board once
the game is agreed. What it does not stop: someone who controls the broker, or writes as one of
the boards, *while the invitation is being accepted* can exchange keys with each board in the
other's place; the check code said on both boards at the start (:func:`check_code`) differs then.

The key is kept beside the game's journal (``games/GAME.key``, mode 600), not in it: the journal
goes to the club's recorder over the broker.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

# RFC 7919 ffdhe2048: a safe prime, generator 2
P = int(
    "FFFFFFFFFFFFFFFFADF85458A2BB4A9AAFDC5620273D3CF1D8B9C583CE2D3695A9E13641146433FBCC939DCE249B3EF97D2FE3636"
    "30C75D8F681B202AEC4617AD3DF1ED5D5FD65612433F51F5F066ED0856365553DED1AF3B557135E7F57C935984F0C70E0E68B77E2A689"
    "DAF3EFE8721DF158A136ADE73530ACCA4F483A797ABC0AB182B324FB61D108A94BB2C8E3FBB96ADAB760D7F4681D4F42A3DE394DF4AE5"
    "6EDE76372BB190B07A7C8EE0A6D709E02FCE1CDF7E2ECC03404CD28342F619172FE9CE98583FF8E4F1232EEF28183C3FE3B1B4C6FAD73"
    "3BB5FCBC2EC22005C58EF1837D1683B2C6F34A26C1B2EFFA886B423861285C97FFFFFFFFFFFFFFFF", 16)
G = 2
PRIVATE_BITS = 256          # RFC 7919 asks for at least twice the group's 103-bit security level
CONTEXT = b"fairyboard-remote-1"


class BadPublic(ValueError):
    """A public value that is not one (out of range, not hex)."""


def private() -> int:
    return secrets.randbits(PRIVATE_BITS) | (1 << (PRIVATE_BITS - 1))


def public(x: int) -> str:
    """The public value of private ``x``, as the invitation carries it: 512 lowercase hex digits."""
    return format(pow(G, x, P), "0512x")


def _value(text: Any) -> int:
    if not isinstance(text, str) or len(text) != 512:
        raise BadPublic("not 512 hex digits")
    try:
        y = int(text, 16)
    except ValueError:
        raise BadPublic("not hex") from None
    if not 2 <= y <= P - 2:
        raise BadPublic("out of range")
    return y


def valid_public(text: Any) -> bool:
    try:
        _value(text)
    except BadPublic:
        return False
    return True


def game_key(x: int, theirs: Any, *, game: str, inviter: str, accepter: str, invite_dh: str, accept_dh: str) -> bytes:
    """The game's 32-byte key: HMAC-SHA256 keyed by the shared secret (256 big-endian bytes) over
    ``fairyboard-remote-1 \\n game \\n inviter \\n accepter \\n invite's dh \\n accept's dh``."""
    shared = pow(_value(theirs), x, P).to_bytes(256, "big")
    info = b"\n".join([CONTEXT, game.encode(), inviter.encode(), accepter.encode(), invite_dh.encode(),
                       accept_dh.encode()])
    return hmac.new(shared, info, hashlib.sha256).digest()


def check_code(key: bytes) -> str:
    """Eight hex digits both boards say at the start: the same on both unless someone stood in
    between when the key was agreed."""
    d = hashlib.sha256(CONTEXT + b" check " + key).hexdigest()[:8]
    return f"{d[:4]}-{d[4:]}"


def canonical(payload: dict) -> bytes:
    """The payload without ``mac`` as JSON: keys sorted, no spaces, non-ASCII escaped."""
    body = {k: v for k, v in payload.items() if k != "mac"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode()


def mac(key: bytes, *, sender: str, receiver: str, game: str, kind: str, payload: dict) -> str:
    """HMAC-SHA256 (64 lowercase hex digits) over ``fairyboard-remote-1 \\n sender \\n receiver
    \\n game \\n kind \\n`` followed by :func:`canonical` of the payload."""
    head = b"\n".join([CONTEXT, sender.encode(), receiver.encode(), game.encode(), kind.encode()]) + b"\n"
    return hmac.new(key, head + canonical(payload), hashlib.sha256).hexdigest()


def verify(key: bytes, *, sender: str, receiver: str, game: str, kind: str, payload: Any) -> bool:
    if not isinstance(payload, dict) or not isinstance(payload.get("mac"), str):
        return False
    try:
        want = mac(key, sender=sender, receiver=receiver, game=game, kind=kind, payload=payload)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(want, payload["mac"])


def key_path(journal: Path) -> Path:
    return journal.with_suffix(".key")


def save_key(journal: Path, key: bytes) -> None:
    """Keep the game's key beside its journal (mode 600), so a resumed board still has it."""
    path = key_path(journal)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load_key(journal: Path) -> bytes | None:
    """The game's key, None for a game agreed before games were signed (or a file unreadable)."""
    try:
        text = key_path(journal).read_text().strip()
        key = bytes.fromhex(text)
    except (OSError, ValueError):
        return None
    return key if len(key) == 32 else None
