"""The perft counts the ARM lane (scripts/pi-lane) expects, each from a reference other than the
code it checks where one exists. Run on the build machine with the checkout's .venv (the test
extra: python-chess and pyffish); prints one JSON object per line:
``{"variant", "depth", "nodes", "source"}``.

- orthodox: python-chess counts it here;
- the Tomorrow's Chess arrays Fairy-Stockfish can express, and Courier: pyffish counts them
  here, from the variants.ini sections `fairyboard fsf` exports (perft by legal_moves);
- csipgs, Chego, Cost Progressive: counts worked out by hand, asserted by tests/engine
  (test_csipgs_game.py, test_chego_perft.py, test_costprog_play.py);
- tomorrow-1, -4 and -5 (Giraffe, Griffin: beyond Fairy-Stockfish): no outside reference; the
  count of this checkout's engine on this machine, so the lane shows ARM counts what x86 counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: chess_reference

# (variant, depth): hand-counted, with the test that asserts it
HAND = {
    ("csipgs", 4): (25, "by hand (tests/engine/test_csipgs_game.py)"),
    ("chego", 1): (376, "by hand (tests/engine/test_chego_perft.py)"),
    ("chego-12x8", 1): (756, "by hand (tests/engine/test_chego_perft.py)"),
    ("cost-progressive", 2): (256, "by hand (tests/engine/test_costprog_play.py)"),
}
FSF = [("tomorrow-2", 2), ("tomorrow-3", 3), ("courier", 2)]
OWN = [("tomorrow-1", 2), ("tomorrow-4", 2), ("tomorrow-5", 2)]


def fsf_perft(pyffish, name: str, fen: str, depth: int, moves: list[str]) -> int:
    legal = pyffish.legal_moves(name, fen, moves)
    if depth == 1:
        return len(legal)
    return sum(fsf_perft(pyffish, name, fen, depth - 1, moves + [m]) for m in legal)


def main() -> int:
    import chess
    from chess_reference import chess_perft

    from board_driver.config import load_variant
    from engine.fsf import fsf_name, variants_ini
    from engine.perft import perft
    from engine.position import Position

    rows = [{"variant": "orthodox", "depth": 3, "nodes": chess_perft(chess.Board(), 3), "source": "python-chess"}]
    try:
        import pyffish
    except ImportError:
        print("expected: pyffish is missing (bash scripts/venv-setup test installs it)", file=sys.stderr)
        return 2
    pyffish.load_variant_config("\n".join(variants_ini(load_variant(n)) for n, _ in FSF))
    for name, depth in FSF:
        v = load_variant(name)
        rows.append({"variant": name, "depth": depth, "source": "Fairy-Stockfish (pyffish)",
                     "nodes": fsf_perft(pyffish, fsf_name(name), v.start_fen, depth, [])})
    for (name, depth), (nodes, source) in HAND.items():
        rows.append({"variant": name, "depth": depth, "nodes": nodes, "source": source})
    for name, depth in OWN:
        rows.append({"variant": name, "depth": depth, "source": "this engine on the build machine",
                     "nodes": perft(Position.from_fen(load_variant(name)), depth)})
    for row in rows:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
