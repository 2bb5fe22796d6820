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
    q = gsub.add_parser("analyse", aliases=["analyze"],
                        help="an evaluation per move from the best engine for the variant, big swings marked",
                        description="Judge every turn of a saved game: the score after it (White's point of "
                                    "view, pawns; #N: a mate in N plies), the engine's best turn in the "
                                    "position before it, and the centipawns the mover lost, marked ? "
                                    "(150 or more) or ?? (300 or more). The engine is Fairy-Stockfish where "
                                    "it can play the variant, else the built-in search.")
    q.add_argument("id")
    q.add_argument("--engine", metavar="SPEC", help="judge with this engine instead (builtin[:LEVEL], fsf[:SKILL], uci:COMMAND)")
    q.add_argument("--time", type=float, default=0.2, metavar="S", help="seconds a position (default 0.2)")
    q.add_argument("--json", action="store_true", help="print one JSON object (engine, start_cp, turns)")
    q.set_defaults(handler=cmd_analyse)


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


def cmd_analyse(args) -> int:
    from board_driver.opponents.analysis import analyse, best_engine, score_text
    from board_driver.opponents.players import PlayerError, can_play
    store = GameStore(data_dir())
    rec = _record(store, args.id)
    if not rec.header:
        raise BoardDriverError(rec.damage or f"{rec.path}: no game header")
    variant, _, sans, problem = replay(rec)
    if not 0.01 <= args.time <= 600:
        raise BoardDriverError(f"--time {args.time:g}: seconds a position must be 0.01 to 600")
    engine = args.engine or best_engine(variant)
    why = can_play(engine, variant)
    if why is not None:
        raise PlayerError(f"{engine} cannot analyse {variant.name}: {why}")
    moves = rec.actions[:len(sans)]
    if not args.json:
        print(f"Game {rec.id}: {rec.variant}, {_result_text(rec)}; judged by {engine}, {args.time:g} s a position")
        print(f"{'ply':>4}  {'move':14} {'score':>7}  {'loss':>5}  best")
        sys.stdout.flush()

    def show(t) -> None:
        if args.json:
            return
        move = f"{(t.ply + 1) // 2 if t.side == 0 else ''}{'.' if t.side == 0 else '...'} {t.san}"
        print(f"{t.ply:>4}  {move[:14]:14} {score_text(t.cp, t.mate):>7}  {t.loss:>5}  {t.best}{'  ' + t.mark if t.mark else ''}")
        sys.stdout.flush()

    result = analyse(variant, moves, start_fen=rec.header.get("start_fen"), engine=engine, seconds=args.time,
                     on_turn=show)
    if args.json:
        print(json.dumps({"id": rec.id, "variant": rec.variant, **result.as_dict()}))
    else:
        swings = result.swings()
        print(f"big swings: {', '.join(f'{t.ply} {t.san}{t.mark}' for t in swings) if swings else 'none'}")
    if rec.damage or problem:
        print(f"fairyboard games analyse: the game record is damaged: {rec.damage or problem}; "
              "the readable part was analysed", file=sys.stderr)
        return 1
    return 0
