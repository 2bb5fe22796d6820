"""The simulator's terminal: draws the board with its pieces and LEDs, reads what the player does.

Drawing: each square shows what stands on the simulated board -- the engine's piece where
the board agrees with the game (upper case White, lower case Black), ``*`` for a piece set
down where the game has none yet, ``_`` for a square whose piece is lifted -- on the LED's
colour (ANSI 24-bit colour on a terminal; on plain output an ``LEDs:`` legend lists the lit
squares per layer). Physical files outside an 8-file game are drawn too, unlabelled.

Reading: ``lift e2``, ``place e4``, ``e2-e4`` or ``e2e4`` (lift e2, place e4; if e4 is
occupied its piece is lifted first, as a capture), several separated by commas; anything
else is a console command for the session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from board_driver.devices import FAST, SLOW, LedImage
from board_driver.referee.scene import Palette
from board_driver.referee.texts import state_lines
from engine.geometry import FILE_LETTERS

if TYPE_CHECKING:
    from engine.contract import Game
    from board_driver.referee.session import Session

# any letter and number, so that a square off the board (z1, e9) is named as such, not taken
# for a command
_MOVE = re.compile(r"^([a-z]\d{1,3})\s*[-x]?\s*([a-z]\d{1,3})$")
_PROMOTION = re.compile(r"^([a-z]\d{1,3})\s*[-x]?\s*([a-z]\d{1,3})\s*=?\s*([a-z])$")
_LIFT = {"lift", "remove", "take", "up"}
_PLACE = {"place", "put", "drop", "down"}


@dataclass(frozen=True, slots=True)
class PhysicalOp:
    kind: str        # lift | place | move
    a: str
    b: str = ""


def parse_physical(line: str) -> list[PhysicalOp] | None:
    """The board actions a line asks for, or None when it is a command."""
    parts = [p.strip() for p in re.split(r"[,;]", line.strip().lower()) if p.strip()]
    if not parts:
        return None
    ops: list[PhysicalOp] = []
    for p in parts:
        m = _MOVE.match(p)
        if m:
            ops.append(PhysicalOp("move", m.group(1), m.group(2)))
            continue
        m = _PROMOTION.match(p)
        if m:
            raise ValueError(f"{p!r}: move the pawn with {m.group(1)}-{m.group(2)}, then type choose {m.group(3)} "
                             f"(or choose {m.group(3)} first)")
        words = p.split()
        if len(words) == 2 and words[0] in _LIFT | _PLACE and re.match(r"^[a-z]\d{1,3}$", words[1]):
            ops.append(PhysicalOp("lift" if words[0] in _LIFT else "place", words[1]))
            continue
        if len(words) == 2 and words[0] in _LIFT | _PLACE and len(ops) == 0 and len(parts) == 1:
            raise ValueError(f"{words[1]!r} is not a square: write {words[0]} e2 (a file letter, then a rank)")
        if len(ops) == 0:
            return None
        raise ValueError(f"{p!r}: write lift e2, place e4 or e2-e4")
    return ops


def render_board(session: Session, board, *, color: bool, palette: Palette | None = None) -> str:
    """The physical board as text: pieces, lifted squares and LED colours."""
    layout = session.layout
    prof = layout.profile
    geo = layout.geometry
    frame: LedImage = session.leds
    palette = palette or session.settings.palette
    pm = session.game.piece_map()
    lines = []
    legend: dict[str, list[str]] = {}
    for r in range(prof.ranks - 1, -1, -1):
        row = []
        label = ""
        for f in range(prof.files):
            phys = r * prof.files + f
            sq = layout.game_square(phys)
            if sq is None:
                ch = " "
            else:
                label = str(geo.rank_of(sq) + 1)
                on = board.sensor(sq) in board.closed
                if sq in pm and on:
                    letter, c = pm[sq]
                    ch = letter.upper() if c == 0 else letter.lower()
                elif on:
                    ch = "*"
                elif sq in pm:
                    ch = "_"
                else:
                    ch = "."
            rgb = frame.colors[phys]
            blink = frame.blink[phys]
            lit = rgb != (0, 0, 0)
            if lit and sq is not None:
                name = session.led_layers[phys] or palette.name_of(rgb)
                legend.setdefault(name + (" (blinking)" if blink in (SLOW, FAST) else ""), []).append(geo.name(sq))
            if color:
                cell = f" {ch} "
                fg = "1;97" if ch.isupper() else "1;30" if ch.isalpha() else "37"
                if lit:
                    if ch.isalpha() and sum(rgb) > 300:
                        fg = "1;30"
                    blink_code = ";5" if blink in (SLOW, FAST) else ""
                    cell = f"\x1b[48;2;{rgb[0]};{rgb[1]};{rgb[2]};{fg}{blink_code}m{cell}\x1b[0m"
                elif sq is None:
                    cell = "\x1b[90m · \x1b[0m"
                else:
                    shade = (100, 75, 50) if (geo.file_of(sq) + geo.rank_of(sq)) % 2 == 0 else (150, 120, 85)
                    if not ch.isalpha():
                        fg = "38;2;60;45;30"
                    cell = f"\x1b[48;2;{shade[0]};{shade[1]};{shade[2]};{fg}m{cell}\x1b[0m"
                row.append(cell)
            else:
                row.append(ch)
        prefix = f"{label:>2} " if label else "   "
        lines.append(prefix + ("".join(row) if color else " ".join(row)))
    files = []
    for f in range(prof.files):
        sq = None
        for r in range(prof.ranks):
            sq = layout.game_square(r * prof.files + f)
            if sq is not None:
                break
        files.append(FILE_LETTERS[geo.file_of(sq)] if sq is not None else " ")
    lines.append("   " + ("".join(f" {x} " for x in files) if color else " ".join(files)))
    pieces = piece_legend(session.game)
    if pieces:
        lines.append(pieces)
    if not color and legend:
        lines.append("LEDs: " + "; ".join(f"{k} {' '.join(v)}" for k, v in legend.items()))
    return "\n".join(lines)


_ORTHODOX = {("r", "rook"), ("n", "knight"), ("b", "bishop"), ("q", "queen"), ("k", "king"), ("p", "pawn")}


def piece_legend(game: Game) -> str | None:
    """``Pieces: R rook, G giraffe, L camel ...`` for a variant whose letters are not the
    orthodox ones (the 12x8 armies); None otherwise (and for csipgs, whose pieces are designs)."""
    if getattr(game, "family", None) == "csipgs":
        return None
    try:
        pieces = [(p.letter.lower(), p.name) for p in game.variant.pieces]
    except AttributeError:
        return None
    if not pieces or set(pieces) <= _ORTHODOX:
        return None
    return "Pieces: " + ", ".join(f"{letter.upper()} {name.replace('-', ' ')}" for letter, name in pieces) + \
        " (upper case White, lower case Black)"


def status_lines(session: Session) -> list[str]:
    g = session.game
    out = session.outcome()
    lines = []
    if out is not None:
        lines.append(f"Game over: {out.result} ({out.reason}). Type new for a new game, takeback to go on.")
    else:
        side = "White" if g.turn == 0 else "Black"
        extra = " (in check)" if g.in_check() else ""
        lines.append(f"{side} to play{extra}. Moves: {len(g.history)}.")
    lines.extend(state_lines(g))
    clock = session.time.line()
    if clock is not None:
        lines.append(clock)
    p = session.pending()
    if p is not None:
        if p["type"] == "prompt":
            lines.append(p["text"])
        elif p["type"] == "mismatch":
            if p.get("why"):
                lines.append(f"Not allowed: {p['why']}.")
            lines.append("Fix the board: " + p["text"])
        elif p["type"] == "move":
            if p["candidates"]:
                lines.append("In hand: " + ", ".join(p["lifted"]) + " -> " + ", ".join(p["candidates"][:8])
                             + (" ..." if len(p["candidates"]) > 8 else ""))
    return lines
