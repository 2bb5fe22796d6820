"""Time odds: a time control per side (``300+3,60+1``: White's, then Black's). Each side runs
on its own time, increment and flag; the game's header keeps both, so a resume does; the PGN
carries them as WhiteTimeControl/BlackTimeControl (TimeControl "?"); the CLI and the page's
``POST /api/new`` take the form."""

import io
import json
import os
import subprocess
import sys

import chess.pgn
import pytest

from board_driver.referee.clock import Clock, ClockError, Period, TimeControl

W, B = 0, 1
CLI = [sys.executable, "-m", "board_driver.cli"]


def test_each_side_has_its_own_time_and_increment():
    tc = TimeControl.parse("300+3,60+1")
    assert tc is not None and tc.odds and tc.text == "300+3,60+1"
    assert tc.side(W).periods == (Period(300_000, None, 3000),) and tc.side(W).text == "300+3"
    assert tc.side(B).periods == (Period(60_000, None, 1000),) and tc.side(B).text == "60+1"
    assert tc.describe() == "White 5 min + 3 s a move; Black 1 min + 1 s a move"
    c = Clock(tc)
    assert c.remaining(0) == (300_000, 60_000)
    c.start(W, 0)
    c.switch(10_000)                    # White used 10 s, gets 3 back
    assert c.remaining(10_000) == (293_000, 60_000)
    c.switch(15_000)                    # Black used 5 s, gets 1 back
    assert c.remaining(15_000) == (293_000, 56_000)


def test_periods_and_delay_are_each_sides_own():
    c = Clock(TimeControl.parse("2/100:50,d30+5"))
    assert c.remaining(0) == (100_000, 30_000)
    c.start(W, 0)
    c.switch(1000)
    c.switch(4000)                      # Black's 5 s delay: nothing charged
    c.switch(5000)                      # White's second move ends its period: 50 s added
    assert c.remaining(5000) == (148_000, 30_000)
    c.switch(15_000)                    # 10 s less 5 s delay
    assert c.remaining(15_000)[B] == 25_000


def test_the_flag_falls_on_each_sides_own_time():
    c = Clock(TimeControl.parse("300,60"))
    c.start(B, 0)
    assert c.flag_time() == 60_000
    assert c.flagged(59_999) is None and c.flagged(60_000) == B
    c = Clock(TimeControl.parse("30,600"))
    c.start(W, 0)
    assert c.flag_time() == 30_000 and c.flagged(30_000) == W


def test_the_same_control_twice_is_no_odds():
    tc = TimeControl.parse("300+3, 300+3")
    assert tc is not None and not tc.odds and tc.text == "300+3"


@pytest.mark.parametrize("bad, says", [("300,", "Black's time control ''"), (",300", "White's time control ''"),
                                       ("300,-", "Black's time control '-' is none"),
                                       ("60,60,60", "two controls"),
                                       ("60,999999", "Black's time control '999999': the time 999999 s is more than"),
                                       ("60+9999,60", "White's time control '60+9999': the increment")])
def test_bad_odds_say_which_side(bad, says):
    with pytest.raises(ClockError) as exc:
        TimeControl.parse(bad)
    assert says in str(exc.value)


def _events(tmp_path, lines, name):
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(p)


# White: e4 at 5.4 s; Black: e5 at 9.3 s; White: Nf3 at 20.5 s
MOVES = [{"t": 5000, "lift": "e2"}, {"t": 5400, "place": "e4"},
         {"t": 9000, "lift": "e7"}, {"t": 9300, "place": "e5"},
         {"t": 20000, "lift": "g1"}, {"t": 20500, "place": "f3"}]


def test_cli_odds_game_resumes_with_both_controls_and_exports_the_tags(tmp_path):
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)

    def run(*args):
        p = subprocess.run(CLI + list(args), env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout

    rep = json.loads(run("play", "--events", _events(tmp_path, MOVES, "a.jsonl"), "--clock", "300+3,60+1", "--json"))
    assert rep["clocks"]["tc"] == "300+3,60+1"
    # White: 300 - 5.4 + 3 - 11.2 + 3; Black: 60 - 3.9 + 1
    assert (rep["clocks"]["white"], rep["clocks"]["black"]) == (289_400, 57_100)
    header = json.loads((tmp_path / "data" / "games" / f"{rep['game']}.jsonl").read_text().splitlines()[0])
    assert header["clock"] == {"tc": "300+3,60+1", "mode": "auto"}
    # resumed: Black moves 2 s after the first board event and gets Black's own 1 s back
    later = [{"t": 1_000_000, "lift": "b8"}, {"t": 1_002_000, "place": "c6"}]
    rep = json.loads(run("play", "--resume", rep["game"], "--events", _events(tmp_path, later, "b.jsonl"), "--json"))
    assert rep["clocks"]["tc"] == "300+3,60+1"
    assert (rep["clocks"]["white"], rep["clocks"]["black"]) == (289_400, 57_100 - 2000 + 1000)
    pgn = run("games", "export", rep["game"], "--format", "pgn")
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None and not game.errors
    assert game.headers["TimeControl"] == "?"
    assert game.headers["WhiteTimeControl"] == "300+3" and game.headers["BlackTimeControl"] == "60+1"
    assert [n.clock() for n in game.mainline()] == [297.6, 57.1, 289.4, 56.1]


def test_help_names_the_odds_form():
    for cmd in ("play", "serve", "match"):
        p = subprocess.run(CLI + [cmd, "--help"], capture_output=True, text=True, timeout=60)
        assert "time odds" in " ".join(p.stdout.split()) or "White's, then Black's" in " ".join(p.stdout.split()), cmd


def test_the_api_starts_an_odds_game_and_refuses_a_bad_one(server, token):
    st = server.new_game(token, "orthodox", clock="300+3,60+1")
    assert st["clocks"]["tc"] == "300+3,60+1"
    assert (st["clocks"]["white"], st["clocks"]["black"]) == (300_000, 60_000)
    status, body = server.post("/api/new", {"variant": "orthodox", "clock": "300+3,-"}, token=token)
    assert status == 400 and "Black's time control '-' is none" in body["error"]
    assert server.wait_state()["clocks"]["tc"] == "300+3,60+1"      # the game goes on
