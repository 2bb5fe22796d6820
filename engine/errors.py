"""Errors of the rules engine."""


class EngineError(Exception):
    """Root of every error the engine raises."""


class BetzaError(EngineError, ValueError):
    """A piece's Betza notation cannot be parsed; the message points at the bad character."""

    def __init__(self, text: str, pos: int, reason: str):
        self.text, self.pos, self.reason = text, pos, reason
        pointer = " " * pos + "^"
        super().__init__(f"bad Betza notation {text!r} at character {pos + 1}: {reason}\n  {text}\n  {pointer}")


class FenError(EngineError, ValueError):
    """A FEN string does not describe a position of the variant."""


class IllegalMoveError(EngineError, ValueError):
    """A move is not legal in the position, or cannot be parsed."""


class VariantError(EngineError, ValueError):
    """A variant definition is invalid or unknown."""


class SquareError(EngineError, ValueError):
    """A square name is not on the board."""
