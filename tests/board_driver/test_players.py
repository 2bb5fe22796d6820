"""Computer players and matches: engine specs, the built-in engine against the random mover in
every family, a UCI game against Fairy-Stockfish on 12x8, and ``fairyboard match`` run as a
user runs it (its games saved and exported as PGN that python-chess reads)."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from fractions import Fraction

import chess.pgn
import pytest

from board_driver.config import load_variant
from board_driver.opponents.match import MatchScore, play_game
from board_driver.opponents.players import (
    EngineSpec,
    PlayerError,
    can_play,
    find_fairy_stockfish,
    legacy_ini,
    make_player,
    parse_spec,
)


def test_engine_specs():
    assert parse_spec("builtin") == EngineSpec("builtin")
    assert parse_spec("builtin:3") == EngineSpec("builtin", 3)
    assert parse_spec("random") == EngineSpec("random")
    assert parse_spec("fsf") == EngineSpec("fsf")
    assert parse_spec("fsf:-5").level == -5
    assert parse_spec("uci:stockfish --x").command == "stockfish --x"
    assert parse_spec("computer") == EngineSpec("builtin")
    for bad, why in (("builtin:0", "1 to 20"), ("fsf:30", "-20 to 20"), ("random:2", "no level"),
                     ("uci:", "needs a command"), ("gnuchess", "unknown engine"), ("builtin:x", "whole number")):
        with pytest.raises(PlayerError, match=why):
            parse_spec(bad)


def test_elo_and_margin():
    s = MatchScore()
    for p in (1, 1, 1, 0):
        s.add(Fraction(p))
    elo, margin = s.elo()
    assert abs(elo - (-400 * math.log10(1 / 0.75 - 1))) < 0.01      # 190.8
    assert margin > 0
    assert s.line().startswith("score 3-0-1 elo 190.8 +- ")
    even = MatchScore()
    for p in (1, 0, Fraction(1, 2)):
        even.add(Fraction(p))
    assert even.line().startswith("score 1-1-1 elo 0.0 +- ")
    perfect = MatchScore()
    for _ in range(4):
        perfect.add(Fraction(1))
    e, m = perfect.elo()
    assert math.isfinite(e) and e > 300 and math.isfinite(m)


def test_elo_margin_against_hand_computed_values():
    # 40 games, +20 =10 -10: mean score 0.625; per-game variance (20 * 0.375^2 + 10 * 0.125^2 +
    # 10 * 0.625^2) / 40 = 0.171875, standard error sqrt(0.171875 / 40) = 0.065551; the 95%
    # interval 0.625 -+ 1.96 * 0.065551 = 0.49652 .. 0.75348 is -2.42 .. +194.09 Elo, so
    # Elo -400 log10(1 / 0.625 - 1) = 88.74, margin (194.09 + 2.42) / 2 = 98.25
    s = MatchScore()
    for p in [1] * 20 + [Fraction(1, 2)] * 10 + [0] * 10:
        s.add(Fraction(p))
    elo, margin = s.elo()
    assert abs(elo - 88.74) < 0.01 and abs(margin - 98.25) < 0.01
    assert s.line() == "score 20-10-10 elo 88.7 +- 98.3"
    # all draws: no spread, no margin; the mirror image of a score is the negative Elo
    d = MatchScore()
    for _ in range(40):
        d.add(Fraction(1, 2))
    assert d.elo() == (0.0, 0.0)
    m = MatchScore()
    for p in [0] * 20 + [Fraction(1, 2)] * 10 + [1] * 10:
        m.add(Fraction(p))
    assert abs(m.elo()[0] + 88.74) < 0.01 and abs(m.elo()[1] - 98.25) < 0.01


def test_match_openings_are_repeatable_random_starts():
    from board_driver.cli.match_cmds import opening_fen
    v = load_variant("orthodox")
    a = [opening_fen(v, 4, 7, pair) for pair in range(6)]
    assert a == [opening_fen(v, 4, 7, pair) for pair in range(6)]      # the same seed, the same starts
    assert len(set(a)) > 3                                             # and they differ pair by pair
    from engine.game import new_game
    start = new_game(v).fen()
    for fen in a:
        assert fen != start and fen.split()[5] == "3"                  # four plies in: White's 3rd move
    assert opening_fen(v, 4, 8, 0) != a[0] or opening_fen(v, 4, 8, 1) != a[1]


FAMILIES = ["orthodox", "tomorrow-1", "courier", "csipgs", "chego", "cost-progressive"]
# csipgs starts from bare royals and buys its army a zorkmid a turn: the short match starts
# from armies already bought
START = {"csipgs": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"}
# The engine's clock in these games counts its readings, not seconds, so a loaded machine
# plays the same games: the chess search reads it every 64 nodes, the other families at
# every node (about 3,000 nodes a move in chess, 150 in csipgs, 400 in the others).
READS = {"chess": 50, "csipgs": 150, "other": 400}


class Ticks:
    def __init__(self, step: float):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
def test_builtin_beats_the_random_mover(name):
    v = load_variant(name)
    for side in (0, 1):
        reads = READS.get(v.family, READS["other"])
        engine = make_player("builtin:2", v, clock=Ticks(0.1 / reads))
        rnd = make_player("random", v, seed=side + 3)
        white, black = (engine, rnd) if side == 0 else (rnd, engine)
        out, n = play_game(v, white, black, seconds=0.1, max_plies=400, fen=START.get(name))
        assert out.winner == side, (name, out.result, out.reason, n)
        if name == "chego":
            break                      # one game: Chego's drops are the slowest to search


def test_a_stopped_builtin_search_ends_at_once_with_a_legal_turn():
    import threading
    import time

    from engine.game import new_game
    v = load_variant("orthodox")
    g = new_game(v)
    engine = make_player("builtin", v)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    t0 = time.monotonic()
    actions = engine.turn(g.copy(), 60.0, stop=stop.is_set)
    spent = time.monotonic() - t0
    assert spent < 5 and actions and actions[0] in g.legal_actions()
    assert math.isfinite(engine.last_seconds) and engine.last_seconds < 5
    assert math.isfinite(engine.total_seconds)
    # not stopped: it answers as before
    assert engine.turn(g.copy(), 0.1, stop=lambda: False)[0] in g.legal_actions()


def _fsf():
    path = find_fairy_stockfish()
    if path is None:
        pytest.skip("Fairy-Stockfish is not installed (apt install fairy-stockfish)")
    return path


def test_uci_game_against_fairy_stockfish_on_12x8():
    _fsf()
    v = load_variant("courier")
    assert (v.geometry.files, v.geometry.ranks) == (12, 8)
    with make_player("fsf:0", v) as fsf, make_player("builtin:1", v) as builtin:
        seen = []

        def on_action(game, action):
            seen.append(action.text)

        out, n = play_game(v, fsf, builtin, seconds=0.05, max_plies=24, on_action=on_action)
    # every answer of the engine was a legal move of our rules (an illegal one loses the game)
    assert "illegal" not in out.reason and "unfinished" not in out.reason, out.reason
    assert n == len(seen) and n >= 10


def test_legacy_fairy_stockfish_gets_builtin_pieces():
    ini = "[fairyboard-courier:chess]\nbishop = -\ncustomPiece1 = e:A\ncustomPiece2 = h:B\nking = k\n"
    out = legacy_ini(ini)
    assert "alfil = e" in out and "bishop = h" in out and "customPiece" not in out and "bishop = -" not in out
    with pytest.raises(PlayerError, match=r"l \(C\)"):
        legacy_ini("[x:chess]\ncustomPiece1 = l:C\n")


def test_fsf_refuses_what_it_cannot_play():
    _fsf()
    with pytest.raises(PlayerError, match="chess-family"):
        make_player("fsf", load_variant("chego"))
    with pytest.raises(PlayerError, match="giraffe"):
        make_player("fsf", load_variant("tomorrow-1"))


def _cli(args, data, **kw):
    env = dict(os.environ, FAIRYBOARD_DATA=str(data))
    return subprocess.run([sys.executable, "-m", "board_driver.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300, **kw)


@pytest.mark.slow
def test_match_command_scores_saves_and_exports(tmp_path):
    r = _cli(["match", "--variant", "orthodox", "--white", "builtin:2", "--black", "random", "--games", "2",
              "--time", "0.05", "--seed", "5"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    m = re.fullmatch(r"score (\d+)-(\d+)-(\d+) elo (-?\d+\.\d) \+- (\d+\.\d)", lines[-1])
    assert m, lines[-1]
    assert (int(m[1]), int(m[2]), int(m[3])) == (2, 0, 0)
    assert float(m[4]) > 0
    assert "2/2" in r.stderr                   # the progress bar
    ids = re.findall(r"saved as (\S+)", r.stdout)
    assert len(ids) == 2
    for i, gid in enumerate(ids):
        e = _cli(["games", "export", gid], tmp_path)
        assert e.returncode == 0, e.stderr
        game = chess.pgn.read_game(io.StringIO(e.stdout))
        board = game.end().board()
        assert board.is_checkmate()
        assert game.headers["Result"] == ("1-0" if i == 0 else "0-1")
        assert game.headers["White"] == ("fairyboard builtin level 2" if i == 0 else "fairyboard random")
    j = _cli(["match", "--white", "random", "--black", "random", "--games", "1", "--time", "0.05", "--json",
              "--seed", "2"], tmp_path)
    data = json.loads(j.stdout)
    assert data["games"][0]["white"] == "random" and data["score_line"].startswith("score ")
    pgn = tmp_path / "m.pgn"
    j = _cli(["match", "--white", "builtin:1", "--black", "random", "--games", "2", "--time", "0.05", "--json",
              "--seed", "3", "--openings", "2", "--pgn", str(pgn)], tmp_path)
    data = json.loads(j.stdout)
    fens = [g["fen"] for g in data["games"]]
    assert fens[0] == fens[1] and data["openings"] == 2        # a pair: one start, the colours swapped
    text = pgn.read_text()
    games = [chess.pgn.read_game(io.StringIO(part)) for part in text.split("\n\n[Event")[:1]]
    assert text.count("[Event ") == 2 and f'[FEN "{fens[0]}"]' in text
    assert games[0].headers["White"] == "fairyboard builtin level 1"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["csipgs", "chego"])
def test_match_openings_in_other_families_are_the_games_first_actions(tmp_path, variant):
    from board_driver.journal import GameStore, load_any
    j = _cli(["match", "--variant", variant, "--white", "builtin:1", "--black", "random", "--games", "4",
              "--time", "0.02", "--json", "--seed", "3", "--openings", "3", "--no-progress"], tmp_path)
    assert j.returncode == 0, j.stderr
    games = json.loads(j.stdout)["games"]
    openings = [g["opening"] for g in games]
    assert openings[0] == openings[1] and openings[2] == openings[3]     # a pair: one start, colours swapped
    assert openings[0] != openings[2] and all(len(o) >= 3 for o in openings)
    assert all("fen" not in g for g in games)
    store = GameStore(tmp_path)
    for g, opening in zip(games, openings):
        actions = load_any(store.path(g["id"])).actions
        assert actions[:len(opening)] == opening and len(actions) == g["actions"]


def test_match_command_says_what_is_wrong(tmp_path):
    r = _cli(["match", "--white", "builtin:99", "--black", "random"], tmp_path)
    assert r.returncode == 2 and "builtin levels are 1 to 20" in r.stderr
    r = _cli(["match", "--variant", "chego", "--white", "uci:stockfish", "--black", "random"], tmp_path)
    assert r.returncode == 2 and "chess-family" in r.stderr


def test_any_uci_engine_plays_orthodox_chess():
    path = _fsf()
    v = load_variant("orthodox")
    with make_player(f"uci:{path}", v) as uci, make_player("builtin:1", v) as builtin:
        assert uci.uci_variant is None            # plain UCI chess: no variants.ini
        out, n = play_game(v, builtin, uci, seconds=0.05, max_plies=16)
    assert "illegal" not in out.reason and n == 16, out.reason


def test_board_profile_names_the_fairy_stockfish_binary():
    from board_driver.opponents.players import fsf_path_from_profile
    from board_driver.referee.layout import BoardProfile
    data = {"name": "x", "engines": {"fsf": "/opt/fsf/fairy-stockfish"}}
    BoardProfile.from_dict(data, "x.yaml")                      # a known key of a profile
    assert fsf_path_from_profile(data, "x.yaml") == "/opt/fsf/fairy-stockfish"
    assert fsf_path_from_profile({}, "x.yaml") is None
    with pytest.raises(PlayerError, match=r"x.yaml: engines"):
        fsf_path_from_profile({"engines": {"stockfish": "/x"}}, "x.yaml")


def test_play_refuses_an_engine_that_cannot_play_before_creating_a_game(tmp_path):
    events = tmp_path / "none.jsonl"
    events.write_text("")
    r = _cli(["play", "--variant", "tomorrow-1", "--black", "fsf", "--events", str(events)], tmp_path / "data")
    assert r.returncode == 2 and "--black fsf" in r.stderr and "giraffe" in r.stderr
    r = _cli(["play", "--black", "builtin:99", "--events", str(events)], tmp_path / "data")
    assert r.returncode == 2 and "builtin levels are 1 to 20" in r.stderr
    assert not list((tmp_path / "data").glob("games/*.jsonl"))


def test_builtin_old_plays_a_saved_copy_of_the_search(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    import engine.search
    from board_driver.opponents import players
    bench = Path(__file__).resolve().parents[1] / "bench" / "old_search.py"
    spec = importlib.util.spec_from_file_location("old_search", bench)
    assert spec is not None and spec.loader is not None
    old_search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old_search)
    OLD_SEARCH_ENV = old_search.ENV
    v = load_variant("orthodox")
    monkeypatch.setattr(players, "_REGISTERED", {})
    with pytest.raises(PlayerError, match="unknown engine 'builtin-old'"):
        parse_spec("builtin-old:3")                         # a benchmark's kind: not in the product
    old_search.register()
    assert parse_spec("builtin-old:3").text == "builtin-old:3"
    monkeypatch.delenv(OLD_SEARCH_ENV, raising=False)
    assert "FAIRYBOARD_BUILTIN_OLD" in can_play("builtin-old", v)
    old = tmp_path / "old_search.py"
    old.write_text(Path(engine.search.__file__).read_text().replace("PRUNING = True", "PRUNING = False"))
    monkeypatch.setenv(OLD_SEARCH_ENV, str(old))
    assert can_play("builtin-old:2", v) is None
    with make_player("builtin-old:2", v) as a, make_player("builtin:2", v) as b:
        assert type(a.searcher).__module__ == "engine._search_old" and a.depth == 2
        assert type(b.searcher).__module__ == "engine.search"
        out, n = play_game(v, a, b, seconds=0.05, max_plies=6)
    assert n == 6 and "illegal" not in out.reason


def test_match_time_odds_follow_the_engine_across_colours(tmp_path):
    r = _cli(["match", "--white", "random", "--black", "random", "--games", "2", "--time", "0.05",
              "--time-a", "0.2", "--seed", "4", "--json", "--no-progress"], tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["time_a"], data["time_b"]) == (0.2, 0.05)
    heads = [json.loads((tmp_path / "games" / f"{g['id']}.jsonl").read_text().splitlines()[0])
             for g in data["games"]]
    # A is White in game 1 and Black in game 2: its 0.2 s goes with it
    assert (heads[0]["time"], heads[0]["time_black"]) == (0.2, 0.05)
    assert (heads[1]["time"], heads[1]["time_black"]) == (0.05, 0.2)
    text = _cli(["match", "--white", "random", "--black", "random", "--games", "2", "--time-b", "0.1",
                 "--time", "0.05", "--seed", "4", "--no-progress"], tmp_path).stdout
    assert "A 0.05 s a move, B 0.1 s" in text
    bad = _cli(["match", "--white", "random", "--black", "random", "--clock", "60+1", "--time-a", "2"], tmp_path)
    assert bad.returncode == 2 and "--time-a" in bad.stderr and "clock" in bad.stderr


def test_a_game_names_both_players_when_one_side_is_named():
    from board_driver.referee.session import both_players
    assert both_players({"black": "fsf"}) == {"white": "White", "black": "fsf"}
    assert both_players({"black": "Bob"}, {"white": "Ann", "black": "x"}) == {"white": "Ann", "black": "Bob"}
    assert both_players(None) == {"white": "White", "black": "Black"}
