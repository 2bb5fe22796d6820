"""Make the journals in this folder by playing games through the real command line.

Run from the repository root: ``python tests/board_driver/data/journals/make_journals.py``.
The journals were made once, at fa9baf1 (before the records became typed), and are kept as
the version of record: test_journal_fixtures.py reads them with today's code, which must
replay them as that version did and write every record back byte for byte. Running this again
with later code makes journals of that code; only do so to add a game, and say why.

``expected.json`` holds what the command line said at the end of each game (``--json``):
moves, position, result, clocks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "board_driver.cli"]


def run(data: Path, *args: str, stdin: str = "quit\n") -> subprocess.CompletedProcess:
    env = dict(os.environ, FAIRYBOARD_DATA=str(data))
    env.pop("XDG_DATA_HOME", None)
    r = subprocess.run(CLI + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"{args}: {r.stderr}")
    return r


def events(data: Path, name: str, script: list[dict], *args: str) -> dict:
    p = data / f"{name}.events"
    p.write_text("".join(json.dumps(x) + "\n" for x in script))
    return json.loads(run(data, "play", "--events", str(p), "--json", *args).stdout)


def mv(t: int, frm: str, to: str) -> list[dict]:
    return [{"t": t, "lift": frm}, {"t": t + 300, "place": to}]


def say(t: int, text: str) -> dict:
    return {"t": t, "input": text}


def main() -> None:
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()

        def keep(name: str, rep: dict) -> None:
            shutil.copy(data / "games" / f"{rep['game']}.jsonl", HERE / f"{name}.jsonl")
            out[name] = {k: rep.get(k) for k in ("moves", "fen", "result", "reason", "clocks")}

        # orthodox: a takeback (the board put back), a hint, Black resigns
        keep("takeback-hint-resign", events(data, "a", [
            *mv(1000, "e2", "e4"), *mv(3000, "e7", "e5"), *mv(5000, "g1", "f3"),
            say(7000, "takeback"), *mv(8000, "f3", "g1"), *mv(10000, "d2", "d4"),
            say(12000, "hint"), say(13000, "resign")]))
        # orthodox: a draw agreed at the board
        keep("draw", events(data, "b", [*mv(1000, "e2", "e4"), *mv(3000, "e7", "e5"), say(5000, "draw")]))
        # a clocked game: moves, an arbiter's adjustment, a pause and a restart, a takeback
        keep("clock", events(data, "c", [
            *mv(5000, "e2", "e4"), *mv(9000, "e7", "e5"),
            say(12000, "clock adjust white 10:00"), say(13000, "clock pause"), say(15000, "clock start"),
            *mv(20000, "g1", "f3"), *mv(24000, "b8", "c6"), say(26000, "takeback"), *mv(27000, "c6", "b8"),
            *mv(30000, "g8", "f6")], "--clock", "60+2"))
        # a flag falls
        keep("flag", events(data, "d", [*mv(5000, "e2", "e4"), {"t": 70_000, "lift": "e7"}], "--clock", "60+2"))
        # csipgs: purchases, and a drop of a bought piece next to the king
        keep("csipgs-buy-drop", events(data, "e", [
            *mv(1000, "e1", "d1"), say(2000, "buy N"), *mv(3000, "e8", "d8"), *mv(5000, "d1", "e1"),
            say(6000, "buy B"), *mv(7000, "d8", "e8"), {"t": 9000, "place": "d2"}, say(10000, "choose N@d2"),
            *mv(11000, "e8", "d8")], "--variant", "csipgs-power-super"))
        # Cost Progressive: several moves a turn, a turn ended by hand
        keep("cost-progressive", events(data, "f", [
            *mv(1000, "e2", "e4"), *mv(3000, "e7", "e5"), *mv(5000, "d2", "d4"), *mv(7000, "c2", "c4"),
            *mv(9000, "d7", "d6"), say(10000, "end"), *mv(11000, "g1", "f3")], "--variant", "cost-progressive"))

        # a game left for another (abandoned), then taken up again under new names: reopen,
        # players, computer, resume; the interactive console, as a player uses it
        run(data, "play", "--new", "--color", "never", stdin="e2-e4\ne7-e5\nquit\n")
        first = (data / "current").read_text().strip()
        run(data, "play", "--new", "--yes", "--color", "never", stdin="quit\n")
        run(data, "play", "--resume", first, "--white", "Ann", "--move-time", "2", "--yes", "--color", "never",
            stdin="g1-f3\nquit\n")
        shutil.copy(data / "games" / f"{first}.jsonl", HERE / "abandoned-resumed.jsonl")

        # an engine match game (records written without board events)
        run(data, "match", "--white", "random", "--black", "random", "--games", "1", "--seed", "7",
            "--clock", "60+1", "--no-progress")
        match = max((data / "games").glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
        shutil.copy(match, HERE / "match.jsonl")

        # the records a remote game's side writes (opponents/remote.py), through the journal as it writes them
        from board_driver.journal import GameStore
        store = GameStore(data)
        v_fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        from datetime import datetime, timezone
        gid, j = store.create("orthodox", v_fen, players={"white": "White", "black": "remote:b2"},
                              now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
                              extra={"remote": {"peer": "b2", "side": "black", "me": "b1"}, "clock": {"tc": "300", "mode": "auto"}},
                              game_id="remote")
        j.write({"type": "board", "occ": "ffff00000000ffff"}, sync=False)
        j.write({"type": "push", "ply": 1, "action": "e2e4", "w": 0, "clk": [299_000, 300_000],
                 "clk0": [299_000, 300_000], "n": [1, 0]}, sync=False)
        j.write({"type": "clock", "op": "adjust", "color": "black", "by": "b2", "ply": 2,
                 "clk": [299_000, 297_000], "n": [1, 0]}, sync=True)
        j.write({"type": "push", "ply": 2, "action": "e7e5", "w": 0, "clk": [299_000, 297_000],
                 "clk0": [299_000, 297_000], "n": [1, 1]}, sync=False)
        j.write({"type": "pop", "ply": 1, "action": "e7e5", "why": "takeback", "by": "b2",
                 "clk": [299_000, 297_000]}, sync=True)
        j.write({"type": "push", "ply": 2, "action": "c7c5", "w": 0, "clk": [299_000, 295_000],
                 "clk0": [299_000, 297_000], "n": [1, 1]}, sync=False)
        j.write({"type": "pop", "ply": 1, "action": "c7c5", "why": "remote adopt"}, sync=True)
        j.write({"type": "push", "ply": 2, "action": "e7e6", "w": 0, "clk": [299_000, 294_000],
                 "clk0": [299_000, 297_000], "n": [1, 1]}, sync=False)
        j.write({"type": "resign", "color": "black", "by": "b2"}, sync=False)
        j.write({"type": "result", "result": "1-0", "reason": "resignation", "clk": [299_000, 294_000]}, sync=True)
        j.write({"type": "reopen"}, sync=True)
        j.write({"type": "draw", "by": "b1"}, sync=False)
        j.write({"type": "result", "result": "1/2-1/2", "reason": "agreement", "clk": [299_000, 294_000]}, sync=True)
        j.close()
        shutil.copy(store.path(gid), HERE / "remote.jsonl")

    (HERE / "expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")

    # damaged copies, as a power cut or a bad disk leaves them
    whole = (HERE / "takeback-hint-resign.jsonl").read_bytes()
    (HERE / "damaged-torn.jsonl").write_bytes(whole[:-20])           # the last line cut short
    lines = whole.splitlines(keepends=True)
    mid = len(lines) // 2
    (HERE / "damaged-garbage.jsonl").write_bytes(b"".join(lines[:mid] + [b"\x13\x37 not json\n"] + lines[mid:]))


if __name__ == "__main__":
    main()
