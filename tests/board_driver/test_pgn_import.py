"""Starting from a PGN (``play --pgn FILE --ply N``, docs/board-driver.md, *Starting from a
PGN*): a game exported by ``games export`` read back, its moves matched by the engine for
every family, played on from any turn with its actions as the new game's history; bad PGN,
a move that does not match and a ply past the end are one line, exit 2, and no game."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys

import chess
import chess.pgn
import pytest

from board_driver.config import load_variant
from board_driver.journal import load_record
from board_driver.pgn import pgn_of, sans_of, turns_of
from engine.game import new_game

CLI = [sys.executable, "-m", "board_driver.cli"]


def _lines(tmp_path, name, lines) -> str:
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(p)


def test_an_exported_orthodox_game_plays_on_from_a_ply_as_python_chess_reads_it(tmp_path):
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)

    def run(*args, code=0):
        p = subprocess.run(CLI + list(args), env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == code, p.stderr
        return p

    moves = [("e2", "e4"), ("d7", "d5"), ("e4", "d5"), ("d8", "d5"), ("b1", "c3"), ("d5", "a5")]
    events, t = [], 1000
    for a, b in moves:
        if b in ("d5",) and a in ("e4", "d8"):
            events.append({"t": t, "lift": b})          # a capture: the captured piece first
            t += 300
        events += [{"t": t, "lift": a}, {"t": t + 300, "place": b}]
        t += 2000
    rep = json.loads(run("play", "--events", _lines(tmp_path, "a.jsonl", events), "--white", "Anna",
                         "--json").stdout)
    assert rep["moves"] == ["e2e4", "d7d5", "e4d5", "d8d5", "b1c3", "d5a5"]
    pgn = run("games", "export", rep["game"], "--format", "pgn").stdout
    (tmp_path / "g.pgn").write_text(pgn)
    # after 3 turns: the position python-chess reaches, and the moves kept
    on = [{"t": 1000, "lift": "b1"}, {"t": 1300, "place": "c3"}]
    new = json.loads(run("play", "--pgn", str(tmp_path / "g.pgn"), "--ply", "3", "--events",
                         _lines(tmp_path, "b.jsonl", []), "--json").stdout)
    read = chess.pgn.read_game(io.StringIO(pgn))
    assert read is not None
    board = read.board()
    for move in list(read.mainline_moves())[:3]:
        board.push(move)
    assert new["fen"].split()[:4] == board.fen().split()[:4]
    assert new["moves"] == ["e2e4", "d7d5", "e4d5"] and new["game"] != rep["game"]
    assert new["turn"] == "black"
    # the new game goes on from there, its history kept (the PGN names White, not Black)
    goes = json.loads(run("play", "--pgn", str(tmp_path / "g.pgn"), "--ply", "4", "--events",
                          _lines(tmp_path, "c.jsonl", on), "--json").stdout)
    assert goes["moves"] == ["e2e4", "d7d5", "e4d5", "d8d5", "b1c3"]
    again = run("games", "export", goes["game"], "--format", "pgn").stdout
    assert '[White "Anna"]' in again and '[Black "?"]' in again
    assert "1. e4 d5 2. exd5 Qxd5 3. Nc3" in " ".join(again.split())


def _exported(tmp_path, variant: str, plies: int, seed: int):
    """A random game of ``variant`` exported to PGN: its actions, its turns' sizes, the file."""
    rnd = random.Random(seed)
    g = new_game(load_variant(variant))
    actions = []
    while len(actions) < plies and g.outcome() is None:
        legal = list(g.legal_actions())
        moves = [a for a in legal if a.kind != "end"] or legal
        a = rnd.choice(legal if rnd.random() < 0.3 else moves)
        actions.append(a.text)
        g.push(a)
    sizes = [len(items) for _, items in turns_of(sans_of(g))]
    header = {"type": "game", "id": "g1", "variant": variant, "date": "2026-11-28"}
    recs = [header] + [{"type": "push", "ply": i, "action": a} for i, a in enumerate(actions, 1)]
    (tmp_path / "g1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    path = tmp_path / "g.pgn"
    path.write_text(pgn_of(load_record(tmp_path / "g1.jsonl")))
    return actions, sizes, str(path)


@pytest.mark.parametrize("variant, seed", [("tomorrow-3", 1), ("csipgs", 4), ("cost-progressive", 2),
                                           ("chego", 3)])
def test_every_family_plays_on_from_a_turn_with_the_actions_that_reached_it(tmp_path, data, fb, variant, seed):
    actions, sizes, path = _exported(tmp_path, variant, 50, seed)
    empty = _lines(tmp_path, "none.jsonl", [])
    for ply in (0, 5, len(sizes) - 3):
        n = sum(sizes[:ply])
        code, out, err = fb("play", "--pgn", path, "--ply", str(ply), "--events", empty, "--json")
        assert code == 0, err
        rep = json.loads(out)
        want = new_game(load_variant(variant))
        for a in actions[:n]:
            want.push(want.parse(a))
        assert rep["variant"] == variant
        assert rep["moves"] == actions[:n]
        assert rep["fen"] == want.fen()


def test_a_takeback_after_the_import_goes_back_into_the_pgn_s_moves(tmp_path, data, fb):
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "?"]\n[White "?"]\n[Black "Bo"]\n\n1. d4 Nf6 2. c4 e6 *\n')
    code, out, err = fb("play", "--pgn", str(pgn), "--events",
                        _lines(tmp_path, "t.jsonl", [{"t": 1000, "input": "takeback"},
                                                     {"t": 2000, "lift": "e6"}, {"t": 2300, "place": "e7"}]),
                        "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["moves"] == ["d2d4", "g8f6", "c2c4"]
    assert load_record(data / "games" / f"{rep['game']}.jsonl").header["players"] == {"white": "White",
                                                                                       "black": "Bo"}


@pytest.mark.parametrize("text, ply, says", [
    (None, None, "cannot read it"),
    ("hello, this is not chess\n", None, "not a PGN"),
    ('[Event "?"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb6 a6 *\n', None, "move 3. Bb6: 'Bb6' is not a legal move here"),
    ('[Event "?"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 Ke7 4. Bxe5 *\n', None, "move 4. Bxe5"),
    ('[Event "?"]\n\n1. e4 e5 2. Nf3 *\n', 4, "--ply 4: the game in"),
    ('[Event "?"]\n[FairyboardVariant "nosuch"]\n\n1. e4 *\n', None, "variant 'nosuch'"),
    ('[Event "?"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n', None, "the game is over after 4 turns"),
])
def test_a_bad_pgn_is_one_line_exit_2_and_no_game(tmp_path, data, fb, text, ply, says):
    path = tmp_path / "g.pgn"
    if text is not None:
        path.write_text(text)
    args = ["play", "--pgn", str(path), "--events", _lines(tmp_path, "e.jsonl", [])]
    if ply is not None:
        args += ["--ply", str(ply)]
    code, out, err = fb(*args)
    assert code == 2
    assert says in err and len(err.strip().splitlines()) == 1, err
    assert not (data / "games").exists() or not list((data / "games").glob("*.jsonl"))


def test_ply_without_pgn_and_pgn_with_fen_are_refused(tmp_path, data, fb):
    code, _, err = fb("play", "--ply", "3", "--events", _lines(tmp_path, "e.jsonl", []))
    assert code == 2 and "--pgn FILE" in err
    (tmp_path / "g.pgn").write_text('[Event "?"]\n\n1. e4 *\n')
    code, _, err = fb("play", "--pgn", str(tmp_path / "g.pgn"), "--fen", "8/8/8/8/8/8/8/K6k w - - 0 1",
                      "--events", _lines(tmp_path, "e.jsonl", []))
    assert code == 2 and "--pgn and --fen" in err


def test_another_program_s_annotations_variations_and_nags_are_skipped(tmp_path, data, fb):
    (tmp_path / "g.pgn").write_text('[Event "?"]\n[White "Anna"]\n[Black "?"]\n\n'
                                    "1. e4 {Best by test: the king's pawn.} e5 2. Nf3 (2. f4 exf4) 2... Nc6 $1 "
                                    "3. Bb5 a6 1/2-1/2\n\n[Event \"second\"]\n\n1. d4 *\n")
    code, out, err = fb("play", "--pgn", str(tmp_path / "g.pgn"), "--events", _lines(tmp_path, "e.jsonl", []),
                        "--json")
    assert code == 0, err
    assert json.loads(out)["moves"] == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
