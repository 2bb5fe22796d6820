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
                if sq is None:
                    row.append("\x1b[90m · \x1b[0m")
                    continue
                if lit:
                    bg = screen_colour(rgb)
                else:
                    bg = DARK_SQUARE if (geo.file_of(sq) + geo.rank_of(sq)) % 2 == 0 else LIGHT_SQUARE
                # White's pieces in white, Black's (and a piece set down or lifted) in black: both
                # readable (WCAG 4.5:1) on every square colour, see screen_colour
                fg = (WHITE_PIECE if ch.isupper() else BLACK_PIECE if ch in "*_" or ch.isalpha()
                      else _dot(bg))
                blink_code = ";5" if lit and blink in (SLOW, FAST) else ""
                bold = "1;" if ch.isalpha() else ""
                row.append(f"\x1b[{bold}48;2;{bg[0]};{bg[1]};{bg[2]};38;2;{fg[0]};{fg[1]};{fg[2]}{blink_code}m"
                           f" {ch} \x1b[0m")
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


# -- colours on the terminal ---------------------------------------------------------------------
# The pieces are drawn in pure white and pure black; every square colour (light, dark, and each
# LED colour, which on the board is dim) is drawn at a relative luminance between 0.1755 and
# 0.1825, where both reach the WCAG contrast of 4.5:1 (white 1.05/(L+0.05), black (L+0.05)/0.05).
# The squares keep their hue: the light squares taupe, the dark ones slate (both muted, so that
# the saturated LED colours stand out), the LEDs their colour.
WHITE_PIECE = (255, 255, 255)
BLACK_PIECE = (0, 0, 0)
_LUMINANCE = (0.1755, 0.1825)


def _linear(c: int) -> float:
    x = c / 255
    return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4


def _encode(x: float) -> int:
    x = min(1.0, max(0.0, x))
    v = 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055
    return round(v * 255)


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG relative luminance of an sRGB colour."""
    r, g, b = (_linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio of two sRGB colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def screen_colour(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """The terminal's colour for a square lit ``rgb``: the same hue at full strength (an LED's
    dim colour as bright as it goes), scaled down (too bright) or mixed with white (too dark) until its luminance is in the band where white and black
    pieces both read at 4.5:1 or more."""
    top = max(rgb)
    if top:
        rgb = tuple(round(c * 255 / top) for c in rgb)     # type: ignore[assignment]  # the LED's hue at full strength
    lin = [_linear(c) for c in rgb]
    target = sum(_LUMINANCE) / 2

    def at(t: float) -> tuple[int, int, int]:
        # t < 1 scales towards black, t > 1 mixes towards white (t - 1 of the way)
        if t <= 1:
            return tuple(_encode(x * t) for x in lin)          # type: ignore[return-value]
        return tuple(_encode(x + (t - 1) * (1 - x)) for x in lin)  # type: ignore[return-value]

    lo, hi = 0.0, 2.0
    out = at(1.0)
    for _ in range(40):
        mid = (lo + hi) / 2
        out = at(mid)
        lum = luminance(out)
        if _LUMINANCE[0] <= lum <= _LUMINANCE[1] and abs(lum - target) < 0.002:
            break
        if lum < target:
            lo = mid
        else:
            hi = mid
    return out


def _dot(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    """The empty square's dot: a shade of the square, darker."""
    return tuple(c * 2 // 3 for c in bg)    # type: ignore[return-value]


LIGHT_SQUARE = screen_colour((180, 150, 125))    # warm taupe; the LED colours are saturated beside it
DARK_SQUARE = screen_colour((115, 130, 155))     # slate


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
        lines.append(f"{side} to play{extra}, move {g.board_state().move_number}.")
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
