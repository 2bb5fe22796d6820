"""The engine's judgement of a finished game: ``fairyboard games analyse ID`` (an evaluation per
turn from the best engine for the variant, the big swings marked) and the analysis behind it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from board_driver.config import load_variant
from board_driver.journal import GameStore
from board_driver.opponents.analysis import analyse, best_engine, mark_of, score_text
from board_driver.opponents.players import find_fsf_wasm

SCHOLAR = "e2e4 e7e5 d1h5 b8c6 f1c4 g8f6 h5f7".split()     # 3...Nf6?? allows 4.Qxf7#


def _save(data, variant: str, moves: list[str], result: str, reason: str) -> str:
    from engine.game import new_game
    store = GameStore(data)
    gid, journal = store.create(variant, new_game(load_variant(variant)).fen(),
                                players={"white": "Ann", "black": "Bob"})
    for i, m in enumerate(moves, 1):
        journal.write({"type": "push", "ply": i, "action": m}, sync=False)
    journal.write({"type": "result", "result": result, "reason": reason}, sync=True)
    journal.close()
    return gid


def test_the_blunder_that_allows_a_mate_is_marked():
    r = analyse(load_variant("orthodox"), SCHOLAR, engine="builtin:3", seconds=0.2)
    assert r.engine == "builtin:3" and len(r.turns) == 7
    assert [t.ply for t in r.turns] == list(range(1, 8)) and [t.side for t in r.turns] == [0, 1] * 3 + [0]
    nf6 = r.turns[5]
    assert nf6.san == "Nf6" and nf6.mate == 1 and nf6.mark == "??" and nf6.loss >= 300
    assert nf6.best and nf6.best != "g8f6"            # the engine would have played something else
    last = r.turns[6]
    assert last.san == "Qxf7#" and last.mate == 0 and score_text(last.cp, last.mate) == "mate"
    assert 6 in [t.ply for t in r.swings()]


def test_marks_and_score_texts():
    assert (mark_of(0), mark_of(149), mark_of(150), mark_of(299), mark_of(300)) == ("", "", "?", "?", "??")
    assert score_text(35, None) == "+0.35" and score_text(-210, None) == "-2.10"
    assert score_text(99997, 3) == "#3" and score_text(-99998, -2) == "#-2"


def test_the_best_engine_is_fairy_stockfish_where_it_plays_the_variant_else_builtin():
    assert best_engine(load_variant("chego")) == "builtin"            # no UCI engine plays Chego
    assert best_engine(load_variant("tomorrow-1")) == "builtin"       # the giraffe
    wasm = not isinstance(find_fsf_wasm(), str)
    if wasm:
        assert best_engine(load_variant("tomorrow-3")) == "fsf"


def _cli(args, data):
    env = dict(os.environ, FAIRYBOARD_DATA=str(data))
    return subprocess.run([sys.executable, "-m", "board_driver.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_games_analyse_prints_a_table_and_the_big_swings(tmp_path):
    gid = _save(tmp_path, "orthodox", SCHOLAR, "1-0", "checkmate")
    r = _cli(["games", "analyse", gid, "--engine", "builtin:3", "--time", "0.2"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"Game {gid}: orthodox, 1-0 (checkmate); judged by builtin:3")
    row = next(ln for ln in lines if "... Nf6" in ln)
    assert row.split()[0] == "6" and "#1" in row and row.rstrip().endswith("??")
    assert "mate" in next(ln for ln in lines if "Qxf7#" in ln)
    assert lines[-1].startswith("big swings: ") and "6 Nf6??" in lines[-1]
    j = _cli(["games", "analyse", "latest", "--engine", "builtin:2", "--time", "0.05", "--json"], tmp_path)
    data = json.loads(j.stdout)
    assert data["id"] == gid and data["engine"] == "builtin:2" and len(data["turns"]) == 7
    assert data["turns"][5]["mark"] == "??"
    bad = _cli(["games", "analyse", gid, "--engine", "random"], tmp_path)
    assert bad.returncode == 2 and "random" in bad.stderr


@pytest.mark.slow
def test_games_analyse_judges_tomorrows_chess_with_the_wasm_fairy_stockfish(tmp_path):
    if isinstance(find_fsf_wasm(), str):
        pytest.skip(str(find_fsf_wasm()))
    gid = _save(tmp_path, "tomorrow-3", "g2g3 g7g6 f1e3 f8e6".split(), "*", "abandoned")
    r = _cli(["games", "analyse", gid, "--time", "0.05", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["engine"] == "fsf" and [t["ply"] for t in data["turns"]] == [1, 2, 3, 4]
    assert all(t["best"] for t in data["turns"])
