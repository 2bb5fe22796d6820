"""Test helpers: a session on a simulated board in virtual time, and random game scripts."""

from __future__ import annotations

import random
from pathlib import Path

from board_driver.config import load_variant
from board_driver.host import lifecycle
from board_driver.journal import GameStore
from board_driver.referee.layout import Layout
from board_driver.referee.runner import Display, pump, settle
from board_driver.referee.session import Session
from board_driver.settings import DriverSettings, load_profile, load_settings
from board_driver.sim.board import SimulatedBoard, VirtualClock
from board_driver.sim.events import play_events
from engine.game import new_game


class Table:
    """A game on the simulated board: move pieces, type commands, look at moves and LEDs."""

    def __init__(self, variant: str = "orthodox", *, fen: str | None = None, data: Path | None = None,
                 settings: DriverSettings | None = None, profile=None):
        self.settings = settings or load_settings()
        self.profile = profile or load_profile("sim")
        self.clock = VirtualClock(0)
        v = load_variant(variant)
        start = new_game(v, fen).occupancy()
        if data is not None:
            self.store = GameStore(data)
            self.session = lifecycle.start(self.store, variant, profile=self.profile, settings=self.settings,
                                         fen=fen, occupancy=start)
        else:
            self.store = None
            self.session = Session(new_game(v, fen), variant_name=variant,
                                   layout=Layout.place(self.profile, v.geometry), settings=self.settings,
                                   san_notices=False)
        self.board = SimulatedBoard(self.session.layout, clock=self.clock,
                                    closed=self.session.layout.closed_sensors(start))
        self.display = Display(self.board)
        self.display.update(self.session)

    # -- the player's hands -------------------------------------------------------------------
    def wait(self, ms: int) -> Table:
        self.clock.advance_to(self.clock() + ms)
        pump(self.session, self.board, self.display, self.clock())
        return self

    def lift(self, *squares: str, gap: int = 200) -> Table:
        for sq in squares:
            self.wait(gap)
            self.board.lift(sq)
            pump(self.session, self.board, self.display, self.clock())
        return self.wait(60)

    def place(self, *squares: str, gap: int = 200) -> Table:
        for sq in squares:
            self.wait(gap)
            self.board.place(sq)
            pump(self.session, self.board, self.display, self.clock())
        return self.wait(60)

    def move(self, frm: str, to: str, gap: int = 200) -> Table:
        return self.lift(frm, gap=gap).place(to, gap=gap)

    def say(self, text: str) -> list[str]:
        self.wait(100)
        out = self.session.command(text, self.clock())
        self.display.update(self.session)
        return out

    def settle(self) -> Table:
        settle(self.session, self.display)
        return self

    # -- what the players see -------------------------------------------------------------------
    @property
    def moves(self) -> list[str]:
        return [a.text for a in self.session.game.history]

    @property
    def pending(self):
        return self.session.pending()

    @property
    def status(self) -> str:
        return self.session.verdict.status

    def led(self, square: str) -> str | None:
        """The palette layer lighting a game square, or None when dark."""
        phys = self.session.layout.physical(self.session.game.geometry.parse(square))
        assert self.board.last_frame == self.session.leds      # what the board shows is the scene
        return self.session.led_layers[phys]

    def square(self, square: str) -> int:
        """The physical square (LED frame index) of a game square."""
        return self.session.layout.physical(self.session.game.geometry.parse(square))

    def lit(self) -> dict[str, str]:
        """Every lit game square -> its layer."""
        geo = self.session.game.geometry
        return {geo.name(sq): self.led(geo.name(sq)) for sq in geo.squares() if self.led(geo.name(sq))}

    def blinking(self, square: str) -> bool:
        frame = self.board.last_frame
        phys = self.session.layout.physical(self.session.game.geometry.parse(square))
        return frame.blink[phys] != 0


SPECIAL = ("castle", "en-passant", "promotion")


def random_actions(game, rng: random.Random, plies: int, *, bias: bool = True) -> list:
    """A random legal game from ``game``'s state (which is advanced). With ``bias``, the rare
    kinds (castling, en passant, promotion, drops that kill) and captures are preferred when
    they are legal, so that short games contain them."""
    out = []
    for _ in range(plies):
        legal = game.legal_actions()
        if not legal:
            break
        special = [a for a in legal if a.kind in SPECIAL or (a.kind == "drop" and a.lifts)]
        captures = [a for a in legal if a.lifts & a.places]
        if bias and special and rng.random() < 0.7:
            a = rng.choice(special)
        elif bias and captures and rng.random() < 0.3:
            a = rng.choice(captures)
        else:
            a = rng.choice(legal)
        out.append(a)
        game.push(a)
    return out


def replay_script(variant: str, events, *, fen: str | None = None):
    """Play an event script on a fresh table; returns the table."""
    t = Table(variant, fen=fen)
    play_events(t.session, t.board, t.clock, events, t.display)
    return t
