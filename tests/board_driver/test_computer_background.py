"""The computer thinking in the background of the real-time loop: the player's move is lit at
once, frames are read while it thinks (a takeback is seen), a stale answer is dropped, one
search at a time, and closing does not wait for a search's whole time."""

from __future__ import annotations

import sys
import threading
import time
from collections import deque

from drivertools import Table

from board_driver.devices import RawFrame
from board_driver.opponents.computer import Computer, attach
from board_driver.referee.scene import movers
from board_driver.referee.opponent import Expect
from board_driver.opponents.players import Player, PlayerError, make_player
from board_driver.referee.runner import run_realtime

COMPUTER_LAYERS = ("computer from", "computer to")
THINKING = "Computer (black) is thinking."


def ms() -> int:
    return int(time.monotonic() * 1000)


class Rig:
    """The board of a session on the real clock: the test's hands put frames in (at the times
    they are due), the LED frames the loop shows are kept with what the session held then."""

    def __init__(self, session):
        self.s = session
        self.layout = session.layout
        self.sensor_count = self.layout.profile.sensor_count
        self.led_count = self.layout.profile.size
        self.closed = set(self.layout.closed_sensors(session.occupancy))
        self.frames: deque[RawFrame] = deque()
        self.shown: list[dict] = []
        self.notices: list[str] = []
        self.at = ms()                      # when the hands' next frame goes out

    # -- the hands ------------------------------------------------------------------------------
    def _frame(self, square: str, placed: bool, gap: int) -> None:
        sensor = self.layout.sensor_of(self.s.game.geometry.parse(square))
        (self.closed.add if placed else self.closed.discard)(sensor)
        self.at = max(self.at, ms()) + gap
        self.frames.append(RawFrame(self.at, frozenset(self.closed)))

    def move(self, frm: str, to: str) -> None:
        self._frame(frm, False, 0)
        self._frame(to, True, 100)

    # -- SensorSource and LedSink ----------------------------------------------------------------
    def read(self, timeout: float):
        end = time.monotonic() + timeout
        while True:
            if self.frames and self.frames[0].t <= ms():
                return self.frames.popleft()
            if time.monotonic() >= end:
                return None
            time.sleep(0.001)

    def show(self, frame) -> None:
        s = self.s
        geo = s.game.geometry
        layers = {}
        for sq in geo.squares():
            p = self.layout.physical(sq)
            if p >= 0 and s.led_layers[p]:
                layers[geo.name(sq)] = s.led_layers[p]
        c = s.computer
        self.shown.append({"t": ms(), "moves": [a.text for a in s.game.history], "layers": layers,
                           "hint": c.hint() if c is not None else None,
                           "thinking": c.thinking if c is not None else False})

    def close(self) -> None:
        pass

    # -- running ----------------------------------------------------------------------------------
    def run(self, *steps, limit: float = 20.0) -> None:
        """Run the loop through ``steps``, each (condition, action): when the condition holds
        (it is asked on every loop step) the action is done, then the next step waits."""
        steps = list(steps)
        end = time.monotonic() + limit

        def stop() -> bool:
            assert time.monotonic() < end, f"the loop did not get there: {len(steps)} steps left; {self.notices}"
            while steps and steps[0][0](self):
                _, act = steps.pop(0)
                if act is not None:
                    act(self)
            return not steps

        run_realtime(self.s, self, self, ms, stop=stop, on_notice=self.notices.append)


def always(rig) -> bool:
    return True


def planned(rig) -> bool:
    return rig.s.computer.hint() is not None and not rig.frames


class Gated(Player):
    """A built-in player that answers only once its gate is open (its answer comes even when it
    was stopped, as an engine's within its move time), counting the searches at once."""

    def __init__(self, inner: Player):
        self.inner = inner
        self.spec = inner.spec
        self.gate = threading.Event()
        self.asked: list[list[str]] = []
        self.active = self.most = 0
        self.lock = threading.Lock()

    def turn(self, game, seconds, *, stop=None):
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
            self.asked.append([a.text for a in game.history])
        try:
            assert self.gate.wait(10)
            return self.inner.turn(game, seconds)
        finally:
            with self.lock:
                self.active -= 1

    def close(self) -> None:
        self.inner.close()


def _table(player, side: int = 1, *, seconds: float = 0.3) -> tuple[Table, Rig]:
    t = Table("orthodox")
    t.session.attach_computer(Computer({side: player}, seconds=seconds))
    return t, Rig(t.session)



def _gated_white():
    """A session whose White is a computer thinking in the background until its gate opens."""
    s = Table("orthodox").session
    gated = Gated(make_player("random", s.game.variant))
    return s, gated, Computer({0: gated}, seconds=0.3, background=True)


def _answer(s, gated, computer) -> None:
    """Let the gated search answer and tick the session until the computer's move is shown."""
    gated.gate.set()
    end = time.monotonic() + 5
    while computer.hint() is None:
        assert time.monotonic() < end
        time.sleep(0.005)
        s.tick(s.now + 10)

def test_the_players_move_is_lit_while_the_computer_thinks_then_its_move():
    t, rig = _table(make_player("builtin", Table().session.game.variant), seconds=0.3)
    s = t.session
    try:
        assert not s.computer.background                 # scripted use thinks in the step
        rig.run((always, lambda r: r.move("e2", "e4")), (planned, None))
        assert s.computer.background                     # the loop switched it
        a = s.computer.hint()
        assert s.expected == Expect.play(a)
        # the player carries the computer's move out: it is accepted as in the step
        (frm,), (to,) = movers(a), a.places
        rig.run((always, lambda r: r.move(s.name(frm), s.name(to))),
                (lambda r: len(s.game.history) == 2 and not r.frames, None))
        assert s.game.history[-1] == a and s.computer.hint() is None and s.expected is None
    finally:
        s.close()
    first = next(f for f in rig.shown if f["moves"] == ["e2e4"])
    # the commit's LED frame went out before the computer had a plan: its search was running
    assert first["layers"].get("e2") == "last move" and first["layers"].get("e4") == "last move"
    assert first["hint"] is None and first["thinking"]
    assert not set(first["layers"].values()) & set(COMPUTER_LAYERS)
    lit = next(f for f in rig.shown if f["hint"] is not None)
    a = lit["hint"]
    assert lit["moves"] == ["e2e4"] and lit["t"] >= first["t"]
    assert {lit["layers"][t.session.name(sq)] for sq in a.places} == {"computer to"}
    # said once, then the move; the notices otherwise as before
    assert rig.notices.count(THINKING) == 1
    said = [n for n in rig.notices if n.startswith("Computer (black) plays")]
    assert len(said) == 1 and rig.notices.index(THINKING) < rig.notices.index(said[0])


def test_a_takeback_while_the_computer_thinks_is_seen_and_its_stale_answer_dropped():
    v = Table().session.game.variant
    gated = Gated(make_player("builtin:1", v))
    t, rig = _table(gated)
    s = t.session

    def thinking_shown(r) -> bool:
        return any(f["moves"] == ["e2e4"] and f["thinking"] for f in r.shown) and not r.frames

    def taken_back(r) -> bool:
        return s.game.history == [] and not r.frames

    def answered(r) -> bool:
        return gated.active == 0 and not s.computer.thinking and s.computer._search is None

    try:
        rig.run((always, lambda r: r.move("e2", "e4")),
                (thinking_shown, lambda r: r.move("e4", "e2")),     # the player takes the move back
                (taken_back, lambda r: gated.gate.set()),           # only then the search answers
                (answered, None))
        stale = len(rig.shown)
        assert s.game.history == [] and s.computer.hint() is None and s.expected is None
        assert gated.asked == [["e2e4"]]
        rig.run((always, lambda r: r.move("d2", "d4")), (planned, None))
    finally:
        s.close()
    # the takeback was read while the search ran; the stale answer was never shown or said
    assert not any(f["hint"] is not None or set(f["layers"].values()) & set(COMPUTER_LAYERS)
                   for f in rig.shown[:stale])
    assert [f["moves"] for f in rig.shown if f["moves"] == []], "the takeback's LED frame was shown"
    plays = [n for n in rig.notices if n.startswith("Computer (black) plays")]
    assert len(plays) == 1
    # the computer then thought again, in the new position, and its move is for it
    assert gated.asked == [["e2e4"], ["d2d4"]]
    assert [a.text for a in s.game.history] == ["d2d4"] and s.computer.hint() in s.game.legal_actions()


def test_a_new_position_waits_for_the_stale_search_then_thinks_again():
    v = Table().session.game.variant
    gated = Gated(make_player("builtin:1", v))
    t, rig = _table(gated)
    s = t.session

    def thinking_on(moves):
        return lambda r: s.game.history and [a.text for a in s.game.history] == moves \
            and s.computer.thinking and not r.frames

    try:
        rig.run((always, lambda r: r.move("e2", "e4")),
                (thinking_on(["e2e4"]), lambda r: r.move("e4", "e2")),
                (lambda r: not s.game.history and not r.frames, lambda r: r.move("d2", "d4")),
                (thinking_on(["d2d4"]), None))
        # the first search has not answered: no second one on the same engine
        assert gated.asked == [["e2e4"]] and s.computer.hint() is None
        rig.run((always, lambda r: gated.gate.set()), (planned, None))
    finally:
        s.close()
    assert gated.most == 1
    assert gated.asked == [["e2e4"], ["d2d4"]]
    assert [a.text for a in s.game.history] == ["d2d4"] and s.computer.hint() in s.game.legal_actions()
    assert rig.notices.count(THINKING) == 2     # once for each position it thought in


def test_closing_while_the_computer_thinks_does_not_wait_for_its_time():
    t = Table("orthodox")
    s = t.session
    computer = Computer({0: make_player("builtin", s.game.variant)}, seconds=60.0, background=True)
    s.attach_computer(computer)                 # White to move: the search starts at once
    assert computer.thinking and computer.hint() is None
    assert s.bases.base(0).actions == ()        # nothing of White's is accepted meanwhile
    search = computer._search
    t0 = time.monotonic()
    s.close()
    assert time.monotonic() - t0 < 5
    assert not search.thread.is_alive() and not computer.thinking


def test_attach_in_the_background_and_the_loop_lights_the_move(monkeypatch):
    from board_driver.opponents import engine_pool
    made: list[Gated] = []

    def gated_player(spec, variant, *, priority, **kw):     # the player attach makes, answering only when let
        assert priority == engine_pool.MOVE
        made.append(Gated(make_player(spec, variant, **kw)))
        return made[-1]

    monkeypatch.setattr(engine_pool, "player", gated_player)
    t = Table("orthodox")
    s = t.session
    s.players = {"white": "builtin:1", "black": "Black"}
    computer = attach(s, seconds=0.3, background=True)
    assert computer is not None and computer.background and computer.hint() is None
    assert len(made) == 1 and made[0].spec.kind == "builtin" and computer.thinking   # it searches at once
    rig = Rig(s)
    try:
        rig.run((always, lambda r: made[0].gate.set()), (planned, None))
    finally:
        s.close()
    assert made[0].asked == [[]]
    a = s.computer.hint()
    assert a in s.game.legal_actions() and rig.shown[-1]["hint"] == a
    assert "Computer (white) is thinking." in s.notices + rig.notices


def test_the_switch_interval_is_narrowed_while_a_search_runs():
    before = sys.getswitchinterval()
    s, gated, computer = _gated_white()
    try:
        s.attach_computer(computer)
        assert computer.thinking and sys.getswitchinterval() < before
        _answer(s, gated, computer)
        assert sys.getswitchinterval() == before
    finally:
        s.close()
    assert sys.getswitchinterval() == before


class Failing(Player):
    def __init__(self, spec):
        self.spec = spec
        self.asked = 0

    def turn(self, game, seconds, *, stop=None):
        self.asked += 1
        raise PlayerError("the engine stopped")


def test_a_failed_search_is_said_once_and_the_players_may_move_for_it():
    t = Table("orthodox")
    s = t.session
    failing = Failing(make_player("random", s.game.variant).spec)
    s.attach_computer(Computer({1: failing}, seconds=0.3))
    rig = Rig(s)
    try:
        rig.run((always, lambda r: r.move("e2", "e4")),
                (lambda r: any("cannot move" in n for n in r.notices) and not r.frames,
                 lambda r: r.move("e7", "e5")),          # the player moves Black's piece instead
                (lambda r: len(s.game.history) == 2, None))
    finally:
        s.close()
    assert failing.asked == 1
    assert [n for n in rig.notices if "cannot move" in n] == ["Computer (black) cannot move: the engine stopped"]
    assert [a.text for a in s.game.history] == ["e2e4", "e7e5"]


def test_the_page_while_the_computer_thinks_then_shows_its_move():
    from board_driver.web.state import snapshot
    s, gated, computer = _gated_white()
    try:
        s.attach_computer(computer)
        st = snapshot(s, sim=True, version=1, notices=[])
        assert st["computer"] is None and st["legal"] == [] and st["turn"] == "white"
        _answer(s, gated, computer)
        st = snapshot(s, sim=True, version=2, notices=[])
        assert st["computer"]["move"] == computer.hint().text and st["legal"] == [computer.hint().text]
    finally:
        s.close()


class GatedHints(Player):
    """An engine whose evaluations answer only once the gate is open."""

    def __init__(self, inner: Player):
        self.inner = inner
        self.spec = inner.spec
        self.gate = threading.Event()
        self.asked: list[list[str]] = []

    def evaluate(self, game, seconds):
        self.asked.append([a.text for a in game.history])
        assert self.gate.wait(10)
        return self.inner.evaluate(game, seconds)

    def close(self) -> None:
        self.inner.close()


SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"


def _hint_table(tmp_path):
    from board_driver.opponents.computer import Hinter
    t = Table("orthodox", fen=SCHOLAR, data=tmp_path)
    s = t.session
    s.attach_hinter(Hinter(s.game.variant, spec="builtin:2"))
    gated = GatedHints(make_player("builtin:2", s.game.variant))
    s.hinter.player = gated
    return t, s, gated, Rig(s)


def _hint_records(s) -> list[dict]:
    import json
    return [r for r in map(json.loads, s.journal.path.read_text().splitlines()) if r["type"] == "hint"]


def test_a_hint_is_looked_for_in_the_background_and_lit_when_found(tmp_path):
    t, s, gated, rig = _hint_table(tmp_path)
    replies: list[str] = []
    try:
        rig.run((always, lambda r: replies.extend(s.command("hint", ms()))),
                # the command answered at once; the board is read while the engine looks
                (lambda r: bool(gated.asked), lambda r: r.move("b1", "b1")),
                # the knight lifted is seen (its squares lit) and set back, then the engine answers
                (lambda r: "target" in r.shown[-1]["layers"].values(), None),
                (lambda r: not r.frames and "target" not in r.shown[-1]["layers"].values(),
                 lambda r: gated.gate.set()),
                (lambda r: any(n.startswith("Hint for white") for n in r.notices), None))
    finally:
        s.close()
    assert replies == ["Looking for a hint for white."]
    said = [n for n in rig.notices if n.startswith("Hint for white")]
    assert len(said) == 1 and said[0].startswith("Hint for white (#1): Qxf7#: ")
    assert rig.shown[-1]["layers"].get("h5") == "computer from"
    assert [r["actions"] for r in _hint_records(s)] == [["h5f7"]]


def test_a_hint_found_after_the_player_moved_is_dropped(tmp_path):
    t, s, gated, rig = _hint_table(tmp_path)
    try:
        rig.run((always, lambda r: s.command("hint", ms())),
                (lambda r: bool(gated.asked), lambda r: r.move("b1", "c3")),
                (lambda r: len(s.game.history) == 1 and not r.frames, lambda r: gated.gate.set()),
                (lambda r: gated.gate.is_set() and s.hinter.deadline(ms()) is None, None))
    finally:
        s.close()
    assert [a.text for a in s.game.history] == ["b1c3"]      # the move was read while the engine looked
    assert not [n for n in rig.notices if n.startswith("Hint for")]
    assert _hint_records(s) == []
    assert not {sq for sq, layer in rig.shown[-1]["layers"].items() if layer.startswith("computer")}
