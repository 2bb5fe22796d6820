"""A finished game (or any game record) judged move by move, as PicoChess users know it.

:func:`analyse` replays the game and asks an engine for the position before each turn and after
the last: a score from White's point of view, and the engine's best turn there. A turn's
**loss** is how much the mover's score fell from the position before it to the position after
it (scores clamped to +-:data:`CLAMP` centipawns first, so a long mate against a short one is
no swing); a loss of :data:`MISTAKE` centipawns or more is marked ``?``, of :data:`BLUNDER` or
more ``??`` -- the big swings the page's graph and ``fairyboard games analyse ID`` mark.

The engine is the best one available for the variant (:func:`best_engine`): Fairy-Stockfish
(native or its WebAssembly build, :mod:`.players`) where it can play the variant, else the
built-in search, which plays every family. Fairy-Stockfish is the board's shared engine
(:mod:`.engine_pool`): in the service an analysis waits for the computer's move, a hint and the
live evaluation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from board_driver.opponents.players import MATE_CP, Evaluation, Player, can_play

if TYPE_CHECKING:
    from engine.contract import Game
    from engine.variant import Variant

CLAMP = 1000            # centipawns a score counts at most when measuring a swing
MISTAKE = 150
BLUNDER = 300


@dataclass
class TurnEval:
    """One turn of the game and what the engine says of it."""

    ply: int                # the number of actions played after this turn (1 after the first)
    side: int               # 0 white, 1 black: who played it
    actions: list[str]      # the turn's actions (texts)
    san: str                # the turn as read (SAN where the family has it, else the texts)
    cp: int                 # the score after the turn, White's point of view (a mate: +-MATE_CP less plies)
    mate: int | None        # plies to mate after the turn, White's point of view (+: White mates), or None
    best: str               # the engine's best turn in the position before it (texts), "" when none
    loss: int               # centipawns the mover lost (0 when it gained or held)
    mark: str               # "", "?" or "??"

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Analysis:
    engine: str                         # the engine spec that judged
    seconds: float                      # its time a position
    start_cp: int                       # the score of the start position, White's point of view
    turns: list[TurnEval] = field(default_factory=list)

    def swings(self) -> list[TurnEval]:
        return [t for t in self.turns if t.mark]

    def as_dict(self) -> dict:
        return {"engine": self.engine, "seconds": self.seconds, "start_cp": self.start_cp,
                "turns": [t.as_dict() for t in self.turns]}


def best_engine(variant: Variant) -> str:
    """``fsf`` where Fairy-Stockfish can play the variant, else ``builtin``."""
    return "fsf" if can_play("fsf", variant) is None else "builtin"


def mark_of(loss: int) -> str:
    return "??" if loss >= BLUNDER else "?" if loss >= MISTAKE else ""


def score_text(cp: int, mate: int | None) -> str:
    """``+0.35``, ``-2.10``, ``#3`` (White mates in 3 plies), ``#-2``, ``mate`` (given)."""
    if mate == 0:
        return "mate"
    if mate is not None:
        return f"#{mate}"
    return f"{cp / 100:+.2f}"


def _white(e: Evaluation, side: int) -> tuple[int, int | None]:
    sign = 1 if side == 0 else -1
    return sign * e.cp, None if e.mate is None else sign * e.mate


def _final(game: Game) -> tuple[int, int | None]:
    """The score of a finished game, White's point of view."""
    out = game.outcome()
    assert out is not None, "the game is finished"
    w, b = out.score
    if w == b:
        return 0, None
    if w == 1 or b == 1:
        return (MATE_CP, 0) if w > b else (-MATE_CP, 0)
    return int((w - b) * CLAMP), None


def _clamp(cp: int) -> int:
    return max(-CLAMP, min(CLAMP, cp))


def analyse(variant: Variant, actions: list[str], *, start_fen: str | None = None, engine: str | Player | None = None,
            seconds: float = 0.2, fsf_path: str | None = None, on_turn=None) -> Analysis:
    """Judge every turn of the game ``actions`` make from the variant's start (or
    ``start_fen``). ``engine``: a spec or a Player (default :func:`best_engine`);
    ``on_turn(TurnEval)`` is called as each turn is judged (a progress display)."""
    from engine.game import new_game
    from board_driver.opponents import engine_pool
    own = not isinstance(engine, Player)
    player = engine if isinstance(engine, Player) else \
        engine_pool.player(engine or best_engine(variant), variant, priority=engine_pool.ANALYSIS, fsf_path=fsf_path)
    try:
        game = new_game(variant, start_fen)
        turns: list[tuple[int, list]] = []     # (side, [(action, san), ...]): the game's turns
        cur: list = []
        for text in actions:
            side = game.turn
            a = game.parse(text)
            cur.append((a, game.san(a) if not a.silent else a.text))
            game.push(a)
            if game.turn != side or game.outcome() is not None:
                turns.append((side, cur))
                cur = []
        if cur:
            turns.append((game.turn, cur))      # a turn under way when the record ends
        game = new_game(variant, start_fen)

        def judge(g: Game) -> tuple[tuple[int, int | None], str]:
            if g.outcome() is not None:
                return _final(g), ""
            e = player.evaluate(g, seconds)
            return _white(e, g.turn), " ".join(x.text for x in e.best)

        (cp, mate), best = judge(game)
        result = Analysis(player.spec.text, seconds, cp)
        for side, turn in turns:
            for a, _ in turn:
                game.push(a)
            (cp2, mate2), best2 = judge(game)
            sign = 1 if side == 0 else -1
            loss = max(0, sign * (_clamp(cp) - _clamp(cp2)))
            t = TurnEval(len(game.history), side, [a.text for a, _ in turn], " ".join(san for _, san in turn),
                         cp2, mate2, best, loss, mark_of(loss))
            result.turns.append(t)
            if on_turn is not None:
                on_turn(t)
            cp, mate, best = cp2, mate2, best2
        return result
    finally:
        if own:
            player.close()
