"""Every family's PGN as other programs read it: python-chess's PGN reader and Fairy-Stockfish
(pyffish) where they can express the variant, and at least the tags, the move numbers and
which side each action belongs to where they cannot (docs/board-driver.md, *PGN*)."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_driver.config import load_variant
from board_driver.journal import load_record
from board_driver.pgn import pgn_of
from engine.fsf import fsf_name, variants_ini
from engine.game import new_game

pyffish = pytest.importorskip("pyffish")


def journal(tmp_path: Path, variant: str, actions, players=None, result=None, fen=None) -> Path:
    header = {"type": "game", "id": "g1", "variant": variant, "date": "2026-11-28"}
    if players:
        header["players"] = players
    if fen:
        header["start_fen"] = fen
    recs = [header] + [{"type": "push", "ply": i, "action": a} for i, a in enumerate(actions, 1)]
    if result:
        recs.append({"type": "result", "result": result[0], "reason": result[1]})
    p = tmp_path / "g1.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def random_game(variant: str, plies: int, seed: int):
    """A game of random legal actions: its actions, the side that played each, its final FEN."""
    rnd = random.Random(seed)
    g = new_game(load_variant(variant))
    actions, sides = [], []
    while len(actions) < plies and g.outcome() is None:
        legal = list(g.legal_actions())
        moves = [a for a in legal if a.kind != "end"] or legal
        a = rnd.choice(legal if rnd.random() < 0.3 else moves)
        actions.append(a.text)
        sides.append(g.turn)
        g.push(a)
    return actions, sides, g


def export(tmp_path, variant, actions, **kw) -> str:
    return pgn_of(load_record(journal(tmp_path, variant, actions, **kw)))


# -- a reader of our own, by the PGN standard's grammar: move numbers say the side -------------
_TOKENS = re.compile(r"\{[^}]*\}|\d+\.\.\.|\d+\.|\S+")


def sides_by_numbers(pgn: str, several: bool = False) -> list[tuple[int, int, str]]:
    """(move number, side, token) for each move token, the side from the move number before it
    (``12.`` White, ``12...`` Black). One action a turn (``several`` False): the token after
    White's with no number of its own is Black's (``1. e4 e5``); several (Cost Progressive): a
    side's tokens run to the next move number."""
    body = pgn.split("\n\n", 1)[1]
    out: list[tuple[int, int, str]] = []
    number, side, run = 0, 1, 0
    for tok in _TOKENS.findall(body):
        if tok.startswith("{") or tok in ("1-0", "0-1", "1/2-1/2", "*"):
            continue
        m = re.fullmatch(r"(\d+)(\.+)", tok)
        if m:
            number, side, run = int(m.group(1)), 0 if m.group(2) == "." else 1, 0
            continue
        if not several and run == 1:
            assert side == 0, f"two tokens for Black after {number}...: {pgn}"
            side = 1
        out.append((number, side, tok))
        run += 1
    return out


class Tokens(chess.pgn.BaseVisitor):
    """python-chess's reading of the movetext where it cannot set up the variant: every move
    token it finds, with the side it attributes it to (the null move stands in for the move,
    so the sides alternate as they do for python-chess), the comments and the headers."""

    def begin_game(self):
        self.headers: dict[str, str] = {}
        self.moves: list[tuple[bool, str]] = []
        self.comments: list[str] = []
        self.errors: list[Exception] = []

    def visit_header(self, tagname, tagvalue):
        self.headers[tagname] = tagvalue

    def parse_san(self, board, san):
        self.moves.append((board.turn, san))
        return chess.Move.null()

    def visit_comment(self, comment):
        self.comments.append(comment)

    def handle_error(self, error):
        self.errors.append(error)

    def result(self):
        return self


def read_tokens(pgn: str) -> Tokens:
    return chess.pgn.read_game(io.StringIO(pgn), Visitor=Tokens)


# -- orthodox and the variants Fairy-Stockfish plays ------------------------------------------
def fsf_replay(variant: str, fen: str, tokens: list[str], ucis: list[str]) -> str:
    """Fairy-Stockfish replays the game: every token is its own SAN of the move played (each
    one legal where it is played), and the position it reaches."""
    assert len(tokens) == len(ucis)
    for i, m in enumerate(ucis):
        assert m in pyffish.legal_moves(variant, fen, ucis[:i]), (m, ucis[:i])
    assert pyffish.get_san_moves(variant, fen, ucis) == tokens
    return pyffish.get_fen(variant, fen, ucis)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_orthodox_game_replays_in_python_chess_and_fairy_stockfish_to_the_same_position(tmp_path, seed):
    actions, _, game = random_game("orthodox", 80, seed)
    pgn = export(tmp_path, "orthodox", actions)
    read = chess.pgn.read_game(io.StringIO(pgn))
    assert read is not None and not read.errors, read.errors if read else pgn
    assert "FEN" not in read.headers and "SetUp" not in read.headers
    assert read.headers["White"] == read.headers["Black"] == "?"
    board = read.end().board()
    assert [m.uci() for m in board.move_stack] == actions
    assert board.fen().split()[:3] == game.fen().split()[:3]
    tokens = [t for _, _, t in sides_by_numbers(pgn)]
    assert fsf_replay("chess", chess.STARTING_FEN, tokens, actions).split()[:3] == game.fen().split()[:3]


@pytest.mark.parametrize("variant", ["tomorrow-2", "tomorrow-3", "courier"])
def test_a_12x8_game_replays_in_fairy_stockfish_by_its_own_san(tmp_path, variant):
    pyffish.load_variant_config(variants_ini(load_variant(variant)))
    actions, sides, game = random_game(variant, 60, 7)
    pgn = export(tmp_path, variant, actions)
    read = sides_by_numbers(pgn)
    assert [s for _, s, _ in read] == sides
    v = load_variant(variant)
    final = fsf_replay(fsf_name(variant), v.start_fen, [t for _, _, t in read], actions)
    assert final.split()[:2] == game.fen().split()[:2]
    head = chess.pgn.read_headers(io.StringIO(pgn))
    assert head is not None and head["Variant"] == variant and "FEN" not in head


def test_a_game_from_a_set_position_carries_setup_and_fen(tmp_path):
    fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    pgn = export(tmp_path, "orthodox", ["a1a8"], fen=fen)
    read = chess.pgn.read_game(io.StringIO(pgn))
    assert read is not None and not read.errors
    assert read.headers["SetUp"] == "1" and read.headers["FEN"] == fen
    assert read.end().board().is_checkmate()


# -- Chego, csipgs, Cost Progressive ----------------------------------------------------------
def test_chego_drops_and_passes_sit_on_their_side_for_python_chess(tmp_path):
    rnd = random.Random(3)
    g = new_game(load_variant("chego"))
    actions, sides = [], []
    for i in range(12):
        drops = [a for a in g.legal_actions() if a.kind == "drop"]
        a = g.parse("pass") if i in (4, 9) else rnd.choice(drops)      # White passes, then Black
        actions.append(a.text)
        sides.append(g.turn)
        g.push(a)
    pgn = export(tmp_path, "chego", actions)
    assert "pass" not in pgn.split("\n\n")[1]
    t = read_tokens(pgn)
    assert t.headers["Variant"] == "chego" and "FEN" not in t.headers
    # one token per action, the pass the null move, each on its side
    assert [tok for _, tok in t.moves] == [("--" if a == "pass" else a) for a in actions]
    assert [0 if white else 1 for white, _ in t.moves] == sides


def test_csipgs_purchases_are_a_null_move_of_their_side_with_the_purchase_in_a_comment(tmp_path):
    # White buys a knight, Black moves his king: not a move of White's
    pgn = export(tmp_path, "csipgs", ["e1d2", "end", "e8e7", "end", "d2d3", "end", "e7e6", "end",
                                      "buy:N", "end", "e6e7", "end", "d3d2", "design:3=W"])
    body = " ".join(pgn.split("\n\n")[1].split())
    assert body == "1. Kd2 Ke7 2. Kd3 Ke6 3. -- {buy:N} 3... Ke7 4. Kd2 {design:3=W} *"
    t = read_tokens(pgn)
    assert t.moves == [(True, "Kd2"), (False, "Ke7"), (True, "Kd3"), (False, "Ke6"), (True, "--"), (False, "Ke7"),
                       (True, "Kd2")]
    assert t.comments == ["buy:N", "design:3=W"]


@pytest.mark.parametrize("seed", [4, 5])
def test_every_csipgs_turn_is_one_token_on_its_side(tmp_path, seed):
    actions, sides, _ = random_game("csipgs", 60, seed)
    turns = [s for i, s in enumerate(sides) if i == 0 or s != sides[i - 1]]
    pgn = export(tmp_path, "csipgs", actions)
    t = read_tokens(pgn)
    assert [0 if white else 1 for white, _ in t.moves] == turns
    assert [s for _, s, _ in sides_by_numbers(pgn)] == turns
    assert not any(c in ("end", "pass") for c in t.comments)


def test_a_cost_progressive_turn_of_several_moves_stays_its_side_s(tmp_path):
    actions, sides, game = random_game("cost-progressive", 40, 1)
    pgn = export(tmp_path, "cost-progressive", actions)
    board_actions = [(a, s) for a, s in zip(actions, sides) if a != "end"]
    read = sides_by_numbers(pgn, several=True)
    assert [s for _, s, _ in read] == [s for _, s in board_actions]
    assert all(re.search(rf"\b{n}\.\.\. ", pgn) for n, side, _ in read if side == 1)   # every Black turn numbered
    # python-chess names every token as a chess move of that side, to the same position
    board = chess.Board()
    for (_, side, tok), (uci, _) in zip(read, board_actions):
        board.turn = chess.WHITE if side == 0 else chess.BLACK
        board.ep_square = None
        move = board.parse_san(tok)
        assert move.uci() == uci
        board.push(move)
    assert board.board_fen() == game.fen().split()[0]


# -- tags ----------------------------------------------------------------------------------------
def test_players_are_question_marks_or_names_and_the_computer_its_engine_and_level(tmp_path):
    pgn = export(tmp_path, "orthodox", ["e2e4"], players={"white": "builtin:1", "black": "Black"})
    head = chess.pgn.read_headers(io.StringIO(pgn))
    assert head is not None and (head["White"], head["Black"]) == ("fairyboard builtin level 1", "?")
    pgn = export(tmp_path, "orthodox", ["e2e4"], players={"white": "Ada", "black": "fsf:5"})
    head = chess.pgn.read_headers(io.StringIO(pgn))
    assert head is not None and (head["White"], head["Black"]) == ("Ada", "Fairy-Stockfish level 5")


def test_chego_s_count_is_a_normal_ending_with_its_words_in_the_last_comment(tmp_path):
    pgn = export(tmp_path, "chego", ["N@e4", "pass", "pass"], result=("1-0", "both players passed: 8-0 points"))
    t = read_tokens(pgn)
    assert t.headers["Termination"] == "normal" and t.headers["Result"] == "1-0"
    assert t.moves == [(True, "N@e4"), (False, "--"), (True, "--")]
    assert t.comments[-1] == "both players passed: 8-0 points"
