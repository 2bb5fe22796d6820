"""Every way a game ends, in every family: the outcome's termination and score, and the result
and reason texts derived from them (the texts the journal, the console and the page show)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path
from typing import Callable

import chess
import pytest

from board_driver.config import load_variant
from engine.contract import Game, Termination
from engine.csipgs import CsipgsGame
from engine.game import Adjudication, ArmyWithoutRoyal, Forfeit, Outcome, Territory, new_game

ROOT = Path(__file__).resolve().parents[2]
WHITE, BLACK = 0, 1


def play(name: str, fen: str | None = None, moves: str = "", **kw) -> Game:
    v = load_variant(name)
    g = CsipgsGame(v, fen, **kw) if v.family == "csipgs" else new_game(v, fen)
    for m in moves.split():
        g.push(m)
    return g


def resigned(color: int, how: Termination = Termination.RESIGNATION, draw: bool = False) -> Game:
    g = play("orthodox", None, "e2e4")
    g.resign(color, how, draw=draw)
    return g


def army(rank1: int, royal: bool = True) -> str:
    back = ["R", "N", "B", "BR", "royal-WF" if royal else "W", "B", "N", "R"]
    rank2 = 2 if rank1 == 1 else 7
    return ",".join([f"{d}@{f}{rank1}" for d, f in zip(back, "abcdefgh")]
                    + [f"fcFfmW@{f}{rank2}" for f in "abcdefgh"])


def armies(white_royal: bool, black_royal: bool) -> Game:
    g = play("csipgs-army")
    g.push(army(1, white_royal))
    g.push(army(8, black_royal))
    return g


def two_fold() -> Game:
    g = new_game(dataclasses.replace(load_variant("orthodox"), repetitions=2))
    for m in "g1f3 g8f6 f3g1 f6g8".split():
        g.push(m)
    return g


T = Termination
# name: (how the game is made, termination, result, reason, winner)
CASES: dict[str, tuple[Callable[[], Game], Termination, str, str, int | None]] = {
    # chess (orthodox, Tomorrow's Chess)
    "orthodox checkmate": (lambda: play("orthodox", None, "f2f3 e7e5 g2g4 d8h4"),
                           T.CHECKMATE, "0-1", "checkmate", BLACK),
    "orthodox stalemate": (lambda: play("orthodox", "k7/8/1Q6/8/8/8/8/7K b - - 0 1"),
                           T.STALEMATE, "1/2-1/2", "stalemate", None),
    "orthodox fifty moves": (lambda: play("orthodox", "k7/8/8/8/8/8/8/R6K w - - 99 80", "a1b1"),
                             T.FIFTY_MOVES, "1/2-1/2", "fifty-move rule", None),
    "orthodox threefold": (lambda: play("orthodox", None, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8"),
                           T.THREEFOLD, "1/2-1/2", "threefold repetition", None),
    "twofold repetition": (two_fold, T.REPETITION, "1/2-1/2", "repetition", None),
    "royal pieces captured": (lambda: play("orthodox", "k7/8/8/8/8/8/8/8 w - - 0 1"),
                              T.ROYALS_CAPTURED, "0-1", "royal pieces captured", BLACK),
    "tomorrow: White stalemates Black": (lambda: play("tomorrow-1", "k11/12/1Q10/12/12/12/12/11K b - - 0 1"),
                                         T.STALEMATE, "3/5-2/5", "stalemate", WHITE),
    "tomorrow: Black stalemates White": (lambda: play("tomorrow-3", "K11/12/1q10/12/12/12/12/11k w - - 0 1"),
                                         T.STALEMATE, "3/10-7/10", "stalemate", BLACK),
    "tomorrow checkmate": (lambda: play("tomorrow-1", "k11/12/K11/12/12/12/12/11R w - - 0 1", "l1l8"),
                           T.CHECKMATE, "1-0", "checkmate", WHITE),
    # every family: resignation, agreement, a flag fall
    "White resigns": (lambda: resigned(WHITE), T.RESIGNATION, "0-1", "resignation", BLACK),
    "Black resigns": (lambda: resigned(BLACK), T.RESIGNATION, "1-0", "resignation", WHITE),
    "draw agreed": (lambda: resigned(WHITE, T.AGREEMENT, draw=True), T.AGREEMENT, "1/2-1/2", "agreement", None),
    "White's flag falls": (lambda: resigned(WHITE, T.TIME_FORFEIT), T.TIME_FORFEIT, "0-1", "time forfeit", BLACK),
    "Black's flag falls, White cannot win": (lambda: resigned(BLACK, T.TIME_FORFEIT, draw=True),
                                             T.TIME_FORFEIT, "1/2-1/2", "time forfeit", None),
    "Chego resignation": (lambda: _resign(play("chego"), BLACK), T.RESIGNATION, "1-0", "resignation", WHITE),
    # Chego: both players passed, points counted
    "Chego: White has more points": (lambda: play("chego", "8/8/8/8/1n6/8/8/N3N3 w - - 2 30 n"),
                                     T.TERRITORY, "1-0", "both players passed: 5-4 points", WHITE),
    "Chego: Black has more points": (lambda: play("chego", "8/8/8/8/1n6/8/8/N3N3 w - - 2 30 PP"),
                                     T.TERRITORY, "0-1", "both players passed: 4-6 points", BLACK),
    "Chego: equal points": (lambda: play("chego", "8/8/8/8/1n6/8/8/N3N3 w - - 2 30"),
                            T.TERRITORY, "1/2-1/2", "both players passed: 4-4 points", None),
    "Chego: two passes after a drop": (lambda: play("chego", None, "N@e4 pass pass"),
                                       T.TERRITORY, "1-0", "both players passed: 8-0 points", WHITE),
    # csipgs
    "csipgs checkmate": (lambda: play("csipgs", "k7/8/8/8/8/8/1r6/r6K[N] w - - 0 1", treasury=(10, 0)),
                         T.CHECKMATE, "0-1", "checkmate", BLACK),
    "csipgs stalemate": (lambda: play("csipgs", "k7/8/8/8/8/8/5q2/7K w - - 0 1", treasury=(1, 0)),
                         T.STALEMATE, "1/2-1/2", "stalemate", None),
    "csipgs fifty moves": (lambda: play("csipgs", "4k3/8/8/8/8/8/8/4K3 w - - 99 60", "e1e2 end"),
                           T.FIFTY_MOVES, "1/2-1/2", "fifty-move rule", None),
    "csipgs resignation": (lambda: _resign(play("csipgs"), WHITE), T.RESIGNATION, "0-1", "resignation", BLACK),
    "army: White without a royal piece": (lambda: armies(False, True), T.NO_ROYAL_IN_ARMY, "0-1",
                                          "White's army has no royal piece", BLACK),
    "army: Black without a royal piece": (lambda: armies(True, False), T.NO_ROYAL_IN_ARMY, "1-0",
                                          "Black's army has no royal piece", WHITE),
    "army: neither has a royal piece": (lambda: armies(False, False), T.NO_ROYAL_IN_ARMY, "0-1",
                                        "no royal piece in either army (Black wins)", BLACK),
    # Cost Progressive
    "cost progressive checkmate": (lambda: play("cost-progressive", "7k/8/6P1/8/8/8/8/K7 w - - 0 1", "g6g7"),
                                   T.CHECKMATE, "1-0", "checkmate", WHITE),
    "cost progressive stalemate": (lambda: play("cost-progressive", "k7/8/8/8/8/8/8/K7 b - - 0 1"),
                                   T.STALEMATE, "1/2-1/2", "stalemate", None),
    "cost progressive tomorrow stalemate": (lambda: play("cost-progressive-tomorrow-1",
                                                         "k11/12/12/12/12/12/12/K11 b - - 0 1"),
                                            T.STALEMATE, "3/5-2/5", "stalemate", WHITE),
    "cost progressive fifty moves": (lambda: play("cost-progressive", "7k/8/8/8/8/8/8/KR6 w - - 98 20",
                                                  "a1a2 b1b2 h8g8"),
                                     T.FIFTY_MOVES, "1/2-1/2", "fifty-move rule", None),
    "cost progressive threefold": (lambda: play("cost-progressive", "7k/8/8/8/8/8/8/K7 w - - 0 2",
                                                "a1b1 h8g8 b1a1 g8h8 a1b1 h8g8 b1a1 g8h8"),
                                   T.THREEFOLD, "1/2-1/2", "threefold repetition", None),
}


def _resign(g: Game, color: int) -> Game:
    g.resign(color)
    return g


@pytest.mark.parametrize("name", CASES)
def test_every_ending_gives_the_texts_the_journal_and_the_page_show(name):
    make, termination, result, reason, winner = CASES[name]
    o = make().outcome()
    assert o is not None
    assert (o.termination, o.result, o.reason, o.winner) == (termination, result, reason, winner)


# orthodox positions: the same ending and result as python-chess
ORTHODOX = {
    "checkmate": ("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4"),
    "stalemate": ("k7/8/1Q6/8/8/8/8/7K b - - 0 1", ""),
    "fifty moves": ("k7/8/8/8/8/8/8/R6K w - - 99 80", "a1b1"),
    "threefold": (chess.STARTING_FEN, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8"),
    "back-rank mate": ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
    "stalemate by Black": ("8/8/8/8/8/5k2/5p2/5K2 w - - 0 1", ""),
}
PYTHON_CHESS = {chess.Termination.CHECKMATE: T.CHECKMATE, chess.Termination.STALEMATE: T.STALEMATE,
                chess.Termination.FIFTY_MOVES: T.FIFTY_MOVES,
                chess.Termination.THREEFOLD_REPETITION: T.THREEFOLD}


@pytest.mark.parametrize("name", ORTHODOX)
def test_orthodox_endings_agree_with_python_chess(name):
    fen, moves = ORTHODOX[name]
    board = chess.Board(fen)
    g = play("orthodox", fen)
    for m in moves.split():
        board.push_uci(m)
        g.push(m)
    ref = board.outcome(claim_draw=True)
    o = g.outcome()
    assert ref is not None and o is not None
    assert o.termination is PYTHON_CHESS[ref.termination]
    assert o.result == ref.result()
    assert o.winner == (None if ref.winner is None else WHITE if ref.winner else BLACK)


def test_the_score_of_a_tomorrow_stalemate_is_the_rules_text_s():
    # "If White stalemates Black, White receives 3/5 of the game point, and Black recieves 2/5"
    o = play("tomorrow-1", "k11/12/1Q10/12/12/12/12/11K b - - 0 1").outcome()
    assert o is not None and o.points() == (Fraction(3, 5), Fraction(2, 5))
    # "If Black stalemates White, however, Black recieves 7/10 of the game point"
    o = play("tomorrow-1", "K11/12/1q10/12/12/12/12/11k w - - 0 1").outcome()
    assert o is not None and o.points() == (Fraction(3, 10), Fraction(7, 10))


# -- the outcome is typed: the texts are derived, never read back -------------------------------
def test_the_texts_are_derived_from_the_termination_the_score_and_the_detail():
    o = Outcome.win(BLACK, T.CHECKMATE)
    assert (o.result, o.reason, o.winner, o.score) == ("0-1", "checkmate", BLACK, (0, 1))
    o = Outcome.draw(T.FIFTY_MOVES)
    assert (o.result, o.reason, o.winner) == ("1/2-1/2", "fifty-move rule", None)
    o = Outcome(T.STALEMATE, (Fraction(3, 10), Fraction(7, 10)))
    assert (o.result, o.reason, o.winner) == ("3/10-7/10", "stalemate", BLACK)
    o = Outcome.win(WHITE, T.TERRITORY, Territory(19, 17))
    assert (o.result, o.reason) == ("1-0", "both players passed: 19-17 points")
    assert Outcome.win(BLACK, T.NO_ROYAL_IN_ARMY, ArmyWithoutRoyal(True, True)).reason \
        == "no royal piece in either army (Black wins)"


def test_a_match_s_adjudication_and_forfeit_read_as_the_match_journal_writes_them():
    o = Outcome.draw(T.ADJUDICATED, Adjudication(1000))
    assert (o.result, o.reason) == ("1/2-1/2", "adjudicated: still going after 1000 actions")
    o = Outcome.win(WHITE, T.OTHER, Forfeit(BLACK, "an unfinished turn"))
    assert (o.result, o.reason, o.winner) == ("1-0", "black played an unfinished turn", WHITE)


def test_the_texts_cannot_be_set_and_nothing_reads_an_ending_back_from_them():
    # what an outcome holds: the termination, the score, the detail; the texts are read-only views
    assert [f.name for f in dataclasses.fields(Outcome)] == ["termination", "score", "detail"]
    assert all(getattr(Outcome, name).fset is None for name in ("result", "reason", "winner"))
    assert not hasattr(Termination, "of")
    engine_and_driver = [*ROOT.joinpath("engine").rglob("*.py"), *ROOT.joinpath("board_driver").rglob("*.py")]
    assert not [p for p in engine_and_driver if "Termination.of(" in p.read_text()]


def test_an_outcome_that_contradicts_itself_is_refused():
    with pytest.raises(ValueError, match="one game point"):
        Outcome(T.STALEMATE, (Fraction(3, 5), Fraction(3, 5)))
    with pytest.raises(ValueError, match="cannot carry"):
        Outcome.win(WHITE, T.CHECKMATE, Territory(5, 4))
