"""A game record as PGN, and its moves replayed with their names (SAN).

Used by ``fairyboard games show/export``, the board's page and the club's recorder: one place
that turns a journal into what a chess reader expects.
"""

from __future__ import annotations

from fractions import Fraction

from board_driver.config import load_variant
from board_driver.journal import GameRecord
from engine.contract import Game, Termination
from engine.errors import EngineError
from engine.game import Outcome, new_game


def replay(rec: GameRecord):
    """The variant, the game replayed and its (turn, action, SAN) list, up to the first action
    that cannot be replayed; and what is wrong there (``"<file>: line n: ..."``) or None."""
    variant = load_variant(rec.variant)
    game = new_game(variant, rec.header.get("start_fen"))
    sans = []
    for i, text in enumerate(rec.actions):
        try:
            a = game.parse(text)
            sans.append((game.turn, a, game.san(a) if not a.silent else a.text))
            game.push(a)
        except (EngineError, ValueError) as exc:
            line = rec.action_lines[i] if i < len(rec.action_lines) else "?"
            return variant, game, sans, f"{rec.path}: line {line}: {text!r} cannot be played here: {exc}"
    return variant, game, sans, None


def clk_text(ms: int) -> str:
    """A time left as PGN's ``%clk`` writes it: ``h:mm:ss``, with the milliseconds after a
    point when there are any (``0:00:56.6``), so the figure is exact."""
    ms = max(0, ms)
    s = ms // 1000
    out = f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    if ms % 1000:
        out += "." + f"{ms % 1000:03d}".rstrip("0")
    return out


def movetext(sans, start_fullmove: int = 1, clocks=None) -> str:
    """Numbered moves; a side's consecutive actions share a number; silent ones are comments.
    ``clocks`` (per action: [white ms, black ms] after it, or None) adds ``{[%clk h:mm:ss]}``
    with the mover's time after each action."""
    parts = []
    number = start_fullmove
    prev_turn = None
    for i, (turn, action, san) in enumerate(sans):
        if prev_turn is not None and turn == 0 and prev_turn == 1:
            number += 1
        if turn != prev_turn:
            if turn == 0:
                parts.append(f"{number}.")
            elif prev_turn is None:
                parts.append(f"{number}...")        # Black begins (a FEN with Black to move)
        parts.append("{" + san + "}" if action.silent else san)
        clk = clocks[i] if clocks is not None and i < len(clocks) else None
        if clk is not None:
            parts.append("{[%clk " + clk_text(clk[turn]) + "]}")
        prev_turn = turn
    return " ".join(parts)


def fullmove(fen: str | None) -> int:
    try:
        return int((fen or "").split()[5])
    except (IndexError, ValueError):
        return 1


def _pgn_result(result: str | None) -> str:
    if result is None or result == "*":
        return "*"
    if result in ("1-0", "0-1", "1/2-1/2"):
        return result
    try:
        w, b = (Fraction(x) for x in result.split("-"))
    except (ValueError, ZeroDivisionError):
        return "*"
    return "1-0" if w > b else "0-1" if b > w else "1/2-1/2"


_COLORS = ("white", "black")


def _standing_end(rec: GameRecord) -> dict | None:
    """The resign, draw or flag record still standing at the end of the journal (a takeback or
    a reopen undoes it), or None."""
    end = None
    for r in rec.records:
        t = r.get("type")
        if t in ("resign", "draw", "flag"):
            end = r
        elif t in ("push", "pop", "reopen"):
            end = None
    return end


def outcome_of(rec: GameRecord, game: Game) -> Outcome | None:
    """How the game ``rec`` (replayed into ``game``, see :func:`replay`) ended: by a
    resignation, an agreed draw or a flag fall the journal records, else by the rules; None
    while it goes on. ``game`` takes the resignation."""
    end = _standing_end(rec)
    if end is not None and game.outcome() is None:
        color = end.get("color")
        if end["type"] == "draw":
            game.resign(game.turn, Termination.AGREEMENT, draw=True)
        elif color in _COLORS and end["type"] == "resign":
            game.resign(_COLORS.index(color))
        elif color in _COLORS:
            game.resign(_COLORS.index(color), Termination.TIME_FORFEIT, draw=bool(end.get("draw")))
    return game.outcome()


def termination_tag(rec: GameRecord, game: Game, damage: str | None = None) -> str:
    """The PGN ``Termination`` tag: the ending's text (:attr:`Outcome.reason`: checkmate,
    resignation, time forfeit, both players passed: 5-4 points ...) derived from the outcome
    of the game replayed; "unterminated" while it is in progress or damaged. A result the
    replay cannot reach (a match's adjudication or forfeit, an abandoned game) keeps the words
    its result record gives."""
    if damage or rec.result is None:
        return "unterminated"
    out = outcome_of(rec, game)
    if out is not None and out.result == rec.result:
        return out.reason
    return rec.reason or "normal"


def pgn_of(rec: GameRecord) -> str:
    variant, game, sans, problem = replay(rec)
    damage = rec.damage or problem
    pl = rec.header.get("players") or {}
    date = str(rec.header.get("date", "????.??.??"))[:10].replace("-", ".")
    result = "*" if damage else _pgn_result(rec.result)
    tags = [("Event", "fairyboard game"), ("Site", "fairyboard"), ("Date", date), ("Round", "-"),
            ("White", pl.get("white", "?")), ("Black", pl.get("black", "?")), ("Result", result),
            # python-chess and most readers know orthodox chess as "Standard"
            ("Variant", "Standard" if rec.variant == "orthodox" else rec.variant),
            ("FairyboardVariant", rec.variant),
            ("SetUp", "1"), ("FEN", rec.header.get("start_fen", variant.start_fen))]
    tc = (rec.header.get("clock") or {}).get("tc") if isinstance(rec.header.get("clock"), dict) else None
    if tc:
        tags.append(("TimeControl", tc))
    if rec.result and rec.result != result and not damage:
        tags.append(("VariantResult", rec.result))
    tags.append(("Termination", termination_tag(rec, game, damage)))
    tags.append(("GameId", rec.id))
    head = "\n".join(f'[{k} "{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"]' for k, v in tags)
    body = movetext(sans, fullmove(rec.header.get("start_fen")), rec.clocks if tc else None)
    if damage:
        body += " {the game record is damaged from here: " + damage.replace("}", ")") + "}"
    text = (body + " " + result).strip()
    lines, line = [], ""
    for word in text.split(" "):
        if len(line) + len(word) + 1 > 79 and line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return head + "\n\n" + "\n".join(lines) + "\n"
