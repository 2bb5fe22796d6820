"""Perft: count the leaf nodes of the legal-move tree, the standard move-generator check.

The last ply is counted in bulk (legal moves are counted, not made), as python-chess's
``board.legal_moves.count()`` does, so figures compare with it directly.
"""

from __future__ import annotations


def perft(pos, depth: int) -> int:
    """Leaf nodes at ``depth`` plies below a Position."""
    if depth <= 0:
        return 1
    if depth == 1:
        return pos.count_legal()
    n = 0
    push, pop = pos.push, pos.pop
    if depth == 2:
        count = pos.count_legal
        for m in pos.legal_moves():
            push(m)
            n += count()
            pop()
        return n
    for m in pos.legal_moves():
        push(m)
        n += perft(pos, depth - 1)
        pop()
    return n


def divide(pos, depth: int) -> list[tuple[int, int]]:
    """(move, leaf count) for every root move."""
    out = []
    for m in pos.legal_moves():
        pos.push(m)
        out.append((m, perft(pos, depth - 1)))
        pos.pop()
    return out


def game_perft(game, depth: int) -> int:
    """Perft over any family's Game (actions, not int moves); slower, fully general."""
    if depth <= 0:
        return 1
    actions = game.legal_actions()
    if depth == 1:
        return len(actions)
    n = 0
    for a in list(actions):
        game.push(a)
        n += game_perft(game, depth - 1)
        game.pop()
    return n


def game_divide(game, depth: int) -> list[tuple[str, int]]:
    out = []
    for a in list(game.legal_actions()):
        game.push(a)
        out.append((a.text, game_perft(game, depth - 1)))
        game.pop()
    return out
