"""The clock through the command line: events scripts in virtual time give exact %clk values in
the PGN, a flag fall ends the game on time in the journal and the PGN, and a resume (after a
clean exit or a kill -9) restores both clocks as the last action left them, stopped until the
board moves again."""

import io
import json
import os
import select
import signal
import subprocess
import sys

import chess.pgn
import pytest

from board_driver.journal import load_any

CLI = [sys.executable, "-m", "board_driver.cli"]


def script(tmp_path, lines, name="game.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(p)


# White: e4 at 5.4 s, Nf3 at 20.5 s, Bc4 at 31 s; Black: e5 at 9.3 s, Nc6 at 25 s
GAME = [{"t": 5000, "lift": "e2"}, {"t": 5400, "place": "e4"},
        {"t": 9000, "lift": "e7"}, {"t": 9300, "place": "e5"},
        {"t": 20000, "lift": "g1"}, {"t": 20500, "place": "f3"},
        {"t": 24000, "lift": "b8"}, {"t": 25000, "place": "c6"},
        {"t": 30000, "lift": "f1"}, {"t": 31000, "place": "c4"}]


def test_events_with_a_clock_give_exact_clk_values_in_the_pgn(tmp_path, data, fb):
    code, out, err = fb("play", "--events", script(tmp_path, GAME), "--clock", "60+2", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["moves"] == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]
    assert rep["clocks"]["white"] == 60_000 - 5400 + 2000 - 11_200 + 2000 - 6000 + 2000
    code, pgn, _ = fb("games", "export", "latest", "--format", "pgn")
    assert '[TimeControl "60+2"]' in pgn
    assert ("1. e4 {[%clk 0:00:56.6]} e5 {[%clk 0:00:58.1]} 2. Nf3 {[%clk 0:00:47.4]} "
            "Nc6 {[%clk 0:00:55.6]} 3. Bc4 {[%clk 0:00:43.4]} *") in " ".join(pgn.split())
    game = chess.pgn.read_game(io.StringIO(pgn))
    clocks = [n.clock() for n in game.mainline()]
    assert clocks == [56.6, 58.1, 47.4, 55.6, 43.4]
    recs = [r for r in load_any(data / "games" / f"{rep['game']}.jsonl").records if r["type"] == "push"]
    assert [r["clk"] for r in recs] == [[56_600, 60_000], [56_600, 58_100], [47_400, 58_100],
                                        [47_400, 55_600], [43_400, 55_600]]
    assert recs[2]["clk0"] == [45_400, 58_100] and recs[4]["n"] == [3, 2]
    code, shown, _ = fb("games", "show", "latest")
    assert "1. e4 {[%clk 0:00:56.6]} e5 {[%clk 0:00:58.1]}" in shown and "TimeControl: 60+2" in shown


def test_white_not_moving_for_longer_than_his_time_loses_on_time(tmp_path, data, fb):
    code, out, err = fb("play", "--events", script(tmp_path, [{"t": 61_000, "lift": "e2"}]),
                        "--clock", "60+2", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert (rep["result"], rep["reason"]) == ("0-1", "time forfeit")
    assert rep["clocks"]["white"] == 0 and rep["clocks"]["flag"] == "white"
    code, pgn, _ = fb("games", "export", "latest", "--format", "pgn")
    assert '[Result "0-1"]' in pgn and '[Termination "time forfeit"]' in pgn
    recs = load_any(data / "games" / f"{rep['game']}.jsonl").records
    assert {"type": "flag", "color": "white", "t": 60_000, "draw": False, "clk": [0, 60_000]} in recs
    assert {"type": "result", "result": "0-1", "reason": "time forfeit", "clk": [0, 60_000]} in recs


def test_a_bad_time_control_is_refused_before_any_game(tmp_path, data, fb):
    code, out, err = fb("play", "--events", script(tmp_path, GAME), "--clock", "40/", "--json")
    assert code == 2 and "time control" in err
    assert not (data / "games").exists() or not list((data / "games").iterdir())


def test_a_resume_restores_the_clocks_of_the_last_action_and_charges_no_time_off(tmp_path, data, fb):
    code, out, _ = fb("play", "--events", script(tmp_path, GAME[:6]), "--clock", "60+2", "--json")
    gid = json.loads(out)["game"]
    # hours later: the game goes on; the clock waits for the board (Black to move: 58.1 s left)
    later = [{"t": 3_600_000, "lift": "b8"}, {"t": 3_601_000, "place": "c6"}]
    code, out, err = fb("play", "--resume", gid, "--events", script(tmp_path, later, "later.jsonl"), "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["moves"][-1] == "b8c6"
    # the lift at 3,600,000 restarted Black's clock: 1 s used, 2 s added
    assert rep["clocks"]["black"] == 58_100 - 1000 + 2000 and rep["clocks"]["white"] == 47_400
    code, pgn, _ = fb("games", "export", gid, "--format", "pgn")
    assert "Nc6 {[%clk 0:00:59.1]}" in " ".join(pgn.split())


def test_pause_and_adjust_are_journaled_and_resumed(tmp_path, data, fb):
    lines = GAME[:2] + [{"t": 7000, "input": "clock adjust white 10:00"}, {"t": 8000, "input": "clock pause"}]
    code, out, _ = fb("play", "--events", script(tmp_path, lines), "--clock", "300", "--json")
    gid = json.loads(out)["game"]
    recs = [r for r in load_any(data / "games" / f"{gid}.jsonl").records if r["type"] == "clock"]
    assert recs == [{"type": "clock", "op": "adjust", "color": "white", "clk": [600_000, 298_400], "n": [1, 0]},
                    {"type": "clock", "op": "pause", "clk": [600_000, 297_400], "n": [1, 0]}]
    code, out, _ = fb("play", "--resume", gid, "--events", script(tmp_path, [{"t": 0, "input": "clock"}], "c.jsonl"),
                      "--json")
    c = json.loads(out)["clocks"]
    assert (c["white"], c["black"], c["running"]) == (600_000, 297_400, None)


class Repl:
    """``fairyboard play`` on a pipe, one line at a time."""

    PROMPT = b"fairyboard> "

    def __init__(self, args, env):
        self.p = subprocess.Popen(CLI + ["play"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.out = b""
        self.first = self.until_prompt()

    def until_prompt(self) -> str:
        fd = self.p.stdout.fileno()
        while not self.out.endswith(self.PROMPT):
            ready, _, _ = select.select([fd], [], [], 60)
            assert ready, self.out.decode(errors="replace")[-2000:]
            chunk = os.read(fd, 65536)
            assert chunk, self.out.decode(errors="replace")[-2000:]
            self.out += chunk
        got, self.out = self.out, b""
        return got.decode(errors="replace")

    def send(self, line: str) -> str:
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        return self.until_prompt()

    def kill(self) -> None:
        os.kill(self.p.pid, signal.SIGKILL)
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            f.close()


@pytest.mark.slow
def test_kill_9_mid_game_resumes_with_the_journaled_times(tmp_path):
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)
    repl = Repl(["--new", "--clock", "300+5", "--color", "never"], env)
    assert "Clock 300+5: White 0:05:00 (running)  Black 0:05:00" in repl.first
    repl.send("e2-e4")
    repl.send("e7-e5")
    out = repl.send("g1-f3")
    gid = (tmp_path / "data" / "current").read_text().strip()
    pushes = [r for r in load_any(tmp_path / "data" / "games" / f"{gid}.jsonl").records if r["type"] == "push"]
    assert len(pushes) == 3
    w, b = pushes[-1]["clk"]
    assert w < 300_000 + 10_000 and b < 305_000
    repl.kill()                                         # the power goes
    repl = Repl(["--color", "never"], env)
    assert "Resumed game" in repl.first
    line = [x for x in repl.first.splitlines() if x.startswith("Clock 300+5:")][0]
    from board_driver.referee.clock import format_clock
    assert line == (f"Clock 300+5: White {format_clock(w, True)}  Black {format_clock(b, True)} -- stopped: "
                    f"a move or `clock start` restarts it")
    out = repl.send("b8-c6")                            # Black's move restarts his clock
    pushes = [r for r in load_any(tmp_path / "data" / "games" / f"{gid}.jsonl").records if r["type"] == "push"]
    assert pushes[-1]["action"] == "b8c6" and pushes[-1]["clk"][0] == w
    assert b < pushes[-1]["clk"][1] <= b + 5000         # 150-300 ms of virtual hand time used, 5 s added
    repl.p.stdin.write(b"quit\n")
    repl.p.stdin.close()
    assert repl.p.wait(60) == 0
