"""The rules engine: pure Python, no I/O, no hardware, no threads.

Typical use::

    from engine import Variant, new_game
    game = new_game(variant)            # variant: Variant.from_dict(yaml_mapping)
    game.push(game.parse("e2e4"))
    game.legal_actions(), game.fen(), game.outcome()
    game.board_state()                  # what the board shows, typed (engine.contract.BoardState)

Every family implements :class:`engine.contract.Game`; see ``docs/engine.md``.
The names below are imported on first use, so that importing one module of the engine (the
command line's start-up) does not import them all.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "BetzaError": "errors", "EngineError": "errors", "FenError": "errors",
    "IllegalMoveError": "errors", "SquareError": "errors", "VariantError": "errors",
    "Action": "game", "ChessGame": "game", "FamilyGame": "game", "Outcome": "game", "new_game": "game",
    "ActionKind": "contract", "BoardState": "contract", "Game": "contract", "Termination": "contract",
    "Geometry": "geometry",
    "Position": "position",
    "CATALOG": "variant", "PieceType": "variant", "Variant": "variant",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
