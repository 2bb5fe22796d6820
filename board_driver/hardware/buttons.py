"""Push buttons on GPIO that send console commands (optional).

Each button connects its GPIO to ground; the pin is an input with the Pi's pull-up, so it
reads low while pressed. A button sends its ``command`` (any console command: ``choose``,
``end``, ``takeback``, ``pass``, ``help`` ...) when it is pressed; a button that also has a
``hold`` command sends that one instead when held for ``hold_ms``, and its ``command`` on
release if let go sooner. A level counts only after it has held for ``debounce_ms``.

:class:`ButtonDebouncer` is pure (levels and times in, commands out);
:class:`GpioButtons` reads the pins through an injected RPi.GPIO module on each
:meth:`GpioButtons.poll`. Started (:meth:`GpioButtons.start`), the buttons are polled after
every scan of the GPIO matrix when the board has one (one thread and one wake-up for both),
or else in a thread of their own at the same pace: every 10 ms while a button is down or was
used in the last :data:`~board_driver.hardware.gpio_matrix.IDLE_AFTER_S` (5 s), every 40 ms
otherwise.

The debounce at the idle pace: a press is first seen up to 40 ms after it began; from that
sample on, the pace is 10 ms again (a button down counts as something happening), and the
level must hold ``debounce_ms`` (30) from that first sample. So a press is recognised
30-70 ms after it began (30-40 ms at full rate), and a press of 70 ms is always seen from a
quiet board (40 ms at full rate) -- a person's press lasts 80 ms or more. A bounce shorter than
``debounce_ms`` is refused as before: the debounce counts on the samples' own times, whatever
their spacing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import AbstractSet, Callable

from board_driver.hardware._check import Section
import threading

from board_driver.hardware import gpio_matrix
from board_driver.hardware.gpio_matrix import GpioMatrix, GpioModule, setup_pin, use_bcm
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

    @property
    def busy(self) -> bool:
        """A button is down, or its level has not settled yet: poll at full rate."""
        return any(self._raw) or self._raw != self.stable

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


FAST_S = 0.01
"""The buttons' own polling period while something happens (s), as the matrix's ``scan_ms``."""

IDLE_S = 0.04
"""... and once quiet for ``IDLE_AFTER_S`` (s), as the matrix's ``idle_scan_ms``."""


class GpioButtons:
    """The buttons on GPIO: :meth:`poll` reads them and returns the commands they send.

    ``matrix``: the board's GPIO matrix, if it has one: :meth:`start` polls after its scans."""

    def __init__(self, config: ButtonsConfig, *, gpio: GpioModule, clock: Callable[[], float] = time.monotonic,
                 matrix: GpioMatrix | None = None) -> None:
        self.config = config
        self._gpio, self._clock = gpio, clock
        self._debouncer = ButtonDebouncer(config)
        self._closed = False
        self._matrix = matrix
        self._hook: Callable[[], bool] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.polls = 0
        use_bcm(gpio)
        for b in config.buttons:
            setup_pin(gpio, b.pin, gpio.IN, pull_up_down=gpio.PUD_UP)

    def poll(self) -> list[str]:
        if self._closed:
            return []
        read = self._gpio.input
        levels = [not read(b.pin) for b in self.config.buttons]   # pressed pulls the pin low
        self.polls += 1
        return self._debouncer.feed(int(self._clock() * 1000), levels)

    @property
    def busy(self) -> bool:
        """A button is down or settling: poll at full rate."""
        return self._debouncer.busy

    def start(self, put: Callable[[str], None]) -> GpioButtons:
        """Poll from now on, handing each command to ``put`` (any thread may call it): after
        every scan of the matrix if there is one, else in a daemon thread of their own, every
        :data:`FAST_S`, or :data:`IDLE_S` once quiet (the module docstring). A second call
        does nothing."""
        if self._hook is not None or self._thread is not None:
            return self

        def tick() -> bool:
            for cmd in self.poll():
                put(cmd)
            return self.busy
        if self._matrix is not None:
            self._hook = tick
            self._matrix.attach(tick)
        else:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, args=(tick,), name="fairyboard-buttons", daemon=True)
            self._thread.start()
        return self

    def interval(self, now: float, active: float) -> float:
        """The own thread's polling period at ``now`` (s), something last having happened at ``active``."""
        return FAST_S if now - active < gpio_matrix.IDLE_AFTER_S else IDLE_S

    def _run(self, tick: Callable[[], bool]) -> None:
        active = self._clock()
        while not self._stop.wait(self.interval(self._clock(), active)):
            if tick():
                active = self._clock()

    def close(self) -> None:
        """Stop polling (once this returns, no poll runs) and release the buttons' pins."""
        if self._hook is not None and self._matrix is not None:
            self._matrix.detach(self._hook)
            self._hook = None
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if not self._closed:
            self._closed = True
            self._gpio.cleanup([b.pin for b in self.config.buttons])
