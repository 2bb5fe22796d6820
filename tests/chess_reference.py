"""python-chess as the reference for orthodox chess, shared by the tests and the benchmarks:
perft counted by python-chess's own move generator."""

from __future__ import annotations

import chess


def chess_perft(board: chess.Board, depth: int) -> int:
    """The number of move sequences of ``depth`` plies from ``board``, by python-chess."""
    if depth == 1:
        return board.legal_moves.count()
    n = 0
    for m in board.legal_moves:
        board.push(m)
        n += chess_perft(board, depth - 1)
        board.pop()
    return n
