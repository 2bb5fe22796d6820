"""Push buttons polled at the matrix's pace: after its scans when the board has a GPIO matrix
(at its idle rate on a quiet board), or in a thread of their own; the debounce still refuses
bounces and still hears a person's press. On a fake Pi and a virtual clock: counted, never timed."""

from __future__ import annotations

import threading

import pytest
from fake_gpio import PI_COLUMNS as COLUMNS
from fake_gpio import PI_ROWS as ROWS

from board_driver.hardware import gpio_matrix
from board_driver.hardware.buttons import FAST_S, IDLE_S, Button, ButtonsConfig, GpioButtons
from board_driver.hardware.gpio_matrix import IDLE_AFTER_S, GpioMatrix, MatrixConfig

CFG = ButtonsConfig((Button(15, "choose"), Button(1, "end", hold="pass")), debounce_ms=30, hold_ms=1000)
MATRIX = MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10, idle_scan_ms=40)


@pytest.fixture
def rig(gpio, clock):
    """A quiet board's matrix (scanning in the test's thread) with the buttons polled after its
    scans; the commands they send, stamped with the virtual clock (ms)."""
    m = GpioMatrix(MATRIX, gpio=gpio, clock=clock, sleep=clock.sleep, delay_us=gpio.delay_us)
    sent: list[tuple[int, str]] = []
    buttons = GpioButtons(CFG, gpio=gpio, clock=clock, matrix=m).start(lambda cmd: sent.append((clock.ms(), cmd)))
    t0 = clock()
    while clock() < t0 + IDLE_AFTER_S + 1:          # quiet: the idle rate
        m.read(1.0)
    assert m.period(clock()) == 0.04
    yield m, buttons, sent
    buttons.close()
    m.close()


def run_for(m: GpioMatrix, clock, seconds: float) -> None:
    end = clock() + seconds
    while clock() < end:
        m.read(1.0)


def test_buttons_are_polled_once_per_scan_of_the_matrix(rig, clock):
    m, buttons, _ = rig
    assert buttons.polls == m.scans
    assert not any(t.name == "fairyboard-buttons" for t in threading.enumerate())


def test_a_press_on_a_quiet_board_is_heard_within_70_ms(rig, gpio, clock):
    """The worst case: the press begins just after an idle scan, is first seen 40 ms later, and
    then holds the debounce's 30 ms at full rate. A 75 ms press (a person's is longer) counts once."""
    m, _, sent = rig
    press_at = clock() + 0.0405                           # just after the next idle scan
    clock.at(press_at, lambda: gpio.press(15))
    clock.at(press_at + 0.075, lambda: gpio.release(15))
    run_for(m, clock, 1.0)
    assert [c for _, c in sent] == ["choose"]
    assert 30 <= sent[0][0] - press_at * 1000 <= 70


def test_a_bounce_on_a_quiet_board_sends_nothing(rig, gpio, clock):
    m, _, sent = rig
    for k in range(20):                                   # 20 ms blips, at every offset in the idle period
        at = clock() + 0.0013 + k * 0.002
        clock.at(at, lambda: gpio.press(15))
        clock.at(at + 0.02, lambda: gpio.release(15))
        run_for(m, clock, 0.5)
    assert sent == []


def test_a_held_button_keeps_the_scan_at_full_rate_and_sends_its_hold_command(rig, gpio, clock):
    m, _, sent = rig
    press_at = clock() + 0.0113
    clock.at(press_at, lambda: gpio.press(1))
    run_for(m, clock, 0.05)
    before = m.scans
    run_for(m, clock, 2.0)
    assert m.scans - before in (200, 201)                 # 10 ms while the button is down
    assert [c for _, c in sent] == ["pass"]
    assert 1030 <= sent[0][0] - press_at * 1000 <= 1070           # seen, debounced, held 1 s
    gpio.release(1)
    run_for(m, clock, IDLE_AFTER_S + 0.1)
    before = m.scans
    run_for(m, clock, 1.0)
    assert m.scans - before in (25, 26)                   # quiet again: the idle rate
    assert [c for _, c in sent] == ["pass"]               # held, not also pressed


def test_closed_buttons_are_polled_no_more_and_free_their_pins(rig, gpio, clock):
    m, buttons, _ = rig
    buttons.close()
    n = buttons.polls
    assert 15 not in gpio.pins and 1 not in gpio.pins
    run_for(m, clock, 0.5)                                # the scan goes on, without the buttons
    assert buttons.polls == n and m.scans > n


def test_without_a_matrix_the_buttons_own_thread_keeps_the_same_pace(gpio, clock):
    b = GpioButtons(CFG, gpio=gpio, clock=clock)
    now = clock()
    assert b.interval(now, active=now) == FAST_S == MATRIX.scan_ms / 1000
    assert b.interval(now + IDLE_AFTER_S - 0.01, active=now) == FAST_S
    assert b.interval(now + IDLE_AFTER_S, active=now) == IDLE_S == MATRIX.idle_period
    b.close()


def test_without_a_matrix_a_press_is_sent_from_the_buttons_thread(gpio, monkeypatch):
    """On the real clock: the thread polls, a press held until it is heard is sent once."""
    monkeypatch.setattr(gpio_matrix, "IDLE_AFTER_S", 0.0)     # idle pace from the start
    heard = threading.Event()
    sent: list[str] = []
    b = GpioButtons(CFG, gpio=gpio).start(lambda cmd: (sent.append(cmd), heard.set()))
    try:
        assert any(t.name == "fairyboard-buttons" for t in threading.enumerate())
        gpio.press(15)
        assert heard.wait(60)
        gpio.release(15)
    finally:
        b.close()
    assert sent == ["choose"]
    assert not any(t.name == "fairyboard-buttons" for t in threading.enumerate())
