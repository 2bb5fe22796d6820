"""Games for the noisy-game tests and benchmark, played by references nobody here wrote where
they can play the variant: python-chess (orthodox), Fairy-Stockfish through pyffish (the
variants it can express: the 12x8 arrays it knows, Courier Chess), else the engine's own legal
actions (csipgs drops and purchases, Chego drops and removals, Cost Progressive multi-move turns).
Every game is checked move by move against the engine (it must be legal there too)."""

from __future__ import annotations

import functools
import random
import re

from board_driver.config import load_variant
from board_driver.sim.noise import NoiseMaker, NoisyGame
from engine.fsf import expressible, variants_ini
from engine.game import new_game

# one variant or more of every family
FAMILIES = {
    "orthodox": ["orthodox"],
    "12x8": ["tomorrow-2", "tomorrow-3", "courier", "tomorrow-1", "tomorrow-4", "tomorrow-5"],
    "csipgs": ["csipgs", "csipgs-power-super", "csipgs-balanced-1", "csipgs-army"],
    "chego": ["chego", "chego-12x8", "chego-holes"],
    "cost-progressive": ["cost-progressive", "cost-progressive-fibonacci", "cost-progressive-tomorrow-1"],
}
SPECIAL = ("castle", "en-passant", "promotion")


def army(colour: int) -> str:
    home, second = ("1", "2") if colour == 0 else ("8", "7")
    return ("royal-WF@e" + home + "," + ",".join(f"fcFfmW@{f}{second}" for f in "abcdefgh") + ","
            + ",".join(f"fcFfmW@{f}{home}" for f in "abcdfgh"))


def _pyffish():
    try:
        import pyffish
    except ImportError:
        return None
    return pyffish


@functools.lru_cache(maxsize=None)
def _fsf_loaded(variant: str) -> bool:
    ff = _pyffish()
    if ff is None or not expressible(load_variant(variant)):
        return False
    ff.load_variant_config(variants_ini(load_variant(variant), "fbd-" + variant))
    return True


def chess_moves(rng: random.Random, plies: int) -> list[str]:
    """A random legal orthodox game by python-chess, captures preferred now and then."""
    import chess
    b = chess.Board()
    out = []
    for _ in range(plies):
        legal = sorted(b.legal_moves, key=lambda m: m.uci())
        if not legal:
            break
        caps = [m for m in legal if b.is_capture(m)]
        m = rng.choice(caps) if caps and rng.random() < 0.4 else rng.choice(legal)
        out.append(m.uci())
        b.push(m)
    return out


def fsf_moves(variant: str, rng: random.Random, plies: int) -> list[str]:
    """A random legal game by Fairy-Stockfish (pyffish's legal moves), captures preferred now and
    then (a capture: the target square is occupied in Fairy-Stockfish's own FEN)."""
    import pyffish as ff
    v = load_variant(variant)
    moves: list[str] = []
    for _ in range(plies):
        legal = sorted(ff.legal_moves("fbd-" + variant, v.start_fen, moves))
        if not legal:
            break
        occupied = _occupied(ff.get_fen("fbd-" + variant, v.start_fen, moves))
        caps = [m for m in legal if (u := _UCI.match(m)) and u.group(2) in occupied]
        moves.append(rng.choice(caps) if caps and rng.random() < 0.4 else rng.choice(legal))
    return moves


_UCI = re.compile(r"^([a-z]\d+)([a-z]\d+)")


def _occupied(fen: str) -> set[str]:
    out = set()
    for r, row in enumerate(fen.split()[0].split("/")):
        rank = len(fen.split()[0].split("/")) - r
        f = 0
        for m in re.finditer(r"\d+|\+?[A-Za-z]~?", row):
            tok = m.group()
            if tok.isdigit():
                f += int(tok)
            else:
                out.add(f"{chr(97 + f)}{rank}")
                f += 1
    return out


def opening(game) -> list:
    """Actions a game must start with that random play cannot find (an army set-up)."""
    out = []
    if game.family == "csipgs" and getattr(game.state, "phase", "") == "setup":
        for colour in (0, 1):
            a = game.parse(army(colour))
            out.append(a)
            game.push(a)
    return out


def engine_actions(game, rng: random.Random, plies: int) -> list:
    out = opening(game)
    for _ in range(plies):
        legal = game.legal_actions()
        if not legal:
            break
        special = [a for a in legal if a.kind in SPECIAL or (a.kind == "drop" and a.lifts)]
        captures = [a for a in legal if a.lifts & a.places]
        r = rng.random()
        if special and r < 0.5:
            a = rng.choice(special)
        elif captures and r < 0.8:
            a = rng.choice(captures)
        else:
            a = rng.choice(legal)
        out.append(a)
        game.push(a)
    return out


def source_game(variant: str, rng: random.Random, plies: int):
    """(source, actions) of a random game of ``variant``."""
    v = load_variant(variant)
    g = new_game(v)
    if variant == "orthodox":
        source, texts = "python-chess", chess_moves(rng, plies)
    elif _fsf_loaded(variant):
        source, texts = "Fairy-Stockfish", fsf_moves(variant, rng, plies)
    else:
        return "engine", engine_actions(g, rng, plies)
    acts = []
    for m in texts:
        a = g.parse(m)
        acts.append(a)
        g.push(a)
    return source, acts


def noisy_game(variant: str, seed, plies: int = 40, rates=None) -> NoisyGame:
    rng = random.Random(f"noisy/{variant}/{seed}")
    source, acts = source_game(variant, rng, plies)
    return NoiseMaker(rng, rates).game(variant, new_game(load_variant(variant)), acts, source)
