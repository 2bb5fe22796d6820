"""The chess clock on the board, in virtual time: every figure exact to the millisecond.

A move counts as made at the board event that completed it (the piece set down: its raw
time, before debouncing), never when the reconciler committed it; a prompt runs the clock of
the player who must answer; a multi-move turn switches the clock when it ends; a takeback
restores both clocks; a flag falls at the exact millisecond, and it is a draw when the other
side cannot win (engine.timeout)."""

import pytest
from drivertools import Table

from board_driver.referee.clock import Clock, TimeControl
from board_driver.sim.events import Ev, play_events


def clocked(variant="orthodox", tc="60+2", *, fen=None, mode="auto"):
    t = Table(variant, fen=fen)
    t.session.attach_clock(Clock(TimeControl.parse(tc)), mode)       # at t = 0: White's clock starts
    return t


def play(t, *events):
    evs = []
    for e in events:
        ms, kind, arg = e
        evs.append(Ev(ms, kind, arg))
    play_events(t.session, t.board, t.clock, evs, t.display)
    return t


def rem(t, now=None):
    return t.session.clock.remaining(t.session.now if now is None else now)


def test_the_clock_switches_at_the_piece_set_down_not_at_the_commit():
    t = play(clocked(), (5000, "lift", "e2"), (5400, "place", "e4"))
    # committed after debounce (40 ms) and stillness (350 ms), but made at 5400
    assert t.moves == ["e2e4"]
    assert t.session.clock.state.remaining == (60_000 - 5400 + 2000, 60_000)
    assert t.session.clock.running == 1 and t.session.clock.state.since == 5400
    play(t, (9000, "lift", "e7"), (9300, "place", "e5"))
    assert t.session.clock.state.remaining == (56_600, 60_000 - 3900 + 2000)


def test_a_bounce_before_the_piece_settles_does_not_cost_time():
    t = play(clocked(), (5000, "lift", "e2"), (5400, "place", "e4"), (5403, "lift", "e4"), (5406, "place", "e4"))
    # the last raw change, at 5406, is when the piece came to rest
    assert t.session.clock.state.remaining == (60_000 - 5406 + 2000, 60_000)


def test_a_move_made_just_before_the_flag_counts_though_committed_after_it():
    t = play(clocked(tc="10"), (9000, "lift", "e2"), (9990, "place", "e4"), (12_000, "lift", "e7"))
    assert t.session.outcome() is None
    assert t.moves == ["e2e4"]
    assert t.session.clock.state.remaining == (10, 10_000)


def test_a_piece_in_the_hand_at_the_flag_loses():
    t = play(clocked(tc="10"), (9000, "lift", "e2"), (10_500, "place", "e4"))
    out = t.session.outcome()
    assert (out.result, out.reason) == ("0-1", "time forfeit")
    assert t.moves == []
    assert rem(t) == (0, 10_000)
    assert any("White's flag fell: black wins on time, 0-1." in n for n in t.session.drain_notices())


def test_white_not_moving_longer_than_his_time_loses_at_the_exact_millisecond():
    t = clocked(tc="60+2")
    play(t, (59_999, "input", "clock"))
    assert t.session.outcome() is None
    play(t, (60_000, "input", "clock"))
    assert t.session.outcome().result == "0-1"
    assert t.session.clock.state.remaining == (0, 60_000)


def test_the_flag_led_shows_the_flagged_royal():
    t = play(clocked(tc="10"), (10_000, "input", "clock"))
    assert t.session.outcome().winner == 1
    assert t.blinking("e1")


def test_a_flag_fall_drawn_still_shows_whose_flag_fell():
    t = play(clocked(tc="5", fen="4k3/8/8/8/8/8/8/4KQ2 w - - 0 1"), (6000, "input", "clock"))
    assert t.session.outcome().result == "1/2-1/2"
    by_square = {t.session.name(sq): t.session.led_layers[t.session.layout.physical(sq)] for sq in range(64)
                 if t.session.layout.physical(sq) >= 0}
    assert by_square["e1"] == "flag" and t.blinking("e1")      # White's flag fell
    assert by_square["e8"] == "draw" and not t.blinking("e8")


@pytest.mark.parametrize("fen, result", [
    ("4k3/8/8/8/8/8/8/4KQ2 w - - 0 1", "1/2-1/2"),          # Black has a bare king
    ("4k3/8/8/8/8/8/8/3NK3 b - - 0 1", "1/2-1/2"),          # White: king and knight against a bare king
    ("4k3/8/8/8/8/8/8/3BK3 b - - 0 1", "1/2-1/2"),          # king and bishop
    ("4k3/4p3/8/8/8/8/8/3NK3 b - - 0 1", "1-0"),            # a knight against king and pawn: mate exists
    ("4k3/8/8/8/8/8/8/4K2R b - - 0 1", "1-0"),              # a rook mates
    ("4k3/8/8/8/8/8/P7/4K3 b - - 0 1", "1-0"),              # a pawn promotes
])
def test_flag_fall_is_a_draw_when_the_other_side_cannot_win(fen, result):
    t = play(clocked(tc="5", fen=fen), (6000, "input", "clock"))
    out = t.session.outcome()
    assert (out.result, out.reason) == (result, "time forfeit")


def test_a_promotion_prompt_runs_the_movers_clock_until_the_answer():
    t = play(clocked(tc="60+2", fen="8/4P3/8/8/8/8/8/K1k5 w - - 0 1"),
             (1000, "lift", "e7"), (2000, "place", "e8"))
    assert t.pending["type"] == "prompt"
    play(t, (7000, "input", "choose n"))
    assert t.moves == ["e7e8n"]
    assert t.session.clock.state.remaining == (60_000 - 7000 + 2000, 60_000)


def test_a_takeback_restores_both_clocks_to_what_they_were_before_the_move():
    t = play(clocked(), (4000, "lift", "e2"), (5000, "place", "e4"), (7000, "lift", "e7"), (8000, "place", "e5"))
    assert t.session.clock.state.remaining == (57_000, 59_000)
    play(t, (10_000, "input", "takeback"))
    assert t.moves == ["e2e4"]
    # before Black's move: White 57 s; Black 57 s (3 s used at the moment he moved); Black's clock runs
    assert t.session.clock.state.remaining == (57_000, 57_000)
    assert t.session.clock.running == 1 and t.session.clock.state.since == 10_000
    assert rem(t, 11_000) == (57_000, 56_000)
    play(t, (12_000, "lift", "e5"), (12_500, "place", "e7"), (13_000, "input", "takeback"))
    assert t.moves == []
    assert t.session.clock.state.remaining == (55_000, 60_000) and t.session.clock.running == 0


def test_cost_progressive_switches_when_the_turn_ends():
    t = clocked("cost-progressive", "60+2")
    c = t.session.clock
    play(t, (1000, "lift", "e2"), (1500, "place", "e4"))          # White's turn 1: 1 point, the turn ends
    assert c.state.remaining == (60_500, 60_000) and c.running == 1
    play(t, (3000, "lift", "a7"), (3500, "place", "a6"))          # Black's turn 1
    assert c.state.remaining == (60_500, 60_000) and c.running == 0
    play(t, (5000, "lift", "d2"), (5500, "place", "d3"))          # White's turn 2: 2 points, one used
    assert c.running == 0 and c.state.remaining == (60_500, 60_000)   # no switch yet
    play(t, (7000, "lift", "h2"), (8000, "place", "h3"))          # the second point: the turn ends at 8000
    assert c.running == 1
    assert c.state.remaining == (60_500 - 4500 + 2000, 60_000)
    assert c.state.moves == (2, 1)
    assert t.moves == ["e2e4", "a7a6", "d2d3", "h2h3"]


def test_chego_a_pass_is_a_move():
    t = clocked("chego", "30+1")
    play(t, (2000, "place", "e4"), (2500, "input", "choose n"))     # White drops a knight
    assert t.session.clock.running == 1
    assert t.session.clock.state.remaining == (30_000 - 2500 + 1000, 30_000)
    play(t, (6000, "input", "pass"))
    assert t.session.clock.running == 0
    assert t.session.clock.state.remaining == (28_500, 30_000 - 3500 + 1000)
    assert t.moves[-1] == "pass"


def test_csipgs_buying_and_designing_are_the_acting_players_time():
    t = clocked("csipgs", "60")
    c, g = t.session.clock, t.session.game
    play(t, (1000, "lift", "e1"), (1500, "place", "e2"))          # White's action: the design phase follows
    assert g.board_state().phase == "design" and c.running == 0   # still White's time
    play(t, (4000, "input", "end"))                                # White's design phase ends at 4000
    assert g.turn == 1 and c.running == 1
    assert c.state.remaining == (56_000, 60_000)
    play(t, (5000, "lift", "e8"), (5500, "place", "e7"), (9000, "input", "design 3=fmW"))
    assert t.moves[-1].startswith("design") and c.running == 0
    assert c.state.remaining == (56_000, 60_000 - 9000 + 4000)


def test_press_mode_switches_only_on_the_button():
    t = clocked(mode="press")
    play(t, (1000, "lift", "e2"), (1500, "place", "e4"))
    assert t.session.clock.running == 0                # the move is made; the clock is not pressed yet
    play(t, (2500, "input", "end"))                    # the board's end button presses it
    assert t.session.clock.running == 1
    assert t.session.clock.state.remaining == (60_000 - 2500 + 2000, 60_000)
    play(t, (3000, "lift", "e7"), (3500, "place", "e5"), (4000, "input", "press"))
    assert t.session.clock.state.remaining == (59_500, 60_000 - 1500 + 2000)


def test_press_mode_the_end_of_a_cost_progressive_turn_presses_the_clock():
    t = clocked("cost-progressive", "60+2", mode="press")
    c = t.session.clock
    play(t, (1000, "lift", "e2"), (1500, "place", "e4"))          # turn 1 ends by itself (1 point)
    assert c.running == 0                                          # press mode: not switched by the board
    play(t, (2000, "input", "press"), (3000, "lift", "a7"), (3500, "place", "a6"), (4000, "input", "press"))
    assert c.running == 0 and c.state.remaining == (60_000, 60_000)
    play(t, (5000, "lift", "d2"), (5500, "place", "d3"))          # 1 of White's 2 points
    assert c.running == 0
    play(t, (7000, "input", "end"))                                # ends the turn: one button, both jobs
    assert t.session.game.turn == 1 and c.running == 1
    assert c.state.remaining == (60_000 - 3000 + 2000, 60_000) and c.state.moves == (2, 1)
    assert t.moves == ["e2e4", "a7a6", "d2d3", "end"]


def test_pause_and_adjust():
    t = play(clocked(), (1000, "input", "clock pause"))
    assert t.session.clock.running is None and rem(t, 50_000) == (59_000, 60_000)
    play(t, (20_000, "input", "clock start"), (21_000, "input", "clock adjust black 1:30"))
    assert rem(t, 22_000) == (57_000, 90_000)


def test_on_the_service_a_new_games_clock_waits_for_the_first_move():
    """As a DGT clock: nothing runs while the players sit down; the first move starts the other
    side's clock, without charging the first mover."""
    t = clocked()
    t.session.time.hold_for_first_move()
    view = t.session.time.view()
    assert view["running"] is None and view["first_move"] and view["waiting"]
    t.wait(30_000)
    assert t.session.time.view()["white"] == 60_000                   # no time charged while waiting
    t.move("e2", "e4").wait(1000)
    view = t.session.time.view()
    assert view["running"] == "black" and not view["first_move"] and view["white"] == 62_000   # + its increment
    assert 58_000 < view["black"] < 60_000
