"""Journals written before the records were typed (tests/board_driver/data/journals, made by
make_journals.py at fa9baf1) still load, replay and resume as they did, and every record
reads back into its dataclass and writes out again byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import chess
import pytest

from board_driver.host import lifecycle
from board_driver.journal import GameStore, Journal, load_any, load_record, read_records
from board_driver.records import (
    TYPES,
    BoardRead,
    ClockChange,
    Event,
    GameFold,
    Header,
    Hint,
    Pop,
    Push,
    RecordError,
    Result,
    encode,
    fold,
    read_record,
)
from board_driver.settings import load_profile, load_settings

DATA = Path(__file__).parent / "data" / "journals"
EXPECTED = json.loads((DATA / "expected.json").read_text())
WHOLE = sorted(p.stem for p in DATA.glob("*.jsonl") if not p.stem.startswith("damaged"))

# the actions played to make each journal (make_journals.py), and how each game ended
PLAYED = {
    "takeback-hint-resign": (["e2e4", "e7e5", "d2d4"], ("1-0", "resignation")),
    "draw": (["e2e4", "e7e5"], ("1/2-1/2", "agreement")),
    "clock": (["e2e4", "e7e5", "g1f3", "g8f6"], (None, None)),
    "flag": (["e2e4"], ("1-0", "time forfeit")),
    "csipgs-buy-drop": (["e1d1", "buy:N", "e8d8", "end", "d1e1", "buy:B", "d8e8", "end", "N@d2", "end", "e8d8"],
                        (None, None)),
    "cost-progressive": (["e2e4", "e7e5", "d2d4", "c2c4", "d7d6", "end", "g1f3"], (None, None)),
    "abandoned-resumed": (["e2e4", "e7e5", "g1f3"], (None, None)),
    "remote": (["e2e4", "e7e6"], ("1/2-1/2", "agreement")),
}
ORTHODOX = {"takeback-hint-resign", "draw", "clock", "flag", "abandoned-resumed", "remote", "match"}
# both clocks (ms) as each clocked game left them: the command line's last word on it, or the records
CLOCKS = {"clock": ((595_700, 51_700), (2, 2)), "flag": ((56_700, 0), (1, 0)),
          "remote": ((299_000, 294_000), (1, 1))}


def lines_of(name: str) -> list[bytes]:
    return [x for x in (DATA / f"{name}.jsonl").read_bytes().split(b"\n") if x]


def chess_fen(moves: list[str]) -> str:
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    return board.fen()


def resumed(tmp_path: Path, name: str):
    store = GameStore(tmp_path / "data")
    store.games.mkdir(parents=True)
    shutil.copy(DATA / f"{name}.jsonl", store.path("g"))
    return lifecycle.resume(store, "g", profile=load_profile("sim"), settings=load_settings())


@pytest.mark.parametrize("name", WHOLE)
def test_every_record_reads_into_its_dataclass_and_writes_the_same_bytes(name):
    for raw in lines_of(name):
        rec = read_record(raw)
        assert type(rec) is TYPES[json.loads(raw)["type"]]
        assert encode(rec) == raw + b"\n"
        assert read_record(encode(rec).rstrip(b"\n")) == rec


def test_the_fixtures_hold_every_record_type():
    seen = {json.loads(raw)["type"] for name in WHOLE for raw in lines_of(name)}
    assert seen == set(TYPES)


@pytest.mark.parametrize("name", sorted(PLAYED))
def test_a_journal_loads_to_the_actions_played_and_the_end_it_had(name):
    moves, (result, reason) = PLAYED[name]
    rec = load_record(DATA / f"{name}.jsonl")
    assert rec.actions == moves
    assert (rec.result, rec.reason) == (result, reason)
    assert rec.damage is None


@pytest.mark.parametrize("name", sorted(PLAYED))
def test_a_journal_resumes_to_the_position_the_game_reached(tmp_path, name):
    moves, (result, reason) = PLAYED[name]
    s = resumed(tmp_path, name)
    try:
        assert [a.text for a in s.game.history] == moves
        fen = chess_fen(moves) if name in ORTHODOX else EXPECTED[name]["fen"]
        assert s.game.fen() == fen
        out = s.outcome()
        assert ((out.result, out.reason) if out is not None else (None, None)) == (result, reason)
        occs = [json.loads(x)["occ"] for x in lines_of(name) if b'"occ"' in x]
        assert s.occupancy == (int(occs[-1], 16) if occs else s.game.occupancy())   # as the board was last seen
        if name in CLOCKS:
            assert s.clock is not None
            assert (s.clock.state.remaining, s.clock.state.moves) == CLOCKS[name]
        else:
            assert s.clock is None
    finally:
        s.close()


def test_the_clocks_of_every_action_and_the_takeback_restore_read_back():
    rec = load_record(DATA / "clock.jsonl")
    assert rec.clocks[-1] == [595_700, 51_700]      # as the command line said at the end
    assert EXPECTED["clock"]["clocks"]["white"] == 595_700 and EXPECTED["clock"]["clocks"]["black"] == 51_700
    f = fold([read_record(x) for x in lines_of("clock")], clock=(60_000, 60_000))
    assert f.clock is not None and f.clock.remaining == (595_700, 51_700) and f.clock.moves == (2, 2)
    assert len(f.clock.stack) == 4                   # one state before each action on the board


def test_an_engine_match_replays_to_what_python_chess_says(tmp_path):
    recs = [read_record(x) for x in lines_of("match")]
    moves = [r.action for r in recs if isinstance(r, Push)]
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    assert board.is_fifty_moves()
    rec = load_record(DATA / "match.jsonl")
    assert rec.actions == moves and (rec.result, rec.reason) == ("1/2-1/2", "fifty-move rule")
    s = resumed(tmp_path, "match")
    try:
        assert s.game.fen() == board.fen()
        last = recs[-1]
        assert isinstance(last, Result) and last.clk is not None and s.clock is not None
        assert s.clock.state.remaining == last.clk
    finally:
        s.close()


def test_a_torn_last_line_is_skipped_and_the_game_before_it_stands(tmp_path):
    raw = (DATA / "damaged-torn.jsonl").read_bytes()
    assert not raw.endswith(b"\n")
    with pytest.raises(RecordError, match="not a JSON record"):
        read_record(raw.rsplit(b"\n", 1)[1])
    rec = load_record(DATA / "damaged-torn.jsonl")
    assert rec.damage is None
    assert rec.actions == ["e2e4", "e7e5", "d2d4"]
    assert (rec.result, rec.reason) == ("1-0", "resignation")    # the resignation is whole, its result torn
    s = resumed(tmp_path, "damaged-torn")
    try:
        assert s.game.fen() == chess_fen(["e2e4", "e7e5", "d2d4"])
        assert s.outcome() is not None and s.outcome().result == "1-0"
    finally:
        s.close()


def test_a_garbage_line_in_the_middle_is_damage_naming_its_line():
    lines = (DATA / "damaged-garbage.jsonl").read_bytes().split(b"\n")
    bad = next(n for n, x in enumerate(lines, 1) if x.startswith(b"\x13"))
    with pytest.raises(RecordError, match="not a JSON record"):
        read_record(lines[bad - 1])
    rec = load_any(DATA / "damaged-garbage.jsonl")
    assert rec.damage is not None and f"line {bad}: not a JSON record" in rec.damage
    before = [json.loads(x)["action"] for x in lines[:bad - 1] if b'"push"' in x]
    assert rec.actions == before and rec.status == "damaged"


def test_a_line_that_is_no_record_says_what_is_wrong():
    with pytest.raises(RecordError, match="unknown record type 'castle'"):
        read_record(b'{"type":"castle","side":"king"}')
    with pytest.raises(RecordError, match="without its 'action'"):
        read_record(b'{"type":"push","ply":1}')
    with pytest.raises(RecordError, match="a resignation record whose 'color' is 'green', not white or black"):
        read_record({"type": "resign", "color": "green"})
    with pytest.raises(RecordError, match="'sq' is 'zz9', not a square name"):
        read_record({"type": "event", "t": 5, "sq": "zz9", "placed": True, "occ": "ff"})
    with pytest.raises(RecordError, match="not a journal record"):
        read_record(b"[1, 2]")


def test_an_unknown_record_type_in_a_journal_is_damage_at_its_line(tmp_path):
    p = tmp_path / "g.jsonl"
    good = lines_of("draw")
    p.write_bytes(b"\n".join(good[:5] + [b'{"type":"castle"}'] + good[5:]) + b"\n")
    rec = load_any(p)
    assert rec.damage is not None and "line 6: an unknown record type 'castle'" in rec.damage
    assert rec.actions == ["e2e4"]


def test_the_journal_writes_a_dataclass_as_the_dict_it_stands_for(tmp_path):
    recs = [Header(id="g", variant="orthodox", start_fen="8/8/8/8/8/8/8/8 w - - 0 1", date="2026-01-01T00:00:00+00:00",
                   players={"white": "A", "black": "B"}, extra={"clock": {"tc": "60", "mode": "auto"}}),
            BoardRead("ff"), Event(1200, "e2", False, "ef"),
            Push(1, "e2e4", w=2, clk=(59_000, 60_000), clk0=(58_000, 60_000), n=(1, 0)),
            Pop(0, "e2e4", "takeback", clk=(58_000, 60_000)),
            ClockChange("adjust", (1, 2), (0, 0), color="white"),
            Hint(0, "white", ("e2e4",), "builtin:2", 30, None),
            Result("*", "abandoned")]
    dicts = [r.to_dict() for r in recs]
    j1 = Journal(tmp_path / "a.jsonl")
    j1.write_all(recs, sync=True)
    j1.close()
    j2 = Journal(tmp_path / "b.jsonl")
    j2.write_all(dicts, sync=True)
    j2.close()
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert read_records(tmp_path / "a.jsonl") == dicts
    assert list(dicts[3]) == ["type", "ply", "action", "w", "clk", "clk0", "n"]
    assert list(dicts[5]) == ["type", "op", "color", "clk", "n"]
    assert dicts[6]["mate"] is None and list(dicts[4]) == ["type", "ply", "action", "why", "clk"]


def test_the_fold_takes_up_from_a_count():
    """The club's store keeps counts, not records: a fold taken up from them goes on right."""
    f = GameFold(offset=5, result="1-0", reason="resignation")
    fold([Pop(4, "e1e2", "takeback"), Push(5, "a2a3"), Pop(5, "a2a3", "takeback"), Pop(4, "h7h6", "takeback")],
         into=f)
    assert f.plies == 3 and f.result is None and f.actions == []


@pytest.mark.parametrize("name", WHOLE + ["damaged-torn"])
def test_the_club_store_and_the_publisher_see_the_game_the_journal_lists(tmp_path, name):
    """One fold: the recorder's summary and the state a board publishes say what `games list` says."""
    from board_driver.club import publisher
    from board_driver.club.store import RecorderStore

    rec = load_record(DATA / f"{name}.jsonl")
    lines = [x for x in lines_of(name) if x.endswith(b"}")]        # the whole ones
    st = RecorderStore(tmp_path / "club.sqlite")
    try:
        st.add_records([("b1", "g", i, x.decode(), 1000.0 + i) for i, x in enumerate(lines)], now=5000.0)
        (g,) = st.games()
    finally:
        st.close()
    pushes = [i for i, x in enumerate(lines) if b'"type":"push"' in x]
    assert (g["actions"], g["result"], g["reason"]) == (len(rec.actions), rec.result, rec.reason)
    assert g["last_action"] == json.loads(lines[pushes[-1]])["action"]
    assert g["variant"] == rec.variant and g["players"] == json.loads(lines[0])["players"]

    pub = publisher.Publisher.__new__(publisher.Publisher)     # its fold only: no broker
    game = publisher._Game("g", DATA / f"{name}.jsonl", sent=len(lines))
    pub._fold(game)
    f = game.fold
    assert (f.actions, f.result, f.reason) == (rec.actions, rec.result, rec.reason)
    assert f.header is not None and f.header.variant == rec.variant and game.folded == len(lines)
