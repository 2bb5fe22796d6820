"""Opponents that are not at the board: engine players (built-in search, Fairy-Stockfish,
any UCI engine), the computer that plays a side through the board, and engine matches.
"""
