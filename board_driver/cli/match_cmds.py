"""``fairyboard match``: engine-versus-engine games with a score and an Elo difference."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from board_driver.config import load_variant
from board_driver.journal import GameStore, data_dir
from engine.game import new_game
from board_driver.opponents.match import GameResult, MatchScore, play_game, points_for
from board_driver.opponents.players import (
    PlayerError,
    can_play,
    make_player,
    parse_spec,
)

if TYPE_CHECKING:
    from engine.variant import Variant


def register(sub) -> None:
    p = sub.add_parser(
        "match", help="play engines against each other and score the match",
        description="Play N games between engine A (--white in the first game) and engine B, "
                    "alternating colours. Engines: builtin, builtin:LEVEL, random, fsf, fsf:SKILL, "
                    "uci:COMMAND. Every game is saved (fairyboard games export ID gives its PGN). "
                    "A progress bar goes to standard error; the last line of the output is "
                    "'score W-D-L elo X +- Y': A's wins, draws and losses over both colours, the "
                    "Elo difference of A over B and its 95% error margin.")
    p.add_argument("--variant", default="orthodox", help="variant (default: orthodox)")
    p.add_argument("--white", required=True, metavar="A", help="engine A, white in the first game")
    p.add_argument("--black", required=True, metavar="B", help="engine B, black in the first game")
    p.add_argument("--games", type=_positive, default=2, metavar="N", help="number of games (default 2)")
    p.add_argument("--time", type=_seconds, default=1.0, metavar="S", help="seconds a move (default 1)")
    p.add_argument("--time-a", type=_seconds, metavar="S",
                   help="seconds a move for engine A only (default: --time); a time-odds match "
                        "measures what more time is worth to an engine")
    p.add_argument("--time-b", type=_seconds, metavar="S", help="seconds a move for engine B only (default: --time)")
    from board_driver.cli.play_cmds import time_control
    p.add_argument("--clock", metavar="TC", type=time_control, help="play on a chess clock (PGN TimeControl: 60+1, 40/300:60, d60+1; "
                                                 "60+1,30+1: White's, then Black's, in every game): "
                                                 "each engine thinks what its clock allows, a flag fall loses "
                                                 "(or draws: docs/board-driver.md); --time is then unused")
    p.add_argument("--seed", type=int, help="seed for the random mover and the openings (repeatable matches)")
    p.add_argument("--openings", type=_plies, default=0, metavar="K",
                   help="start each pair of games from K random plies (chosen from --seed, default 0; "
                        "both games of a pair start from the same position, the colours swapped), so "
                        "that deterministic engines do not replay one game (chess family: the games start "
                        "from the position; other families: the turns are the games' first actions)")
    p.add_argument("--pgn", metavar="FILE", help="also write every game's PGN to FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object (games, score, elo) instead")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")
    p.set_defaults(handler=cmd_match)


def _positive(text: str) -> int:
    import argparse
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of games, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"at least one game, not {n}")
    return n


def _plies(text: str) -> int:
    import argparse
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of plies, not {text!r}") from None
    if not 0 <= n <= 40:
        raise argparse.ArgumentTypeError(f"0 to 40 opening plies, not {n}")
    return n


def opening_turns(variant: Variant, plies: int, seed: int | None, pair: int) -> list[list]:
    """The start of the ``pair``-th pair of games: ``plies`` uniformly random legal turns
    from the variant's start, drawn from (``seed``, ``pair``) so that a match is repeatable;
    a draw that ends the game or leaves no move is drawn again."""
    import random

    from engine.search import random_turn
    rng = random.Random(f"fairyboard-opening/{seed or 0}/{pair}")
    for _ in range(100):
        game = new_game(variant)
        turns = []
        for _ in range(plies):
            turn = random_turn(game, rng)
            if not turn:
                break
            for a in turn:
                game.push(a)
            turns.append(turn)
            if game.outcome() is not None:
                break
        if game.outcome() is None and game.legal_actions():
            return turns
    return []


def opening_fen(variant: Variant, plies: int, seed: int | None, pair: int) -> str:
    """The position after :func:`opening_turns` (chess family: a match's games start from it)."""
    game = new_game(variant)
    for turn in opening_turns(variant, plies, seed, pair):
        for a in turn:
            game.push(a)
    return game.fen()


def _seconds(text: str) -> float:
    import argparse
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seconds a move, not {text!r}") from None
    if not 0.01 <= s <= 3600:
        raise argparse.ArgumentTypeError(f"seconds a move must be 0.01 to 3600, not {text}")
    return s


def _bar(done: int, total: int, score: MatchScore, width: int = 24) -> str:
    filled = int(width * done / total)
    return (f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
            f"A +{score.wins} ={score.draws} -{score.losses}")


def cmd_match(args) -> int:
    variant = load_variant(args.variant)
    specs = (parse_spec(args.white), parse_spec(args.black))
    for spec in specs:
        why = can_play(spec, variant)
        if why is not None:
            raise PlayerError(f"{spec} cannot play {variant.name}: {why}")
    from board_driver.referee.clock import TimeControl
    tc = TimeControl.parse(args.clock) if getattr(args, "clock", None) is not None else None
    odds = (getattr(args, "time_a", None), getattr(args, "time_b", None))     # seconds of A, of B, or None
    if tc is not None and odds != (None, None):
        raise ValueError("--time-a and --time-b give seconds a move; with --clock each engine "
                         "thinks what its clock allows (give the clock alone)")
    openings = getattr(args, "openings", 0)
    by_fen = variant.family == "chess"     # else the opening turns are played as the game's first actions
    store = GameStore(data_dir())
    progress = not args.no_progress
    score = MatchScore()
    results: list[GameResult] = []
    seed = args.seed
    times = tuple(args.time if t is None else t for t in odds)
    players = []
    try:
        for i, spec in enumerate(specs):
            players.append(make_player(spec, variant, seed=None if seed is None else seed + i))
        a, b = players
        if progress:
            sys.stderr.write(_bar(0, args.games, score))
            sys.stderr.flush()
        for g in range(args.games):
            white, black = (a, b) if g % 2 == 0 else (b, a)
            seconds = times if g % 2 == 0 else times[::-1]          # (white's, black's)
            names = {"white": white.spec.text, "black": black.spec.text}
            fen = opening_fen(variant, openings, seed, g // 2) if openings and by_fen else _start_fen(variant)
            opening = [a.text for turn in opening_turns(variant, openings, seed, g // 2) for a in turn] \
                if openings and not by_fen else None
            gid, journal = store.create(variant.name, fen, players=names,
                                        extra={"event": "match", "round": g + 1, "time": seconds[0],
                                               **({"time_black": seconds[1]} if seconds[1] != seconds[0] else {}),
                                               **({"clock": {"tc": tc.text, "mode": "auto"}} if tc else {})})
            try:
                out, n = play_game(variant, white, black, seconds=seconds, journal=journal, tc=tc,
                                   fen=fen if openings and by_fen else None, opening=opening)
            finally:
                journal.close()
            pa = points_for(out.result, 0 if g % 2 == 0 else 1)
            score.add(pa)
            results.append(GameResult(g + 1, names["white"], names["black"], out.result, out.reason, n, gid, pa,
                                      fen if openings and by_fen else None, opening))
            if args.pgn:
                from board_driver.pgn import pgn_of
                with open(args.pgn, "a" if g else "w", encoding="utf-8") as fh:
                    fh.write(pgn_of(store.load(gid)) + "\n")
            if not args.json:
                print(f"game {g + 1}: {names['white']} - {names['black']}: {out.result} ({out.reason}), "
                      f"{n} actions, saved as {gid}")
                sys.stdout.flush()
            if progress:
                sys.stderr.write(_bar(g + 1, args.games, score))
                sys.stderr.flush()
        if progress:
            sys.stderr.write("\n")
    finally:
        for p in players:
            p.close()
    elo, margin = score.elo()
    speeds = {f"{name} ({p.spec.text})": round(getattr(p, "total_nodes", 0) / secs)
              for name, p in zip("AB", players) if (secs := getattr(p, "total_seconds", 0)) > 0}
    if args.json:
        print(json.dumps({
            "variant": variant.name, "a": specs[0].text, "b": specs[1].text, "games": [r.as_dict() for r in results],
            "time": args.time, "time_a": times[0], "time_b": times[1], "openings": openings, "seed": seed,
            "wins": score.wins, "draws": score.draws, "losses": score.losses,
            "score": round(score.fraction, 4), "elo": round(elo, 1), "margin": round(margin, 1),
            "nps": speeds, "score_line": score.line()}))
        return 0
    per_move = f"{times[0]:g} s a move" if times[0] == times[1] else f"A {times[0]:g} s a move, B {times[1]:g} s"
    print(f"{variant.name}, {per_move}: A = {specs[0].text}, B = {specs[1].text}; "
          f"A scored {float(sum(score.points)):g}/{len(score.points)} ({100 * score.fraction:.1f}%)")
    for k, v in speeds.items():
        print(f"{k}: {v} nodes a second")
    print(score.line())
    return 0


def _start_fen(variant: Variant) -> str:
    from engine.game import new_game
    return new_game(variant).fen()


