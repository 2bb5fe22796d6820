"""The PGN ``Termination`` tag holds the standard's values (normal, time forfeit, adjudication,
rules infraction, abandoned, unterminated) and the ending in words is the movetext's last
comment: the outcome's words, the ending the replayed game (with the resignation, agreed draw
or flag fall its journal records) reaches, not the words of the journal's result record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board_driver.journal import load_record
from board_driver.pgn import outcome_of, pgn_of, replay
from engine.contract import Termination


def journal(tmp_path: Path, variant: str, *records: dict, fen: str | None = None) -> Path:
    header = {"type": "game", "id": "g1", "variant": variant, "date": "2026-11-28"}
    if fen:
        header["start_fen"] = fen
    p = tmp_path / "g1.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in (header, *records)))
    return p


def pushes(*actions: str) -> list[dict]:
    return [{"type": "push", "ply": i, "action": a} for i, a in enumerate(actions, 1)]


def tag(pgn: str) -> str:
    (line,) = [x for x in pgn.splitlines() if x.startswith("[Termination ")]
    return line[len('[Termination "'):-2]


def last_comment(pgn: str) -> str | None:
    """The comment just before the result, or None."""
    body = " ".join(pgn.split("\n\n", 1)[1].split())
    if not body.rsplit(" ", 1)[0].endswith("}"):
        return None
    return body[body.rindex("{") + 1:body.rindex("}")]


FOOLS_MATE = pushes("f2f3", "e7e5", "g2g4", "d8h4")

CASES = {
    # name: (variant, records, start FEN, the ending in words, the outcome's termination)
    "checkmate, whatever the result record calls it": (
        "orthodox", [*FOOLS_MATE, {"type": "result", "result": "0-1", "reason": "mate"}], None,
        "checkmate", Termination.CHECKMATE),
    "Tomorrow's Chess stalemate": (
        "tomorrow-1", [*pushes("c5c7"), {"type": "result", "result": "3/5-2/5", "reason": "stalemate"}],
        "k11/12/1K10/2Q9/12/12/12/12 w - - 0 1", "stalemate", Termination.STALEMATE),
    "resignation": (
        "orthodox", [*pushes("e2e4"), {"type": "resign", "color": "black"},
                     {"type": "result", "result": "1-0", "reason": "resignation"}], None,
        "resignation", Termination.RESIGNATION),
    "agreed draw": (
        "orthodox", [*pushes("e2e4"), {"type": "draw"},
                     {"type": "result", "result": "1/2-1/2", "reason": "agreement"}], None,
        "agreement", Termination.AGREEMENT),
    "flag fall, the other side cannot win": (
        "orthodox", [{"type": "flag", "color": "white", "draw": True},
                     {"type": "result", "result": "1/2-1/2", "reason": "time forfeit"}],
        "4k3/8/8/8/8/8/8/4K2R w - - 0 1", "time forfeit", Termination.TIME_FORFEIT),
    "Chego: both players passed": (
        "chego", [*pushes("N@e4", "pass", "pass"),
                  {"type": "result", "result": "1-0", "reason": "both players passed: 8-0 points"}], None,
        "both players passed: 8-0 points", Termination.TERRITORY),
}


@pytest.mark.parametrize("name", CASES)
def test_the_termination_tag_is_the_replayed_outcome_s(tmp_path, name):
    variant, records, fen, want, termination = CASES[name]
    rec = load_record(journal(tmp_path, variant, *records, fen=fen))
    pgn = pgn_of(rec)
    assert tag(pgn) == ("time forfeit" if termination is Termination.TIME_FORFEIT else "normal")
    assert last_comment(pgn) == want
    out = outcome_of(rec, replay(rec)[1])
    assert out is not None and out.termination is termination and out.reason == want


def test_a_takeback_after_a_resignation_leaves_the_game_unterminated(tmp_path):
    rec = load_record(journal(tmp_path, "orthodox", *pushes("e2e4"), {"type": "resign", "color": "white"},
                              {"type": "result", "result": "0-1", "reason": "resignation"},
                              {"type": "reopen"}, {"type": "push", "ply": 2, "action": "e7e5"}))
    assert tag(pgn_of(rec)) == "unterminated" and last_comment(pgn_of(rec)) is None
    assert outcome_of(rec, replay(rec)[1]) is None


@pytest.mark.parametrize("result,words,want", [
    ("1/2-1/2", "adjudicated: still going after 1 actions", "adjudication"),
    ("1-0", "black played illegal action 'e2e4': no piece of black's on e2", "rules infraction"),
    ("*", "abandoned", "abandoned"),
])
def test_an_ending_the_replay_cannot_reach_keeps_the_words_of_its_result_record(tmp_path, result, words, want):
    # a match adjudicates a game still going or forfeits a side; a game left unfinished is
    # abandoned: only the result record knows
    rec = load_record(journal(tmp_path, "orthodox", *pushes("e2e4"),
                              {"type": "result", "result": result, "reason": words}))
    pgn = pgn_of(rec)
    assert tag(pgn) == want and last_comment(pgn) == words
