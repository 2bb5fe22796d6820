"""The built-in search: legal answers in every family, within the time given, and the moves a
player would expect (mates, free material, Chego territory, whole Cost Progressive turns)."""

from __future__ import annotations

import random

import chess
import pytest

from board_driver.config import load_variant
from engine.errors import IllegalMoveError
from engine.game import new_game
from engine.search import (COST_FIRST_SHARE, COST_LEVEL2_ROOT_WIDTH, COST_ROOT_WIDTH, COST_WIDER, INF, Searcher,
                           betza_value, random_turn)


class TickClock:
    """Virtual time: every reading advances it, so a search that reads the clock must stop."""

    def __init__(self, step: float = 0.001):
        self.t = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.t += self.step
        self.reads += 1
        return self.t


def _choose(game, seconds=0.05, depth=None, step=0.0005):
    return Searcher().choose(game, clock=TickClock(step), seconds=seconds, depth=depth)


FAMILY_VARIANTS = ["orthodox", "tomorrow-1", "tomorrow-4", "courier", "csipgs", "csipgs-dutch", "chego",
                   "chego-holes", "cost-progressive", "cost-progressive-fibonacci"]


@pytest.mark.parametrize("name", FAMILY_VARIANTS)
def test_answers_are_legal_and_leave_the_game_as_found(name):
    game = new_game(load_variant(name))
    rng = random.Random(7)
    for _ in range(6):                       # a few random turns in, to leave the start
        if game.outcome() is not None:
            break
        for a in random_turn(game, rng):
            game.push(a)
    if game.outcome() is not None:
        pytest.skip("the random opening ended the game")
    before = (game.fen(), [a.text for a in game.history])
    r = _choose(game)
    assert (game.fen(), [a.text for a in game.history]) == before
    us = game.turn
    assert r.actions
    for a in r.actions:
        assert game.turn == us and game.outcome() is None
        assert a in game.legal_actions() or a.kind == "design", a.text
        game.push(game.parse(a.text))
    assert game.turn != us or game.outcome() is not None, "the turn was left unfinished"


def test_stops_when_the_time_is_up():
    game = new_game(load_variant("tomorrow-1"))
    clock = TickClock(0.01)
    r = Searcher().choose(game, clock=clock, seconds=0.2)
    assert r.seconds <= 0.2
    assert r.depth >= 1


def test_depth_levels_cap_the_search():
    game = new_game(load_variant("orthodox"))
    r1 = Searcher().choose(game, clock=TickClock(1e-7), seconds=100, depth=1)
    r3 = Searcher().choose(game, clock=TickClock(1e-7), seconds=100, depth=3)
    assert r1.depth == 1 and r3.depth == 3
    assert r3.nodes > r1.nodes


def _best(fen, depth=3, variant="orthodox"):
    game = new_game(load_variant(variant), fen)
    return Searcher().choose(game, clock=TickClock(1e-7), seconds=100, depth=depth).actions[0].text


def test_finds_mate_in_one_checked_by_python_chess():
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
    move = _best(fen, depth=2)
    board = chess.Board(fen)
    board.push_uci(move)
    assert board.is_checkmate()


def _mates_in_one(board: chess.Board) -> bool:
    for m in board.legal_moves:
        board.push(m)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False


def test_finds_mate_in_two_checked_by_python_chess():
    fen = "r1b2k1r/ppp1bppp/8/1B1Q4/5q2/2P5/PPP2PPP/R3R1K1 w - - 1 1"   # Qd8+ Bxd8 Re8#
    board = chess.Board(fen)
    board.push_uci(_best(fen, depth=3))
    assert board.legal_moves.count()
    for reply in list(board.legal_moves):       # every defence loses to a mate in one
        board.push(reply)
        assert _mates_in_one(board), reply
        board.pop()


def test_takes_a_hanging_queen_and_not_a_defended_pawn():
    # the black queen on d4 is free; the pawn on e5 is defended
    assert _best("4k3/8/8/4p3/3q4/8/3R4/4K3 w - - 0 1", depth=2) == "d2d4"
    assert _best("4k3/3p4/4p3/8/8/8/8/4KQ2 w - - 0 1", depth=3) != "f1f7"


def test_values_any_betza_piece():
    v = load_variant("tomorrow-4")
    values = {p.name: betza_value(v, p) for p in v.pieces}
    assert values["pawn"] == 100
    assert values["knight"] < values["rook"] < values["queen"]
    assert values["griffin"] > values["rook"]             # no csipgs price: from its mobility
    v1 = load_variant("tomorrow-1")
    giraffe = next(p for p in v1.pieces if p.name == "giraffe")
    assert 150 < betza_value(v1, giraffe) < 500


def test_chego_takes_territory():
    game = new_game(load_variant("chego"))
    r = _choose(game, seconds=0.3, depth=1)
    a = r.actions[0]
    assert a.kind == "drop"
    game.push(a)
    w, b = game.points()
    assert w > b                      # the drop controls squares


def test_cost_progressive_plays_a_whole_turn_that_mates():
    # White's eighth turn: 8 points. The knight (3) clears the a-file, then Ra8 (5) mates:
    # neither move mates alone, and the rook may move only once
    game = new_game(load_variant("cost-progressive"), "6k1/5ppp/8/8/8/8/N7/R5K1 w - - 0 8")
    assert game.points_left == 8
    r = _choose(game, seconds=5.0, depth=1, step=1e-6)
    for a in r.actions:
        game.push(a)
    assert [a.piece for a in r.actions] == ["n", "r"], [a.text for a in r.actions]
    assert r.actions[-1].text == "a1a8"
    assert game.outcome() is not None and game.outcome().reason == "checkmate"


def _turn(game, texts):
    for t in texts:
        game.push(game.parse(t))


def _mated_after(game, texts) -> bool:
    _turn(game, texts)
    o = game.outcome()
    for _ in texts:
        game.pop()
    return o is not None and o.reason == "checkmate"


# Black's tenth turn, 10 points (a position from a game between the levels)
CP_MID = "r1bq1k2/1p1p4/3P1p1r/p1PB3p/P1P2B1P/5N2/8/1R1QK2R b K - 0 10"


def test_cost_progressive_two_turns_deep_sees_the_opponents_mating_turn():
    # Black's f5 and Qe8 leave White the mating turn Ne5, Bxh6: neither move checks alone, so
    # a search of Black's own turn and White's captures and checks does not see it coming.
    fen = CP_MID
    game = new_game(load_variant("cost-progressive"), fen)
    _turn(game, ["f6f5", "d8e8"])
    assert game.turn == 0 and _mated_after(game, ["f3e5", "f4h6"])       # the rules agree
    game = new_game(load_variant("cost-progressive"), fen)
    r = _choose(game, seconds=100, depth=2, step=1e-6)
    _turn(game, [a.text for a in r.actions])
    assert game.turn == 0 and game.outcome() is None
    assert not _mated_after(game, ["f3e5", "f4h6"])
    # and White's best turn, searched one turn deep (which finds the mate above), is no mate
    reply = _choose(game, seconds=100, depth=1, step=1e-6)
    assert not _mated_after(game, [a.text for a in reply.actions]), [a.text for a in r.actions]


def test_cost_progressive_only_move_out_of_check_is_not_the_whole_search():
    # White is in check (Bg3) and Bf2 is the only move out of it; the turn (8 points) goes on
    # after it. Searched one turn deep, the rest of the turn let Black mate with Ng4, exf3,
    # Bf2 (the game this position comes from); two turns deep it must not.
    fen = "rn1qk2r/B5pp/P1p2n2/8/2N1p1PP/2P2bb1/4P3/R2QKB1R w KQkq - 0 8"
    game = new_game(load_variant("cost-progressive"), fen)
    assert [a.text for a in game.legal_actions()] == ["a7f2"]
    r = _choose(game, seconds=100, depth=2, step=1e-6)
    assert r.actions[0].text == "a7f2" and r.depth == 2
    _turn(game, [a.text for a in r.actions])
    try:
        mated = _mated_after(game, ["f6g4", "e4f3", "g3f2"])
    except IllegalMoveError:
        mated = False
    assert not mated, [a.text for a in r.actions]


def test_cost_progressive_reply_beam_keeps_the_check_after_a_capture():
    # Black's fourteenth turn (a position from a game between levels 3 and 2). The turn
    # Kg8, Rf6, c2, d4, Ne3 looks good three turns deep unless White's reply Qxf6 is followed
    # by the check Rg7, which mates: the reply's beam must keep the check among the captures.
    fen = "3q4/5k1R/p1r2PN1/P2p1Q2/6n1/2p5/8/4KB2 b - - 1 14"
    game = new_game(load_variant("cost-progressive"), fen)
    _turn(game, ["f7g8", "c6f6", "c3c2", "d5d4", "g4e3"])
    assert _mated_after(game, ["f5f6", "h7g7"])                         # the rules agree
    game = new_game(load_variant("cost-progressive"), fen)
    r = _choose(game, seconds=100, depth=3, step=1e-6)
    _turn(game, [a.text for a in r.actions])
    try:
        mated = _mated_after(game, ["f5f6", "h7g7"])
    except IllegalMoveError:
        mated = False
    assert not mated, [a.text for a in r.actions]


def test_cost_progressive_top_level_keeps_the_two_turn_answer_when_its_wider_search_runs_out():
    # The top level searches two turns again with wider beams; when that search runs out of
    # time before any other first action beats the last answer's, the turn played is the
    # two-turn search's, whole and legal.
    fen = CP_MID
    clock = TickClock(1.0)
    two = Searcher().choose(new_game(load_variant("cost-progressive"), fen), clock=clock, seconds=1e9, depth=2)
    reads = clock.reads
    # the first search of the turn ends at 0.9 x COST_FIRST_SHARE of the time: half as long again as
    # two turns took, not enough for the wider search (two to four times as many nodes)
    seconds = 1.5 * reads / (0.9 * COST_FIRST_SHARE)
    game = new_game(load_variant("cost-progressive"), fen)
    top = Searcher().choose(game, clock=TickClock(1.0), seconds=seconds)
    assert [a.text for a in top.actions] == [a.text for a in two.actions]
    # the wider search ran, and found no better first action in its time
    assert top.depth == 2 and top.nodes > 1.3 * two.nodes
    _turn(game, [a.text for a in top.actions])
    assert game.turn == 0


def test_cost_progressive_levels_search_two_turns_wider_before_a_third():
    # A third turn adds nothing measurable over two in Cost Progressive at 1 s, so above
    # level 3 the time after two turns goes first to the two searched wider, COST_WIDER
    # times. Levels 1 to 3 deepen one turn at a time, and no level goes deeper than its
    # number of turns.
    plan = Searcher._plan
    assert plan("cost-progressive", 1) == [(1, 0)]
    assert plan("cost-progressive", 2) == [(1, 0), (2, 0)]
    assert plan("cost-progressive", 3) == [(1, 0), (2, 0), (3, 0)]
    assert plan("cost-progressive", 4) == [(1, 0), (2, 0)] + [(2, w) for w in range(1, COST_WIDER + 1)] + [(3, 0), (4, 0)]
    top = plan("cost-progressive", None)
    assert top[:2 + COST_WIDER + 1] == [(1, 0), (2, 0)] + [(2, w) for w in range(1, COST_WIDER + 1)] + [(3, 0)]
    assert [d for d, _ in top[2 + COST_WIDER:]] == list(range(3, 65))
    # the other families deepen one turn at a time
    assert plan("chess", 3) == [(1, 0), (2, 0), (3, 0)]


def test_cost_progressive_level_2_weighs_the_reply_to_fewer_first_actions(monkeypatch):
    # Level 2, the weakest level that looks at the opponent's reply, looks at it after its
    # COST_LEVEL2_ROOT_WIDTH best first actions of one turn deep; level 3 (and the levels
    # above it) after COST_ROOT_WIDTH (the others rank below every one searched).
    weighed: list = []
    real = Searcher._root

    def root(self, moves, depth, prev_scores):
        out = real(self, moves, depth, prev_scores)
        if depth == 2 and self.widen == 0:
            weighed.append(sum(s > -INF // 2 for s in out[2].values()))
        return out

    monkeypatch.setattr(Searcher, "_root", root)
    game = new_game(load_variant("cost-progressive"), CP_MID)
    assert len(game.legal_actions()) > COST_ROOT_WIDTH
    for depth, width in ((2, COST_LEVEL2_ROOT_WIDTH), (3, COST_ROOT_WIDTH)):
        weighed.clear()
        Searcher().choose(new_game(load_variant("cost-progressive"), CP_MID), clock=TickClock(1e-6),
                          seconds=100, depth=depth)
        assert weighed and weighed[0] == width, (depth, weighed)
    assert COST_LEVEL2_ROOT_WIDTH < COST_ROOT_WIDTH


class _Stale(dict):
    """A table holding, for every position not searched yet, a narrow search's bogus result."""

    def get(self, key, default=None):
        return super().get(key, (99, 12345, 0, 0, None))     # depth 99, exact, width 0, no move


def test_cost_progressive_wider_search_does_not_take_a_narrower_searchs_results(monkeypatch):
    # The wider searches keep the table of the narrower ones for the order of moves: what a
    # narrower search found must not stand for a wider one's result.
    fen = CP_MID
    monkeypatch.setattr(Searcher, "_plan", staticmethod(lambda family, max_depth: [(2, 1)]))
    clean = Searcher().choose(new_game(load_variant("cost-progressive"), fen), clock=TickClock(1.0), seconds=1e9)
    s = Searcher()
    s.tt = _Stale()
    stale = s.choose(new_game(load_variant("cost-progressive"), fen), clock=TickClock(1.0), seconds=1e9)
    assert abs(clean.score) < 5000
    assert (stale.score, [a.text for a in stale.actions]) == (clean.score, [a.text for a in clean.actions])


def test_csipgs_buys_and_transfers():
    # bare royals and 9 zorkmids: buying is the action that gains material
    v = load_variant("csipgs")
    game = new_game(v, "4k3/8/8/8/8/8/8/4K3 w - - 0 5")
    game.state.treasury = [game.state.treasury[0] + 8, game.state.treasury[1]]
    r = _choose(game, seconds=0.5, depth=2, step=1e-5)
    assert r.actions[0].kind in ("buy", "move")
    kinds = {a.kind for a in r.actions}
    assert "buy" in kinds


# -- null-move pruning and late-move reductions ---------------------------------------------------------
@pytest.mark.slow
def test_pruning_keeps_the_answers_legal_and_the_game_as_found():
    import engine.search as S
    rng = random.Random(11)
    for name in ("orthodox", "tomorrow-3", "courier"):
        game = new_game(load_variant(name))
        for _ in range(6):                   # a few plies in, each position searched deep enough to prune
            fen = game.fen()
            r = Searcher().choose(game, clock=TickClock(1e-6), seconds=100, depth=4)
            assert game.fen() == fen
            legal = {a.text for a in game.legal_actions()}
            assert r.actions[0].text in legal
            game.push(rng.choice(game.legal_actions()))
            if game.outcome() is not None:
                break
        assert S.PRUNING


def test_pruning_finds_the_same_mates_and_searches_fewer_nodes():
    import engine.search as S
    fen = "r1b2k1r/ppp1bppp/8/1B1Q4/5q2/2P5/PPP2PPP/R3R1K1 w - - 1 1"   # Qd8+ Bxd8 Re8#
    assert _best(fen, depth=4) == "d5d8"
    mate1 = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
    assert _best(mate1, depth=4) == "f3f7"
    mid = "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10"
    nodes = {}
    try:
        for pruning in (False, True):
            S.PRUNING = pruning
            nodes[pruning] = _choose(new_game(load_variant("orthodox"), mid), seconds=1000, depth=4,
                                     step=1e-7).nodes
    finally:
        S.PRUNING = True
    assert nodes[True] * 3 < nodes[False] * 2, nodes


def test_no_null_move_with_pawns_alone():
    # zugzwang: with the royal and pawns only, passing would be better than any move, so the
    # null move is not tried; a knight besides is enough for it
    from engine.search import _ChessBackend, _PieceTables, Zobrist
    v = load_variant("orthodox")
    for fen, ok in (("3k4/8/3PK3/8/8/8/8/8 w - - 0 1", False), ("3k4/8/3PK3/8/8/8/8/6N1 w - - 0 1", True),
                    ("3k4/8/3PK3/8/8/8/8/6n1 w - - 0 1", False)):
        game = new_game(v, fen)
        b = _ChessBackend(game, Zobrist(64), _PieceTables(v))
        assert b.null_ok() is ok, fen
        key = b.key
        b.push_null()
        assert b.side() == 1 and b.key != key
        b.pop()
        assert b.key == key and game.fen() == fen
