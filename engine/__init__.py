"""The rules engine: pure Python, no I/O, no hardware, no threads.

Typical use::

    from engine import Variant, new_game
    game = new_game(variant)            # variant: Variant.from_dict(yaml_mapping)
    game.push(game.parse("e2e4"))
    game.legal_actions(), game.fen(), game.outcome()
"""

from .errors import BetzaError, EngineError, FenError, IllegalMoveError, SquareError, VariantError
from .game import Action, ChessGame, Outcome, new_game
from .geometry import Geometry
from .position import Position
from .variant import CATALOG, PieceType, Variant

__all__ = [
    "Action", "BetzaError", "CATALOG", "ChessGame", "EngineError", "FenError", "Geometry",
    "IllegalMoveError", "Outcome", "PieceType", "Position", "SquareError", "Variant",
    "VariantError", "new_game",
]
