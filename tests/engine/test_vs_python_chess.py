"""Differential tests: orthodox move generation against python-chess."""

from __future__ import annotations

import random

import chess
from chess_reference import chess_perft
import pytest

from engine.moves import to_uci
from engine.perft import perft
from engine.position import Position

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# Positions 3-6 of the Chess Programming Wiki's perft suite: promotions, en passant pins,
# castling rights edge cases.
POSITIONS = [
    chess.STARTING_FEN,
    KIWIPETE,
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
]


@pytest.mark.parametrize("fen", POSITIONS)
def test_perft_matches_python_chess(variant, fen):
    v = variant("orthodox")
    depth = 3
    assert perft(Position.from_fen(v, fen), depth) == chess_perft(chess.Board(fen), depth)


def test_start_perft_4_is_the_published_count(variant):
    # 197281 is the published figure (and python-chess's); checked here once, at depth 4.
    assert perft(Position.from_fen(variant("orthodox")), 4) == 197281


@pytest.mark.slow
def test_random_games_have_the_same_legal_moves_and_fen(variant):
    """Along 40 random games, every position has python-chess's legal moves and FEN."""
    v = variant("orthodox")
    rng = random.Random(20261121)
    positions = 0
    for _ in range(40):
        board = chess.Board()
        pos = Position.from_fen(v)
        while not board.is_game_over(claim_draw=False) and board.ply() < 160:
            ours = sorted(to_uci(m, v) for m in pos.legal_moves())
            theirs = sorted(m.uci() for m in board.legal_moves)
            assert ours == theirs, board.fen()
            # python-chess writes the en passant square only when a legal capture exists
            assert pos.fen() == board.fen(en_passant="legal") or \
                _without_ep(pos.fen()) == _without_ep(board.fen()), board.fen()
            assert pos.in_check() == board.is_check()
            move = rng.choice(list(board.legal_moves))
            board.push(move)
            pos.push(next(m for m in pos.legal_moves() if to_uci(m, v) == move.uci()))
            positions += 1
        # unwinding restores the start exactly
        while pos.stack:
            pos.pop()
        assert pos.fen() == chess.STARTING_FEN
    assert positions > 2000


def _without_ep(fen: str) -> str:
    parts = fen.split()
    parts[3] = "-"
    return " ".join(parts)


def test_perft_from_random_positions(variant):
    v = variant("orthodox")
    rng = random.Random(7)
    for _ in range(12):
        board = chess.Board()
        for _ in range(rng.randrange(10, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        assert perft(Position.from_fen(v, board.fen()), 2) == chess_perft(board, 2), board.fen()
