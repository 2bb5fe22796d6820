"""A game record as PGN, and its moves replayed with their names (SAN).

Used by ``fairyboard games show/export``, the board's page and the club's recorder: one place
that turns a journal into what a chess reader expects.
"""

from __future__ import annotations

import re
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


def sans_of(game: Game) -> list:
    """The (turn, action, SAN) list of the actions ``game`` has played, each named in the
    position it was played from (on a copy: ``game`` is left as it is)."""
    g = game.copy()
    played = []
    while g.history:
        played.append(g.pop())
    out = []
    for a in reversed(played):
        out.append((g.turn, a, g.san(a) if not a.silent else a.text))
        g.push(a)
    return out


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
    """The moves numbered for a person to read (``games show``, the page, the ``moves``
    command): a side's consecutive actions share its number, silent ones are in braces, and
    Black's turn carries its own number (``1... Ke7``) wherever White's turn before it was not
    a single move, so every action reads as its side's. ``clocks`` (per action: [white ms,
    black ms] after it, or None) adds ``{[%clk h:mm:ss]}`` with the mover's time after each
    action."""
    parts = []
    number = start_fullmove
    prev_turn = None
    plain = True                # the turn so far is one move, nothing else
    for i, (turn, action, san) in enumerate(sans):
        if prev_turn is not None and turn == 0 and prev_turn == 1:
            number += 1
        if turn != prev_turn:
            if turn == 0:
                parts.append(f"{number}.")
            elif prev_turn is None or not plain:
                parts.append(f"{number}...")        # Black begins, or White's turn was more than a move
            plain = True
        elif turn == prev_turn:
            plain = False
        if action.silent:
            plain = False
        parts.append("{" + san + "}" if action.silent else san)
        clk = clocks[i] if clocks is not None and i < len(clocks) else None
        if clk is not None:
            parts.append("{[%clk " + clk_text(clk[turn]) + "]}")
        prev_turn = turn
    return " ".join(parts)


#: a move token a PGN reader can take as one move: SAN on up to 12 files (``Nbd7``, ``exd8=Q+``,
#: ``O-O``, a drop ``N@e4``)
_TOKEN = re.compile(r"^(?:[A-Z]?@[a-l]\d{1,2}|O-O(?:-O)?|[A-Z]?[a-l]?\d{0,2}x?[a-l]\d{1,2}(?:=[A-Z])?)[+#]?$")
NULL_MOVE = "--"


def turns_of(sans) -> list[tuple[int, list]]:
    """The actions grouped into turns: (side, [(index, action, SAN), ...]) for each run of one
    side's consecutive actions."""
    out: list[tuple[int, list]] = []
    for i, (turn, action, san) in enumerate(sans):
        if out and out[-1][0] == turn:
            out[-1][1].append((i, action, san))
        else:
            out.append((turn, [(i, action, san)]))
    return out


def _comment(text: str) -> str:
    return "{" + text.replace("}", ")") + "}"


def pgn_movetext(sans, start_fullmove: int = 1, clocks=None, several: bool = False) -> str:
    """The moves as a PGN reader takes them, one convention for every family (docs/board-driver.md,
    *PGN*): each turn of a side starts with its move number (``12.`` White, ``12...`` Black
    wherever White's turn before it was not a single move), its moves and drops are SAN tokens,
    a turn with none is the null move ``--``, its other silent actions (purchases, designs,
    inventions, a whole army) follow in one comment, and an ``end`` (or a pass) is not written:
    the next move number ends the turn. ``several``: a turn may hold several moves (Cost
    Progressive), so every Black turn carries its number too and a side's tokens run to the
    next number. ``clocks`` adds ``[%clk h:mm:ss]`` after each turn."""
    parts: list[str] = []
    number = start_fullmove
    prev: int | None = None
    plain = True
    for side, items in turns_of(sans):
        if prev == 1 and side == 0:
            number += 1
        if side == 0:
            parts.append(f"{number}.")
        elif prev is None or not plain:
            parts.append(f"{number}...")
        tokens, notes = [], []
        for _, action, san in items:
            kind = str(action.kind)
            if not action.silent and _TOKEN.match(san):
                tokens.append(san)
            elif kind in ("end", "pass"):
                continue                    # the next move number says the turn is over
            else:
                notes.append(san)
        plain = len(tokens) <= 1 and not notes and not several     # a clock's comment alone leaves Black's number out
        last = items[-1][0]
        clk = clocks[last] if clocks is not None and last < len(clocks) else None
        if clk is not None:
            notes.append("[%clk " + clk_text(clk[side]) + "]")
        parts.extend(tokens or [NULL_MOVE])
        if notes:
            parts.append(_comment(" ".join(notes)))
        prev = side
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


#: the PGN standard's Termination values, by how the game ended
_PGN_TERMINATION = {Termination.TIME_FORFEIT: "time forfeit", Termination.ADJUDICATED: "adjudication",
                    Termination.OTHER: "rules infraction"}


def ending_of(rec: GameRecord, game: Game, damage: str | None = None) -> tuple[str, str | None]:
    """The PGN ``Termination`` tag and the ending in words (the movetext's last comment): the
    standard's values only -- ``normal`` (checkmate, stalemate, resignation, an agreed draw,
    Chego's count ...: the words say which), ``time forfeit``, ``adjudication`` (a match ended
    a game that went on too long), ``rules infraction`` (a match's forfeit: an illegal action),
    ``abandoned``, and ``unterminated`` (no words) while the game goes on or where its record is
    damaged. The words are the replayed outcome's (:attr:`Outcome.reason`: checkmate, both
    players passed: 21-19 points ...); a result the replay cannot reach (a match's
    adjudication or forfeit, an abandoned game) keeps the words of its result record."""
    if damage or rec.result is None:
        return "unterminated", None
    out = outcome_of(rec, game)
    if out is not None and out.result == rec.result:
        return _PGN_TERMINATION.get(out.termination, "normal"), out.reason
    words = rec.reason or None
    w = (words or "").lower()
    if rec.result == "*" or w == "abandoned":
        return "abandoned", words or "abandoned"
    if w.startswith("adjudicated"):
        return "adjudication", words
    if w == str(Termination.TIME_FORFEIT):
        return "time forfeit", words
    if " played " in w:                 # a match's forfeit (engine.game.Forfeit's words)
        return "rules infraction", words
    return "normal", words


def termination_tag(rec: GameRecord, game: Game, damage: str | None = None) -> str:
    """The PGN ``Termination`` tag (:func:`ending_of`)."""
    return ending_of(rec, game, damage)[0]


def player_tag(name: object, side: int) -> str:
    """A player as the PGN ``White``/``Black`` tag names it: ``?`` when nobody was named (the
    journal's default "White"/"Black"), the computer as its engine and level (``fairyboard
    builtin level 1``, ``Fairy-Stockfish level 5``), anyone else by their name."""
    text = str(name or "").strip()
    if not text or text == ("White", "Black")[side]:
        return "?"
    from board_driver.opponents.players import PlayerError, engine_title, parse_spec
    head = text.split(":", 1)[0].strip().lower()
    if head in ("builtin", "random", "fsf", "uci", "computer") and (head == text.lower() or ":" in text):
        try:
            return engine_title(parse_spec(text))
        except PlayerError:
            return text
    return text


def start_tags(rec: GameRecord, variant) -> list[tuple[str, str]]:
    """``SetUp "1"`` and ``FEN`` when the game did not start from the variant's normal start
    position; nothing when it did."""
    fen = rec.header.get("start_fen")
    if not fen:
        return []
    try:
        if new_game(variant, fen).fen() == new_game(variant).fen():
            return []
    except (EngineError, ValueError):
        pass
    return [("SetUp", "1"), ("FEN", fen)]


def time_control_tags(tc: str) -> list[tuple[str, str]]:
    """The PGN tags of a game's time control: ``TimeControl`` alone; with time odds (``W,B``)
    ``TimeControl "?"`` (the standard's tag has a single value, and "?" is its "unknown": a
    reader that knows only it is not told a wrong control) and each side's own in
    ``WhiteTimeControl`` and ``BlackTimeControl``, in the same syntax."""
    white, comma, black = tc.partition(",")
    if not comma:
        return [("TimeControl", tc)]
    return [("TimeControl", "?"), ("WhiteTimeControl", white.strip()), ("BlackTimeControl", black.strip())]


def pgn_of(rec: GameRecord) -> str:
    variant, game, sans, problem = replay(rec)
    damage = rec.damage or problem
    pl = rec.header.get("players") or {}
    date = str(rec.header.get("date", "????.??.??"))[:10].replace("-", ".")
    result = "*" if damage else _pgn_result(rec.result)
    tags = [("Event", "fairyboard game"), ("Site", "fairyboard"), ("Date", date), ("Round", "-"),
            ("White", player_tag(pl.get("white"), 0)), ("Black", player_tag(pl.get("black"), 1)),
            ("Result", result),
            # python-chess and most readers know orthodox chess as "Standard"
            ("Variant", "Standard" if rec.variant == "orthodox" else rec.variant),
            ("FairyboardVariant", rec.variant), *start_tags(rec, variant)]
    tc = (rec.header.get("clock") or {}).get("tc") if isinstance(rec.header.get("clock"), dict) else None
    if tc:
        tags.extend(time_control_tags(str(tc)))
    if rec.result and rec.result != result and not damage:
        tags.append(("VariantResult", rec.result))
    termination, words = ending_of(rec, game, damage)
    tags.append(("Termination", termination))
    tags.append(("GameId", rec.id))
    head = "\n".join(f'[{k} "{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"]' for k, v in tags)
    body = pgn_movetext(sans, fullmove(rec.header.get("start_fen")), rec.clocks if tc else None,
                        several=variant.family == "cost-progressive")
    if damage:
        body += " " + _comment("the game record is damaged from here: " + damage)
    elif words:
        body += " " + _comment(words)
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
