"""``fairyboard games``: list, show and export the saved games."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from board_driver.errors import BoardDriverError
from board_driver.journal import GameRecord, GameStore, data_dir, load_any
from board_driver.pgn import fullmove, movetext, pgn_of, replay


def register(sub) -> None:
    p = sub.add_parser("games", help="list, show and export saved games",
                       description="Every game played is saved as it is played (in $FAIRYBOARD_DATA, "
                                   "$XDG_DATA_HOME/fairyboard or ~/.local/share/fairyboard). "
                                   "An ID may be 'latest'.")
    gsub = p.add_subparsers(dest="games_command", metavar="ACTION")
    gsub.required = True
    q = gsub.add_parser("list", help="one line per game: id, date, variant, players, result, actions")
    q.add_argument("--json", action="store_true", help="print a JSON list")
    q.set_defaults(handler=cmd_list)
    q = gsub.add_parser("show", help="a game's details and moves")
    q.add_argument("id")
    q.add_argument("--json", action="store_true", help="print a JSON object (moves, fen, result ...)")
    q.set_defaults(handler=cmd_show)
    q = gsub.add_parser("export", help="export a game (PGN)")
    q.add_argument("id")
    q.add_argument("--format", choices=("pgn",), default="pgn")
    q.add_argument("--output", "-o", help="write to this file instead of standard output")
    q.set_defaults(handler=cmd_export)


def _record(store: GameStore, gid: str) -> GameRecord:
    """The game ``gid`` names (``latest``: the newest), damaged or not (``damage`` says why)."""
    if gid in ("latest", "last"):
        ids = store.ids()
        if not ids:
            raise BoardDriverError(f"no games saved yet in {store.games}")
        gid = ids[-1]
    p = store.path(gid)                 # a JournalError for anything that is not a game id
    if not p.exists():
        known = ", ".join(store.ids()[-5:]) or "none yet"
        raise BoardDriverError(f"no game {gid!r} in {store.games} (latest: {known})")
    return load_any(p)


def cmd_list(args) -> int:
    from board_driver.host.lifecycle import check
    store = GameStore(data_dir())
    recs = store.list()
    for r in recs:
        if r.status == "playing":
            check(r)                # a game in progress is replayed: a move that cannot be played is damage
    if args.json:
        print(json.dumps([{"id": r.id, "date": r.header.get("date"), "variant": r.variant,
                           "players": r.header.get("players"), "result": r.result, "reason": r.reason,
                           "status": r.status, "damage": r.damage,
                           "actions": len(r.actions)} for r in recs]))
        return 0
    if not recs:
        print(f"No games saved yet (in {store.games}). Play one with: fairyboard play")
        return 0
    print(f"{'id':18} {'date':19} {'variant':18} {'players':24} {'result':10} actions")
    for r in recs:
        pl = r.header.get("players") or {}
        players = f"{pl.get('white', '?')} - {pl.get('black', '?')}"
        print(f"{r.id:18} {str(r.header.get('date', '?'))[:19]:19} {r.variant:18} {players[:24]:24} "
              f"{r.status:10} {len(r.actions)}")
    damaged = [r for r in recs if r.damage]
    for r in damaged:
        print(f"damaged: {r.damage}", file=sys.stderr)
    return 0


def _result_text(rec: GameRecord) -> str:
    if rec.result is None:
        return "in progress"
    if rec.result == "*":
        return rec.reason or "abandoned"
    return rec.result + (f" ({rec.reason})" if rec.reason else "")


def cmd_show(args) -> int:
    store = GameStore(data_dir())
    rec = _record(store, args.id)
    if not rec.header:
        raise BoardDriverError(rec.damage or f"{rec.path}: no game header")
    variant, game, sans, problem = replay(rec)
    damage = rec.damage or problem
    pl = rec.header.get("players") or {}
    spec = rec.header.get("clock") if isinstance(rec.header.get("clock"), dict) else None
    tc = spec.get("tc") if spec else None
    if args.json:
        print(json.dumps({"id": rec.id, "variant": rec.variant, "date": rec.header.get("date"),
                          "players": pl, "result": rec.result, "reason": rec.reason,
                          "status": "damaged" if damage else rec.status, "damage": damage,
                          "moves": list(rec.actions[:len(sans)]), "san": [s for _, _, s in sans],
                          "start_fen": rec.header.get("start_fen"), "fen": game.fen(),
                          "time_control": tc, "clocks": rec.clocks[:len(sans)] if tc else None,
                          "journal": str(rec.path)}))
        return 1 if damage else 0
    print(f"Game {rec.id}: {rec.variant}, {rec.header.get('date', '?')}")
    print(f"White: {pl.get('white', '?')}  Black: {pl.get('black', '?')}")
    print(f"Result: {_result_text(rec)}")
    print(f"Start: {rec.header.get('start_fen')}")
    if tc:
        print(f"TimeControl: {tc}")
    print(f"Moves: {movetext(sans, fullmove(rec.header.get('start_fen')), rec.clocks if tc else None)}")
    print(f"Position: {game.fen()}")
    print(f"Journal: {rec.path}")
    if damage:
        print(f"Damaged: {damage} (the moves above are the readable part; the file is left as it is)")
        return 1
    return 0


def cmd_export(args) -> int:
    store = GameStore(data_dir())
    rec = _record(store, args.id)
    if not rec.header:
        raise BoardDriverError(rec.damage or f"{rec.path}: no game header")
    text = pgn_of(rec)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    problem = rec.damage or replay(rec)[3]
    if problem:
        print(f"fairyboard games export: the game record is damaged: {problem}; "
              f"the readable part was exported", file=sys.stderr)
        return 1
    return 0
