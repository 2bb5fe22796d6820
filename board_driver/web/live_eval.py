"""The live evaluation (off by default): the position on the board judged in the background by
the best engine for the variant (:func:`.analysis.best_engine`), for the snapshot's ``eval``
(docs/web.md).

The board loop only hands over a copy of the game when the position changes
(:meth:`LiveEval.follow`, a few microseconds); the engine thinks on a worker thread of its own
and the loop carries on reading the sensors meanwhile. A position the game has left before its
evaluation ended is not shown (its search is stopped); switching off drops what is under way
and lets the engine go.

Fairy-Stockfish is the board's shared engine (:mod:`board_driver.opponents.engine_pool`): an
evaluation gives way to the computer's move and to a hint (it is stopped and searched again
after them).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from board_driver.errors import BoardDriverError
from engine.errors import EngineError

if TYPE_CHECKING:
    from board_driver.referee.session import Session

SECONDS = 1.0           # the engine's time a position


class LiveEval:
    """The switch, the position to judge and the last figures. ``on_result`` is called (from the
    worker thread) when new figures are ready: the bridge publishes a snapshot then."""

    def __init__(self, *, seconds: float = SECONDS, fsf_path: str | None = None,
                 on_result: Callable[[], None] | None = None):
        self.seconds = seconds
        self.fsf_path = fsf_path
        self.on_result = on_result
        self.on = False
        self._cv = threading.Condition()
        self._key: tuple | None = None              # (game id, ply, fen) of the position followed
        self._job: tuple | None = None              # (key, game copy, variant) waiting for the worker
        self._shown: dict[str, Any] | None = None   # the snapshot's eval
        self._thread: threading.Thread | None = None
        self._closed = False
        self._generation = 0                        # bumped by every switch: a stale result is dropped

    # -- the web thread ----------------------------------------------------------------------------
    def switch(self, on: bool, seconds: float | None = None) -> None:
        with self._cv:
            if seconds is not None:
                self.seconds = seconds
            self._generation += 1
            self.on = on
            self._key = None                # the next follow() starts afresh
            self._job = None
            self._shown = None
            if on and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._work, name="fairyboard-live-eval", daemon=True)
                self._thread.start()
            self._cv.notify_all()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self.on = False
            self._cv.notify_all()
        t = self._thread
        if t is not None:
            t.join(3)

    # -- the board loop's thread -------------------------------------------------------------------
    def follow(self, session: Session) -> None:
        """The position now: a new one is handed to the worker (a copy of the game)."""
        if not self.on:
            return
        g = session.game
        try:
            key = (session.game_id, len(g.history), g.fen())
        except (EngineError, ValueError, AttributeError):
            return
        if key == self._key:
            return
        with self._cv:
            self._key = key
            ply = len(g.history)
            turn = "white" if g.turn == 0 else "black"
            if session.outcome() is not None:
                self._job = None
                self._shown = {"state": "over", "ply": ply, "turn": turn, "cp": None, "mate": None, "depth": None,
                               "best": None, "engine": None, "error": None}
            else:
                self._job = (key, g.copy(), getattr(g, "variant", None))
                self._shown = {"state": "thinking", "ply": ply, "turn": turn, "cp": None, "mate": None,
                               "depth": None, "best": None, "engine": None, "error": None}
            self._cv.notify_all()

    def snapshot(self) -> dict | None:
        """The snapshot's ``eval``: None while off."""
        with self._cv:
            if not self.on or self._shown is None:
                return None
            return dict(self._shown, seconds=self.seconds)

    # -- the worker ----------------------------------------------------------------------------------
    def _work(self) -> None:
        from board_driver.opponents import engine_pool
        from board_driver.opponents.analysis import best_engine
        player = None
        player_for = None
        try:
            while True:
                with self._cv:
                    while not self._closed and (not self.on or self._job is None):
                        if not self.on and player is not None:
                            break
                        self._cv.wait()
                    if self._closed:
                        return
                    if not self.on:             # switched off: the engine is closed
                        job = None
                    else:
                        job = self._job
                        self._job = None
                    gen = self._generation
                    seconds = self.seconds
                if job is None:
                    if player is not None:
                        player.close()
                        player, player_for = None, None
                    continue
                key, game, variant = job
                try:
                    if player is None or player_for is not variant:
                        if player is not None:
                            player.close()
                        spec = best_engine(variant)
                        player = engine_pool.player(spec, variant, priority=engine_pool.EVAL, fsf_path=self.fsf_path)
                        player_for = variant

                    def stale(gen=gen) -> bool:     # switched, closed, or a newer position waits
                        return self._closed or gen != self._generation or self._job is not None
                    ev = player.evaluate(game, seconds, stop=stale)
                    from board_driver.opponents.computer import remember, white_score
                    remember(player.spec.text, game, ev)    # a hint asked here is this search
                    cp, mate = white_score(game, ev)        # White's point of view (Chego: its count)
                    figures = {"state": "done", "cp": cp, "mate": mate, "depth": ev.depth or None,
                               "best": " ".join(a.text for a in ev.best) or None, "engine": player.spec.text,
                               "error": None}
                    if game.family == "chego":
                        w, b = game.points()
                        figures["points"] = {"white": w, "black": b}
                except (BoardDriverError, EngineError, ValueError, OSError) as exc:
                    figures = {"state": "failed", "error": str(exc)}
                    if player is not None:
                        player.close()
                    player, player_for = None, None
                with self._cv:
                    if gen != self._generation or key != self._key or self._shown is None:
                        continue                # the game moved on, or the switch was turned
                    self._shown = dict(self._shown, **figures)
                if self.on_result is not None:
                    self.on_result()
        finally:
            if player is not None:
                player.close()
