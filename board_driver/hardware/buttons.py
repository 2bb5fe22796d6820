"""Push buttons on GPIO that send console commands (optional).

Each button connects its GPIO to ground; the pin is an input with the Pi's pull-up, so it
reads low while pressed. A button sends its ``command`` (any console command: ``choose``,
``end``, ``takeback``, ``pass``, ``help`` ...) when it is pressed; a button that also has a
``hold`` command sends that one instead when held for ``hold_ms``, and its ``command`` on
release if let go sooner. A level counts only after it has held for ``debounce_ms``.

:class:`ButtonDebouncer` is pure (levels and times in, commands out);
:class:`GpioButtons` reads the pins through an injected RPi.GPIO module on each
:meth:`GpioButtons.poll`, which the service calls from its loop or a thread of its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import AbstractSet, Callable

from board_driver.hardware._check import Section
from board_driver.hardware.gpio_matrix import GpioModule, setup_pin, use_bcm
from board_driver.hardware.ticker import Ticker
from board_driver.referee.commands import button_words

COMMANDS = button_words()          # from the one command registry


@dataclass(frozen=True, slots=True)
class Button:
    pin: int
    command: str
    hold: str | None = None


@dataclass(frozen=True, slots=True)
class ButtonsConfig:
    """``hardware.buttons``: the buttons and their timing."""

    buttons: tuple[Button, ...]
    debounce_ms: int = 30
    hold_ms: int = 1000

    @classmethod
    def from_section(cls, s: Section, taken: AbstractSet[int] = frozenset()) -> ButtonsConfig:
        s.only(("pins", "debounce_ms", "hold_ms"))
        raw = s.get("pins")
        if not isinstance(raw, list) or not raw:
            raise s.fail("pins", raw, "must be a list of {pin: GPIO, command: TEXT, hold: TEXT}")
        buttons, seen = [], set()
        for i, item in enumerate(raw):
            b = Section(item, s.source, f"{s.key('pins')}[{i}]")
            b.only(("pin", "command", "hold"))
            pin = b.pin("pin")
            if pin in seen or pin in taken:
                why = (" by SPI0's chip select (CE0): the kernel's SPI driver may drive it on every LED write"
                       if pin == 8 and pin in taken else " by the matrix or LEDs" if pin in taken else "")
                raise b.fail("pin", pin, f"GPIO {pin} is already used{why}")
            seen.add(pin)
            cmd = _command(b, "command")
            hold = _command(b, "hold") if b.has("hold") else None
            buttons.append(Button(pin, cmd, hold))
        return cls(tuple(buttons), s.integer("debounce_ms", 30, 0, 1000), s.integer("hold_ms", 1000, 100, 10000))


def _command(s: Section, key: str) -> str:
    text = s.text(key)
    word = text.split()[0].lower()
    if word not in COMMANDS:
        raise s.fail(key, text, f"not a console command (use one of {', '.join(COMMANDS)})")
    return text


class ButtonDebouncer:
    """Levels in (pressed or not, per button, at time ``t`` ms), commands out. Pure."""

    def __init__(self, config: ButtonsConfig) -> None:
        self.config = config
        n = len(config.buttons)
        self.stable = [False] * n            # debounced: pressed?
        self._raw = [False] * n
        self._since = [0] * n                # when the raw level last changed
        self._pressed_at = [0] * n
        self._held = [False] * n             # the hold command was sent for this press

    def feed(self, t: int, pressed: list[bool]) -> list[str]:
        out = []
        cfg = self.config
        for i, (b, level) in enumerate(zip(cfg.buttons, pressed)):
            if level != self._raw[i]:
                self._raw[i] = level
                self._since[i] = t
            if level != self.stable[i] and t - self._since[i] >= cfg.debounce_ms:
                self.stable[i] = level
                at = self._since[i] + cfg.debounce_ms
                if level:
                    self._pressed_at[i] = at
                    self._held[i] = False
                    if b.hold is None:
                        out.append(b.command)
                elif b.hold is not None and not self._held[i]:
                    out.append(b.command)
            if self.stable[i] and b.hold is not None and not self._held[i] \
                    and t - self._pressed_at[i] >= cfg.hold_ms:
                self._held[i] = True
                out.append(b.hold)
        return out


class GpioButtons:
    """The buttons on GPIO: :meth:`poll` reads them and returns the commands they send."""

    def __init__(self, config: ButtonsConfig, *, gpio: GpioModule, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._gpio, self._clock = gpio, clock
        self._debouncer = ButtonDebouncer(config)
        self._closed = False
        self._ticker = Ticker("fairyboard-buttons")
        use_bcm(gpio)
        for b in config.buttons:
            setup_pin(gpio, b.pin, gpio.IN, pull_up_down=gpio.PUD_UP)

    def poll(self) -> list[str]:
        if self._closed:
            return []
        read = self._gpio.input
        levels = [not read(b.pin) for b in self.config.buttons]   # pressed pulls the pin low
        return self._debouncer.feed(int(self._clock() * 1000), levels)

    def start(self, put: Callable[[str], None], interval: float = 0.01) -> GpioButtons:
        """Poll every ``interval`` s in a daemon thread, handing each command to ``put``."""
        def tick() -> None:
            for cmd in self.poll():
                put(cmd)
        self._ticker.start(tick, interval)
        return self

    def close(self) -> None:
        self._ticker.stop()
        if not self._closed:
            self._closed = True
            self._gpio.cleanup([b.pin for b in self.config.buttons])
