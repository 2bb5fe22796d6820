"""Differential tests: every variant Fairy-Stockfish can express, against pyffish.

Fairy-Stockfish loads the variants.ini sections the engine prints (engine/fsf.py), so these
tests also check that export. Each pyffish call costs about 1.5 ms: the tests compare legal
move sets along random games (one call per position) and run small perfts.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

pyffish = pytest.importorskip("pyffish")

from board_driver.config import load_variant, variant_names  # noqa: E402
from engine import random_variant  # noqa: E402
from engine.fsf import expressible, fsf_name, variants_ini  # noqa: E402
from engine.moves import to_uci  # noqa: E402
from engine.perft import perft  # noqa: E402
from engine.position import Position  # noqa: E402

CONFIGURED = [n for n in variant_names() if expressible(load_variant(n))]
RANDOM = [f"random-{'-'.join(map(str, rv.dice))}" for rv in random_variant.all_outcomes()
          if expressible(load_variant(f"random-{'-'.join(map(str, rv.dice))}"))]


BUILT_IN = set(pyffish.variants())                   # Fairy-Stockfish's own, before ours load


@pytest.fixture(scope="module", autouse=True)
def loaded():
    text = "\n".join(variants_ini(load_variant(n)) for n in CONFIGURED + RANDOM)
    pyffish.load_variant_config(text)


@pytest.mark.parametrize("name", CONFIGURED + RANDOM)
def test_every_exported_section_loads_under_its_own_name_and_matches_perft(name):
    v = load_variant(name)
    section = variants_ini(v)
    assert section.startswith(f"[{fsf_name(name)}:chess]")
    assert fsf_name(name) not in BUILT_IN                   # cannot collide with a built-in
    assert fsf_name(name) in pyffish.variants()             # the section loaded
    assert perft(Position.from_fen(v), 1) == fsf_perft(fsf_name(name), v.start_fen, 1)


@pytest.mark.slow
def test_the_fsf_command_exports_courier_under_a_name_fairy_stockfish_does_not_have():
    assert "courier" in BUILT_IN                            # why the prefix is needed
    out = subprocess.run([sys.executable, "-m", "board_driver.cli", "fsf", "--variant", "courier"],
                         capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "[fairyboard-courier:chess]"
    pyffish.load_variant_config(out)
    v = load_variant("courier")
    # our Courier Chess, not Fairy-Stockfish's built-in one (18,406 nodes at depth 3)
    assert fsf_perft("fairyboard-courier", v.start_fen, 3) == perft(Position.from_fen(v), 3) == 33606


def test_the_expected_variants_are_expressible():
    # Giraffe, Griffin and Aanca are beyond Fairy-Stockfish; everything else is checked here.
    assert {"orthodox", "tomorrow-2", "tomorrow-3", "courier"} <= set(CONFIGURED)
    assert not {"tomorrow-1", "tomorrow-4", "tomorrow-5", "tomorrow-4-great"} & set(CONFIGURED)
    # From the text's tables: triples and pairs keep variant 1's or 4's Giraffes; of the
    # consecutive throws 2-3-4 brings Giraffe pieces and 3-4-5 a Griffin; of variant 3's,
    # 1-2-6, 1-4-5, 1-4-6, 2-4-6, 3-4-6 bring a Griffin or Aanca and 1-3-4, 2-3-5, 3-5-6 a Giraffe.
    assert RANDOM == ["random-1-2-3", "random-1-2-4", "random-1-2-5", "random-1-3-5", "random-1-3-6",
                      "random-1-5-6", "random-2-3-6", "random-2-4-5", "random-2-5-6", "random-4-5-6"]


def fsf_perft(name: str, fen: str, depth: int, moves=()) -> int:
    legal = pyffish.legal_moves(name, fen, list(moves))
    if depth == 1:
        return len(legal)
    return sum(fsf_perft(name, fen, depth - 1, list(moves) + [m]) for m in legal)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["orthodox", "tomorrow-2", "tomorrow-3", "courier"])
def test_start_perft_3(name):
    v = load_variant(name)
    assert perft(Position.from_fen(v), 3) == fsf_perft(fsf_name(name), v.start_fen, 3)


def _random_walk(name: str, games: int, plies: int, seed: int):
    """Play random games, checking every position's legal moves, check and FEN against
    Fairy-Stockfish, which follows the game from its own FEN of the position before (not by
    replaying every move from the start: that was 100 replays a ply);
    returns some of the positions met (FENs) for perft checks."""
    v = load_variant(name)
    rng = random.Random(seed)
    seen = []
    fname = fsf_name(name)
    for _ in range(games):
        pos = Position.from_fen(v)
        moves: list[str] = []
        fen = v.start_fen            # Fairy-Stockfish's own FEN, carried a move at a time by Fairy-Stockfish
        for _ in range(plies):
            ours = {to_uci(m, v): m for m in pos.legal_moves()}
            theirs = set(pyffish.legal_moves(fname, fen, []))
            assert set(ours) == theirs, (name, moves, sorted(set(ours) ^ theirs))
            assert pos.fen() == fen, (name, moves)
            assert pos.in_check() == pyffish.gives_check(fname, fen, []), (name, moves)
            if not ours:
                break
            text = rng.choice(sorted(ours))
            pos.push(ours[text])
            moves.append(text)
            fen = pyffish.get_fen(fname, fen, [text])
            if rng.random() < 0.08:
                seen.append((pos.fen(), list(moves)))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("name", ["orthodox", "tomorrow-2", "tomorrow-3", "courier"])
def test_random_games_match(name):
    seen = _random_walk(name, games=4, plies=100, seed=hash(name) & 0xFFFF)
    v = load_variant(name)
    # perft 2 from a handful of the positions met, through our FEN (checks FEN round trip too)
    for fen, moves in seen[:6]:
        assert perft(Position.from_fen(v, fen), 2) == fsf_perft(fsf_name(name), v.start_fen, 2, moves), fen


@pytest.mark.slow
def test_random_variant_arrays_match():
    for i, name in enumerate(RANDOM):
        _random_walk(name, games=1, plies=80, seed=i)


def test_castling_on_twelve_files_matches():
    """Positions where both sides may castle both ways on 12 files (king on g or i)."""
    cases = {
        "tomorrow-2": "r5k4r/pppppppppppp/12/12/12/12/PPPPPPPPPPPP/R5K4R w KQkq - 0 1",
        "tomorrow-3": "r7k2r/pppppppppppp/12/12/12/12/PPPPPPPPPPPP/R7K2R w KQkq - 0 1",
    }
    for name, fen in cases.items():
        v = load_variant(name)
        pos = Position.from_fen(v, fen)
        ours = sorted(to_uci(m, v) for m in pos.legal_moves())
        theirs = sorted(pyffish.legal_moves(fsf_name(name), fen, []))
        assert ours == theirs
        king = "g1" if name == "tomorrow-2" else "i1"
        castles = {m for m in ours if m.startswith(king) and abs(ord(m[2]) - ord(m[0])) == 2}
        assert len(castles) == 2, castles
        assert perft(pos, 2) == fsf_perft(fsf_name(name), fen, 2)
