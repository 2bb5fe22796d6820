"""A game read from PGN, its moves matched by the engine, to play on from any of its turns
(``fairyboard play --pgn FILE --ply N``, ``serve --pgn``; docs/board-driver.md, *Starting from
a PGN*).

It reads what :mod:`board_driver.pgn` writes, for every family: the variant from the
``FairyboardVariant`` tag (else ``Variant``, else orthodox), the start from ``FEN``; each turn
of a side begins at its move number (``12.``, ``12...``; Black's turn after a single White
move may have none), holds its SAN tokens (``--`` for none) and one comment with its other
actions (``buy:N``, ``design:3=W``); the next turn ends it (``end`` or ``pass``). Each token is
matched against the legal actions by the engine's own SAN, so the replay is the engine's, and
the new game keeps the actions as its history (takeback works as in any game).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from board_driver.config import load_variant
from board_driver.errors import BoardDriverError
from engine.errors import EngineError
from engine.game import find_action, new_game, start_problem


class PgnImportError(BoardDriverError, ValueError):
    """A PGN that cannot be played on: unreadable, an action that does not match, a ply past
    its end."""


_TAG = re.compile(r'^\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]\s*$')
_ITEM = re.compile(r"\{[^}]*\}|;[^\n]*|\(|\)|\$\d+|(\d+)(\.\.\.|\.)|[^\s{}();]+")
_RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_CLK = re.compile(r"\[%[^\]]*\]")
_NULLS = ("--", "Z0", "null")
_ACTION_NOTE = re.compile(r"^(?:[a-z][\w-]*:\S+|[^\s@]+@[a-l]\d{1,2}(?:,[^\s@]+@[a-l]\d{1,2})*)$")


@dataclass
class Turn:
    side: int | None                # 0 White, 1 Black, None: whoever is to play
    number: int
    tokens: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    words: str = ""                 # the comment's text as written (for the ending's words)

    def label(self) -> str:
        return f"{self.number}{'.' if self.side != 1 else '...'}"


@dataclass
class PgnGame:
    tags: dict[str, str]
    turns: list[Turn]


def _first_game(text: str) -> tuple[dict[str, str], str]:
    tags: dict[str, str] = {}
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].strip().startswith("["):
        m = _TAG.match(lines[i].strip())
        if m is None:
            raise PgnImportError(f"line {i + 1}: not a PGN tag: {lines[i].strip()[:60]!r}")
        tags[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
        i += 1
    body: list[str] = []
    for line in lines[i:]:
        if line.strip().startswith("[") and any(b.strip() for b in body):
            break                   # the next game's tags: only the first game is read
        if not line.startswith("%"):
            body.append(line)
    return tags, "\n".join(body)


def parse(text: str) -> PgnGame:
    """The first game of a PGN text: its tags and its turns (PgnImportError when it is not PGN)."""
    tags, body = _first_game(text)
    turns: list[Turn] = []
    depth = 0                       # inside a variation: skipped
    pending_side: int | None = None
    seen_number = False
    for m in _ITEM.finditer(body):
        item = m.group(0)
        if item == "(":
            depth += 1
            continue
        if item == ")":
            depth = max(0, depth - 1)
            continue
        if depth or item.startswith(";") or item.startswith("$"):
            continue
        if item.startswith("{"):
            if turns:
                inner = _CLK.sub("", item[1:-1]).strip()
                if inner:
                    # a turn's other actions (buy:N, design:3=W, an army N@e1,B@f1); other words
                    # (a reader's annotation, the ending) are not actions
                    turns[-1].notes.extend(w for w in inner.split() if _ACTION_NOTE.match(w))
                    turns[-1].words = (turns[-1].words + " " + inner).strip()
            continue
        if m.group(1) is not None:
            pending_side = 1 if m.group(2) == "..." else 0
            seen_number = True
            turns.append(Turn(pending_side, int(m.group(1))))
            continue
        if item in _RESULTS:
            break
        if item.endswith((".", "...")) or not re.match(r"^[A-Za-z0-9@\-=+#!?/:,]+$", item):
            raise PgnImportError(f"not a PGN move or move number: {item[:40]!r}")
        if not turns:
            turns.append(Turn(None, 1))
        turns[-1].tokens.append(item)
    if not tags and not seen_number:
        raise PgnImportError("no PGN tags and no move numbers: not a PGN game")
    return PgnGame(tags, turns)


def _split(turns: list[Turn], several: bool) -> list[Turn]:
    """Black's turns that follow a single White move without a number of their own: White's
    turn ``n.`` with more than one token and no ``n...`` next is one move of White's and the
    rest Black's (the export numbers Black's turn wherever White's was more). ``several``:
    a family whose turn holds several moves numbers every Black turn (Cost Progressive)."""
    out: list[Turn] = []
    for i, t in enumerate(turns):
        nxt = turns[i + 1] if i + 1 < len(turns) else None
        black_numbered = nxt is not None and nxt.side == 1 and nxt.number == t.number
        if t.side == 0 and len(t.tokens) > 1 and not black_numbered and not several:
            white = Turn(0, t.number, t.tokens[:1])
            black = Turn(1, t.number, t.tokens[1:], t.notes, t.words)
            out += [white, black]
        else:
            out.append(t)
    return out


@dataclass
class Imported:
    """What the new game starts with: the variant, the start position, the actions up to the
    ply asked for, and the players the PGN names."""

    variant: str
    fen: str | None
    actions: list[str]
    players: dict[str, str]
    turns: int                      # turns replayed
    total: int                      # turns in the PGN


def _variant_name(tags: dict[str, str]) -> str:
    name = tags.get("FairyboardVariant") or tags.get("Variant") or "orthodox"
    if name.strip().lower() in ("standard", "chess", "normal", "orthodox", "from position"):
        return "orthodox"
    return name.strip()


def _play_turn(game, turn: Turn, ends: bool, last: bool) -> str | None:
    """Play ``turn`` on ``game`` (the side's tokens and noted actions, in an order the rules
    allow, then its end when ``ends``); None, or what does not match."""
    side = game.turn
    tokens = [t for t in turn.tokens if t not in _NULLS]
    notes = list(turn.notes)

    def search(ti: int, left: list[str]) -> bool:
        if ti == len(tokens) and not left:
            return True
        if game.outcome() is not None or game.turn != side:
            return False
        if ti < len(tokens):
            a = find_action(list(game.legal_actions()), tokens[ti], san=game.san)
            if a is not None and not a.silent:
                game.push(a)
                if search(ti + 1, left):
                    return True
                game.pop()
        for j, text in enumerate(left):
            try:
                a = game.parse(text)
            except (EngineError, ValueError):
                continue
            game.push(a)
            if search(ti, left[:j] + left[j + 1:]):
                return True
            game.pop()
        return False

    depth = len(game.history)
    if not search(0, notes):
        if last and notes and search(0, []):
            notes = []              # the last comment is the ending's words (checkmate ...)
        else:
            while len(game.history) > depth:
                game.pop()
            bad = next((t for t in tokens if _matches(game, t) is None), None)
            if bad is not None and bad == tokens[0]:
                return f"{bad!r} is not a legal move here"
            return (f"{' '.join(turn.tokens + turn.notes)!r} cannot be played as "
                    f"{'White' if side == 0 else 'Black'}'s turn here")
    nothing = not tokens and not notes
    if (ends or nothing) and game.turn == side and game.outcome() is None:
        end = next((a for a in game.legal_actions() if str(a.kind) in ("end", "pass")), None)
        if end is None:
            return "the turn does not end here"
        game.push(end)
    return None


def _matches(game, token: str):
    return find_action(list(game.legal_actions()), token, san=game.san)


def read(path: str, ply: int | None = None) -> Imported:
    """The game of the PGN file ``path`` (its first game) replayed up to ``ply`` turns (None:
    all of them). PgnImportError says what is wrong: the file, a move that does not match (its
    move number and token), a ply past the end, a position where the game is already over."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace") if path != "-" else _stdin()
    except OSError as exc:
        raise PgnImportError(f"--pgn {path}: cannot read it: {exc.strerror or exc}") from None
    try:
        pg = parse(text)
    except PgnImportError as exc:
        raise PgnImportError(f"--pgn {path}: {exc}") from None
    name = _variant_name(pg.tags)
    try:
        variant = load_variant(name)
    except (OSError, ValueError, BoardDriverError) as exc:
        raise PgnImportError(f"--pgn {path}: variant {name!r}: {exc}") from None
    fen = pg.tags.get("FEN") or None
    try:
        game = new_game(variant, fen)
    except (EngineError, ValueError) as exc:
        raise PgnImportError(f"--pgn {path}: its FEN cannot start a {variant.name} game: {exc}") from None
    if fen is not None and start_problem(game) is not None:
        raise PgnImportError(f"--pgn {path}: its FEN cannot start a {variant.name} game: {start_problem(game)}")
    turns = _split(pg.turns, several=variant.family == "cost-progressive")
    total = len(turns)
    if ply is None:
        ply = total
    if ply < 0 or ply > total:
        raise PgnImportError(f"--ply {ply}: the game in {path} has {total} turns (half-moves); "
                             f"say 0 to {total}")
    for i, turn in enumerate(turns[:ply]):
        if turn.side is not None and turn.side != game.turn:
            raise PgnImportError(f"--pgn {path}: move {turn.label()} is "
                                 f"{'White' if turn.side == 0 else 'Black'}'s, but "
                                 f"{'White' if game.turn == 0 else 'Black'} is to play there")
        if game.outcome() is not None:
            raise PgnImportError(f"--pgn {path}: move {turn.label()}: the game is already over there")
        label = f"{turn.number}{'.' if game.turn == 0 else '...'}"
        why = _play_turn(game, turn, ends=i + 1 < total, last=i + 1 == total)
        if why is not None:
            raise PgnImportError(f"--pgn {path}: move {label} {' '.join(turn.tokens) or '--'}: {why}")
    out = game.outcome()
    if out is not None:
        raise PgnImportError(f"--pgn {path}: the game is over after {ply} turns ({out.result}, {out.reason}): "
                             f"say an earlier --ply to play on")
    players = {}
    for side in ("white", "black"):
        v = (pg.tags.get(side.capitalize()) or "").strip()
        if v and v != "?":
            players[side] = v
    return Imported(variant.name, fen, [a.text for a in game.history], players, ply, total)


def _stdin() -> str:
    import sys
    return sys.stdin.read()
