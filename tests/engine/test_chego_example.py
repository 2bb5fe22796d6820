"""The example game of chego.txt, whose moves name squares only.

The text gives the squares of 22 drops (and the passes) and the final evaluation: 22 squares
occupied, 6 neutral (b8 h8 g6 c3 e2 g1), 19 controlled by White and 17 by Black, each listed.
The piece types are found by search: walk the game in order and, at each drop, try every
piece type the engine accepts as a legal drop on that square (drop conditions 1-4, with the
pieces still in hand); at the end compare the territory with the text's lists. The drop rules
alone leave two typings of the whole game; the evaluation keeps exactly one.
"""

from board_driver.config import load_variant
from engine.game import new_game

SQUARES = ("e4 d6 g5 d4 e6 e5 a5 c7 f3 h2 d2 c1 h5 b5 b4 f8 f1 g7 b7 g8 "
           "pass h7 pass h4 pass pass").split()
NEUTRAL = {"b8", "h8", "g6", "c3", "e2", "g1"}
WHITE = {"a8", "c8", "f6", "d5", "f5", "f4", "g4", "a3", "b3", "d3", "e3", "g3", "h3", "a2", "c2",
         "g2", "b1", "d1", "e1"}
BLACK = {"d8", "e8", "a7", "d7", "e7", "f7", "a6", "b6", "c6", "h6", "c5", "a4", "c4", "b2", "f2",
         "a1", "h1"}

# The one typing the search finds (White's drops are the odd ones).
TYPED = ("Q@e4 Q@d6 R@g5 B@d4 B@e6 N@e5 B@a5 R@c7 R@f3 R@h2 K@d2 N@c1 N@h5 B@b5 N@b4 K@f8 "
         "P@f1 P@g7 P@b7 P@g8 pass P@h7 pass P@h4 pass pass").split()


def typings(game, i=0):
    """Every sequence of legal actions that drops on the example's squares in its order, with
    the evaluation it ends in."""
    if i == len(SQUARES):
        yield " ".join(a.text for a in game.history), evaluation(game)
        return
    square = SQUARES[i]
    for action in list(game.legal_actions()):
        if action.text == square or action.text.endswith("@" + square):
            game.push(action)
            yield from typings(game, i + 1)
            game.pop()


def evaluation(game):
    terr = game.territory()
    return set(terr["neutral"]), set(terr["white"]), set(terr["black"])


def test_the_evaluation_determines_the_piece_types():
    game = new_game(load_variant("chego"))
    found = dict(typings(game))
    assert len(found) == 2                      # the drop rules alone leave two typings
    matching = [seq for seq, ev in found.items() if ev == (NEUTRAL, WHITE, BLACK)]
    assert matching == [" ".join(TYPED)]


def test_the_typed_example_game_ends_as_the_text_says():
    game = new_game(load_variant("chego"))
    for text in TYPED:
        game.push(text)
    assert bin(game.occupancy()).count("1") == 22
    assert evaluation(game) == (NEUTRAL, WHITE, BLACK)
    assert game.points() == (19, 17)
    out = game.outcome()
    assert out.result == "1-0" and out.winner == 0      # "White wins with 2 points!"
    assert game.describe()["captured"] == {"white": [], "black": []}
    # Pawns went to their own first rank: White's on f1, Black's on g8.
    pieces = game.piece_map()
    sq = game.geometry.parse
    assert pieces[sq("f1")] == ("p", 0) and pieces[sq("g8")] == ("p", 1)
