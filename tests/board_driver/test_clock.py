"""The clock model: time controls in the PGN TimeControl syntax, and the FIDE clock rules
(increment after the move, simple delay before the clock counts, periods), in exact ms."""

import re

import pytest

from board_driver.referee.clock import (
    Clock,
    ClockError,
    ClockState,
    Period,
    TimeControl,
    format_clock,
    parse_time,
)

W, B = 0, 1


def test_parse_every_form():
    assert TimeControl.parse("300").periods == (Period(300_000),)
    assert TimeControl.parse("300+3").periods == (Period(300_000, None, 3000),)
    assert TimeControl.parse("40/5400+30:1800+30").periods == (Period(5_400_000, 40, 30_000),
                                                               Period(1_800_000, None, 30_000))
    assert TimeControl.parse("d300+5").periods == (Period(300_000, None, 0, 5000),)
    assert TimeControl.parse("d40/5400+30:1800+30").periods == (Period(5_400_000, 40, 0, 30_000),
                                                                Period(1_800_000, None, 0, 30_000))
    assert TimeControl.parse("1+0.1").periods == (Period(1000, None, 100),)
    assert TimeControl.parse("40/7200").periods == (Period(7_200_000, 40),)
    assert TimeControl.parse("-") is None
    assert TimeControl.parse("60+2").text == "60+2"


@pytest.mark.parametrize("bad", ["", "abc", "300+", "+3", "0", "40/:1800", "5400:40/1800", "x/300",
                                 "0/300", "*180", "?", "300+3+4", "1.2345"])
def test_parse_refuses(bad):
    with pytest.raises(ClockError):
        TimeControl.parse(bad)


def test_a_time_control_is_bounded_and_says_which_bound():
    # 100 hours a period, an hour an increment, 500 moves a period, 10 periods
    assert TimeControl.parse("360000+3600").periods == (Period(360_000_000, None, 3_600_000),)
    for bad, words in (("999999999", "more than 360000 s (100 hours)"), ("300+3601", "the increment 3601 s is more "
                       "than 3600 s"), ("d60+5000", "the delay 5000 s"), ("501/300", "1 to 500"),
                       ("1" * 40, "is not a number of seconds"),
                       (":".join(["40/60"] * 11), "11 periods, at most 10")):
        with pytest.raises(ClockError, match=re.escape(words)):
            TimeControl.parse(bad)
    assert parse_time("100:00:00") == 360_000_000
    with pytest.raises(ClockError, match="more than 100 hours"):
        parse_time("100:00:01")


def test_describe():
    assert TimeControl.parse("300+3").describe() == "5 min + 3 s a move"
    assert TimeControl.parse("40/5400+30:1800+30").describe() == \
        "90 min for 40 moves + 30 s a move, then 30 min + 30 s a move"
    assert TimeControl.parse("d300+5").describe() == "5 min, 5 s delay"


def test_sudden_death_runs_and_flags():
    c = Clock(TimeControl.parse("300"))
    c.start(W, 0)
    assert c.remaining(1234) == (298_766, 300_000)
    c.switch(10_000)
    assert c.state.remaining == (290_000, 300_000) and c.running == B
    assert c.remaining(15_000) == (290_000, 295_000)
    assert c.flag_time() == 310_000
    assert c.flagged(309_999) is None
    assert c.flagged(310_000) == B


def test_fischer_increment_after_each_move_from_the_first():
    c = Clock(TimeControl.parse("60+2"))
    c.start(W, 0)
    c.switch(5_000)            # white moves after 5 s: 55 + 2
    assert c.state.remaining == (57_000, 60_000)
    c.switch(8_500)            # black after 3.5 s
    assert c.state.remaining == (57_000, 58_500)
    assert c.state.moves == (1, 1)


def test_simple_delay_clock_counts_after_the_delay():
    c = Clock(TimeControl.parse("d300+5"))
    c.start(W, 0)
    assert c.remaining(4_000) == (300_000, 300_000)    # within the delay nothing is used
    assert c.remaining(7_000) == (298_000, 300_000)
    c.switch(3_000)            # inside the delay: nothing used, nothing added
    assert c.state.remaining == (300_000, 300_000)
    c.switch(3_000 + 12_000)   # black: 12 s, of which 7 count
    assert c.state.remaining == (300_000, 293_000)
    assert c.flag_time() == 15_000 + 5_000 + 300_000


def test_periods_add_the_next_period_after_move_40():
    c = Clock(TimeControl.parse("40/5400+30:1800+30"))
    t = 0
    c.start(W, t)
    for n in range(40):
        t += 10_000
        c.switch(t)            # white: 10 s a move
        t += 1_000
        c.switch(t)            # black: 1 s a move
    w, b = c.state.remaining
    assert w == 5_400_000 - 40 * 10_000 + 40 * 30_000 + 1_800_000
    assert b == 5_400_000 - 40 * 1_000 + 40 * 30_000 + 1_800_000
    # no more time after move 80: the second period is the rest of the game
    for n in range(40):
        t += 1_000
        c.switch(t)
        t += 1_000
        c.switch(t)
    assert c.state.remaining == (w + 40 * 29_000, b + 40 * 29_000)


def test_a_last_period_with_moves_repeats():
    c = Clock(TimeControl.parse("2/100"))
    c.start(W, 0)
    c.switch(10_000)                # W move 1
    c.switch(10_000)                # B move 1
    c.switch(20_000)                # W move 2: +100 s
    assert c.state.remaining[W] == 100_000 - 20_000 + 100_000
    c.switch(20_000)
    c.switch(20_000)                # W move 3
    c.switch(20_000)
    c.switch(20_000)                # W move 4: +100 s again
    assert c.state.remaining[W] == 280_000


def test_stop_adjust_restore():
    c = Clock(TimeControl.parse("300+3"))
    c.start(W, 0)
    c.stop(20_000)
    assert c.state == ClockState((280_000, 300_000), (0, 0), None, 20_000)
    assert c.remaining(99_000) == (280_000, 300_000)
    c.start(W, 100_000)
    c.adjust(B, 120_000, 101_000)
    assert c.remaining(102_000) == (278_000, 120_000)
    c.adjust(W, 60_000, 103_000)
    assert c.remaining(104_000) == (59_000, 120_000)
    saved = c.state
    c.switch(105_000)
    c.restore(saved)
    assert c.remaining(104_000) == (59_000, 120_000)


def test_formats():
    assert format_clock(3_723_400) == "1:02:03"
    assert format_clock(59_999) == "0:00:59"
    assert format_clock(9_876, tenths=True) == "0:09.8"
    assert format_clock(-5) == "0:00:00"
    assert parse_time("5:00") == 300_000
    assert parse_time("1:02:03") == 3_723_000
    assert parse_time("90.5") == 90_500
    with pytest.raises(ClockError):
        parse_time("5:xx")
