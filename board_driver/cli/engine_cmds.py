"""Engine commands: variants, perft, roll, replay, fsf.

Each handler imports what it uses, so that a command's start-up pays only for its own needs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from board_driver.config import load_variant, variant_names

if TYPE_CHECKING:
    from engine.contract import Game
    from engine.variant import Variant


def register(sub) -> None:
    p = sub.add_parser("variants", help="list the variants with a one-line description")
    p.set_defaults(handler=cmd_variants)

    p = sub.add_parser("perft", help="count legal move paths to a depth (move generator check)",
                       description="Count the leaf nodes of the legal-move tree. The count is alone on the last line.")
    p.add_argument("--variant", default="orthodox", help="variant name (default: orthodox)")
    p.add_argument("--fen", help="start from this FEN instead of the variant's start")
    p.add_argument("--moves", default="", help="moves to play first, space separated (e2e4 e7e5 ...)")
    p.add_argument("--divide", action="store_true", help="first print 'move: count' for every root move")
    p.add_argument("depth", type=_depth, help="depth in plies (0-12)")
    p.set_defaults(handler=cmd_perft)

    p = sub.add_parser("roll", help="throw three dice for Random Variant Chess (or print a match schedule)",
                       description="Throw three dice (or take them with --dice) and print the variant they "
                                   "select; the last line is the back rank, file a to file l.")
    p.add_argument("--dice", help="take these dice instead of throwing, e.g. 3-1-6")
    p.add_argument("--seed", type=int, help="seed for the dice (repeatable throws)")
    p.add_argument("--schedule", type=_games, metavar="N",
                   help=f"print the colour/variant schedule of an N-game match (N from 0 to {MAX_SCHEDULE})")
    p.set_defaults(handler=cmd_roll)

    p = sub.add_parser("replay", help="apply moves to a variant's start (or a FEN) and print the position",
                       description="Apply the moves and print the final position; --json prints a JSON object "
                                   "with fen, legal_moves, in_check, result, reason and the family's extras.")
    p.add_argument("--variant", default="orthodox")
    p.add_argument("--fen")
    p.add_argument("--moves", default="", help="actions, space separated")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_replay)

    p = sub.add_parser("fsf", help="print a Fairy-Stockfish variants.ini section for a variant")
    p.add_argument("--variant", default="orthodox")
    p.set_defaults(handler=cmd_fsf)


MAX_SCHEDULE = 10000     # games in a printed match schedule (the page's /api/schedule: 100)


def _games(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of games, not {text[:40]!r}") from None
    if not 0 <= n <= MAX_SCHEDULE:
        raise argparse.ArgumentTypeError(f"a number of games from 0 to {MAX_SCHEDULE}, not {text[:40]}")
    return n


def _depth(text: str) -> int:
    try:
        d = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"depth must be a whole number, not {text!r}") from None
    if not 0 <= d <= 12:
        raise argparse.ArgumentTypeError(f"depth must be 0..12, not {d}")
    return d


def cmd_variants(args) -> int:
    for name in variant_names():
        v = load_variant(name)
        print(f"{name:28} {v.description}")
    print(f"{'random-A-B-C':28} Random Variant Chess: the array three dice A-B-C select (see 'fairyboard roll')")
    print(f"{'random':28} Random Variant Chess: throw the three dice now")
    return 0


def _game(args):
    from engine.game import new_game, start_problem

    variant = load_variant(args.variant)
    game = new_game(variant, args.fen)
    why = start_problem(game) if args.fen is not None else None
    if why is not None:
        raise ValueError(f"FEN {args.fen!r}: no game of {variant.name} reaches this position: {why}")
    for text in args.moves.split():
        game.push(game.parse(text))
    return variant, game


def cmd_perft(args) -> int:
    from engine.moves import to_uci
    from engine.perft import divide, game_divide, game_perft, perft

    variant, game = _game(args)
    if game.family == "chess":  # the fast path: int moves on the Position
        pos = game.position
        count, rows = (lambda: perft(pos, args.depth)), \
            (lambda: [(to_uci(m, variant), n) for m, n in divide(pos, args.depth)])
    else:
        count, rows = (lambda: game_perft(game, args.depth)), (lambda: game_divide(game, args.depth))
    if not args.divide:
        print(count())
        return 0
    total = 0
    for text, n in rows():
        print(f"{text}: {n}")
        total += n
    print()
    print(total if args.depth > 0 else 1)
    return 0


def cmd_roll(args) -> int:
    import random

    from engine import random_variant

    if args.schedule is not None:
        print("game  A  B  variant")
        for e in random_variant.schedule(args.schedule):
            a = "W" if e.white == "A" else "B"
            b = "B" if a == "W" else "W"
            print(f"{e.game:4}  {a}  {b}  {e.variant}{'  (draw a new variant)' if e.draw else ''}")
        return 0
    dice: tuple[int, ...]
    if args.dice:
        dice = random_variant.select(args.dice).dice
    else:
        dice = tuple(sorted(random_variant.roll(random.Random(args.seed))))
    rv = random_variant.select(dice)
    print(f"dice: {'-'.join(map(str, rv.dice))}")
    print(f"variant: random-{'-'.join(map(str, rv.dice))} (based on variant {rv.base}): {rv.description}")
    phys = [p for p, q in zip(rv.physical, rv.back_rank) if p != q]
    if phys:
        print("stand-ins: " + ", ".join(f"{_title(q)} as {_title(p)}" for p, q in zip(rv.physical, rv.back_rank) if p != q))
    print(", ".join(_title(n) for n in rv.back_rank))
    return 0


def _title(name: str) -> str:
    return " ".join(w.capitalize() for w in name.split("-"))


def replay_report(variant: Variant, game: Game) -> dict:
    outcome = game.outcome()
    report = {
        "variant": variant.name,
        "fen": game.fen(),
        "turn": "white" if game.turn == 0 else "black",
        "moves": [a.text for a in game.history],
        "legal_moves": [a.text for a in game.legal_actions()],
        "in_check": bool(game.in_check()),
        "result": outcome.result if outcome else None,
        "reason": outcome.reason if outcome else None,
    }
    report.update(game.describe())
    return report


def cmd_replay(args) -> int:
    variant, game = _game(args)
    if args.json:
        import json


        json.dump(replay_report(variant, game), sys.stdout)
        print()
        return 0
    print(render_text(variant, game))
    outcome = game.outcome()
    print(f"FEN: {game.fen()}")
    if outcome:
        print(f"Result: {outcome.result} ({outcome.reason})")
    else:
        print(f"{'White' if game.turn == 0 else 'Black'} to move{' (in check)' if game.in_check() else ''}; "
              f"{len(game.legal_actions())} legal moves")
    return 0


def render_text(variant: Variant, game: Game) -> str:
    g = variant.geometry
    pieces = game.piece_map()
    lines = []
    for rank in range(g.ranks - 1, -1, -1):
        row = []
        for f in range(g.files):
            sq = g.square(f, rank)
            if sq in g.holes:
                row.append(" ")
            elif sq in pieces:
                letter, color = pieces[sq]
                row.append(letter.upper() if color == 0 else letter)
            else:
                row.append(".")
        lines.append(f"{rank + 1:>2} " + " ".join(row))
    lines.append("   " + " ".join("abcdefghijklmnop"[:g.files]))
    return "\n".join(lines)


def cmd_fsf(args) -> int:
    from engine.fsf import expressible, variants_ini

    variant = load_variant(args.variant)
    if not expressible(variant):
        variants_ini(variant)  # raises with the reason
    sys.stdout.write(variants_ini(variant))
    return 0
