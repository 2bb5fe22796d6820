"""The terminal board is readable: every piece on every square colour the console draws (light,
dark, the last move, every LED layer) reaches the WCAG contrast of 4.5:1, computed from the
escape codes the console prints (truecolor as given; the 16 and 256 palette colours as xterm's
default palette shows them, bold 30-37 as xterm's bright colours)."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest
from drivertools import Table

from board_driver.devices import LedImage
from board_driver.referee.scene import Palette
from board_driver.sim.console import render_board

RGB = tuple[int, int, int]

# xterm's default 16 colours (XTerm-col.ad / charproc.c)
XTERM16: list[RGB] = [
    (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
    (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255),
    (255, 255, 255)]


def xterm256(n: int) -> RGB:
    if n < 16:
        return XTERM16[n]
    if n < 232:
        n -= 16
        level = [0, 95, 135, 175, 215, 255]
        return level[n // 36], level[n // 6 % 6], level[n % 6]
    g = 8 + 10 * (n - 232)
    return g, g, g


def sgr_colours(codes: list[int]) -> tuple[RGB | None, RGB | None]:
    """(foreground, background) an SGR sequence sets, as xterm draws them."""
    fg = bg = None
    bold = False
    basic_fg = None
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 1:
            bold = True
        elif 30 <= c <= 37:
            basic_fg = c - 30
        elif 90 <= c <= 97:
            fg = XTERM16[c - 90 + 8]
        elif 40 <= c <= 47:
            bg = XTERM16[c - 40]
        elif 100 <= c <= 107:
            bg = XTERM16[c - 100 + 8]
        elif c in (38, 48):
            if codes[i + 1] == 2:
                rgb = (codes[i + 2], codes[i + 3], codes[i + 4])
                i += 4
            else:
                rgb = xterm256(codes[i + 2])
                i += 2
            if c == 38:
                fg, basic_fg = rgb, None
            else:
                bg = rgb
        i += 1
    if basic_fg is not None:
        fg = XTERM16[basic_fg + (8 if bold else 0)]      # xterm's boldColors: bold 30-37 are the bright ones
    return fg, bg


def luminance(rgb: RGB) -> float:
    def lin(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(a: RGB, b: RGB) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


CELL = re.compile(r"\x1b\[([0-9;]*)m (.) \x1b\[0m")


def piece_cells(text: str) -> list[tuple[str, RGB, RGB]]:
    """(glyph, foreground, background) of every cell holding a piece (a letter, a piece set down
    where the game has none ``*``, a square whose piece is lifted ``_``)."""
    out = []
    for m in CELL.finditer(text):
        glyph = m.group(2)
        if glyph.isalpha() or glyph in "*_":
            fg, bg = sgr_colours([int(x) for x in m.group(1).split(";") if x])
            assert fg is not None and bg is not None, f"{glyph!r} drawn in the terminal's default colours"
            out.append((glyph, fg, bg))
    return out


def assert_readable(text: str, what: str) -> set[RGB]:
    cells = piece_cells(text)
    assert cells, what
    for glyph, fg, bg in cells:
        assert ratio(fg, bg) >= 4.5, f"{what}: {glyph!r} {fg} on {bg}: {ratio(fg, bg):.2f}:1"
    # and the sides still look different: White's pieces lighter than Black's
    white = {fg for g, fg, _ in cells if g.isupper()}
    black = {fg for g, fg, _ in cells if g.islower()}
    if white and black:
        assert min(luminance(c) for c in white) > max(luminance(c) for c in black), (white, black)
    return {bg for _, _, bg in cells}


def test_pieces_read_on_the_light_and_dark_squares_and_the_last_move():
    t = Table("tomorrow-3")
    squares = assert_readable(render_board(t.session, t.board, color=True), "the start position")
    assert len(squares) >= 2                                  # light and dark squares are told apart
    t.move("e2", "e4").settle().move("e7", "e5").settle()     # the report: the e5 pawn on the last move
    text = render_board(t.session, t.board, color=True)
    assert t.led("e5") == "last move"
    assert_readable(text, "after e2-e4 e7-e5")
    t.lift("g1")                                              # a lifted piece, its targets lit
    t.place("h6")                                             # and a piece set down where it may not go
    assert_readable(render_board(t.session, t.board, color=True), "a piece in the hand, then set down")


@pytest.mark.parametrize("layer", [f.name for f in fields(Palette)])
def test_pieces_read_on_every_led_colour(layer):
    t = Table("orthodox")
    rgb = getattr(t.session.settings.palette, layer)
    n = len(t.session.leds.colors)
    for blink in (0, 1):
        t.session.leds = LedImage((rgb,) * n, (blink,) * n)   # every square lit in the layer's colour
        assert_readable(render_board(t.session, t.board, color=True), f"{layer} {rgb}")


def test_an_unknown_variant_is_one_line_before_anything_is_printed(fb, data):
    code, out, err = fb("play", "--variant", "nonexistent")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fairyboard play: error: unknown variant 'nonexistent'")
    code, out, err = fb("play", "--move-time", "-3")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fairyboard play: error: argument --move-time: seconds a move must be "
                                                    "0.01 to 3600, not -3")
