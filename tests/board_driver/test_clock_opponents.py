"""The computer on a clock: it budgets its thinking from its clock, and a match on a clock
charges each side's thinking and ends on time."""

import json

import pytest

from board_driver.config import load_variant
from board_driver.journal import GameStore, load_any
from board_driver.opponents.computer import clock_budget
from board_driver.opponents.match import play_game
from board_driver.opponents.players import make_player, parse_spec
from board_driver.referee.clock import TimeControl


def test_the_budget_is_a_share_of_the_time_left_plus_half_the_increment():
    assert clock_budget(60_050, 2000) == pytest.approx(60_000 / 30 / 1000 + 1.0)
    assert clock_budget(1000, 100) == pytest.approx((950 / 30 + 50) / 1000)
    assert clock_budget(100, 10_000) == pytest.approx(10 / 1000)        # never more than a fifth of what is left
    assert clock_budget(5_400_050, 30_000, moves_to_go=10) == pytest.approx(540 + 15)


class Slow:
    """A player that spends ``ms`` of the injected clock per turn, then plays the first action."""

    def __init__(self, clock, ms):
        self.clock, self.ms, self.asked = clock, ms, []

    def turn(self, game, seconds, stop=None):
        self.asked.append(seconds)
        self.clock[0] += self.ms
        return [game.legal_actions()[0]]


def test_a_time_odds_game_gives_each_colour_its_own_seconds():
    white, black = Slow([0], 0), Slow([0], 0)
    play_game(load_variant("orthodox"), white, black, seconds=(0.3, 0.05), max_plies=6)
    assert white.asked == [0.3] * 3 and black.asked == [0.05] * 3


def test_a_match_on_a_clock_charges_thinking_and_ends_on_time():
    now = [0]
    white, black = Slow(now, 3000), Slow(now, 1000)
    out, n = play_game(load_variant("orthodox"), white, black, seconds=1.0, tc=TimeControl.parse("10+1"),
                       clock=lambda: now[0])
    # White: 10 - 3 + 1 a move: 8, 6, 4, 2, 0 -> the flag falls on his fifth move
    assert (out.result, out.reason) == ("0-1", "time forfeit")
    assert n == 8
    assert white.asked[0] == pytest.approx((9950 / 30 + 500) / 1000)


@pytest.mark.slow
def test_builtin_never_loses_on_time_at_1s_plus_0_1_against_random(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRYBOARD_DATA", str(tmp_path))
    from board_driver.cli import main
    assert main(["match", "--white", "builtin", "--black", "random", "--games", "4", "--clock", "1+0.1",
                 "--seed", "3", "--no-progress", "--json"]) == 0
    store = GameStore(tmp_path)
    games = store.list()
    assert len(games) == 4
    for g in games:
        rec = load_any(store.path(g.id))
        assert rec.reason != "time forfeit", (g.id, rec.result)
        builtin = 0 if rec.header["players"]["white"] == "builtin" else 1
        left = [r["clk"][builtin] for r in rec.records if r["type"] == "push"]
        assert min(left) > 0
