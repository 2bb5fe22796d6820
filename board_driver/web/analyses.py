"""Saved games judged move by move for the page's evaluation graph (``POST
/api/games/ID/analyse``, ``GET /api/games/ID/analysis``; docs/web.md).

An analysis runs on a worker thread of its own (never the board loop's), one at a time: the
engine is :func:`.analysis.best_engine`'s (Fairy-Stockfish runs as a process of its own; the
built-in search shares the interpreter, and the loop still gets its turn every few
milliseconds). The result is written beside the game's record as ``ID.analysis.json`` and read
from there afterwards: a game is judged once (again only when its actions have changed since,
a game that was still going on, or when asked with other seconds a position).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board_driver.errors import BoardDriverError
from board_driver.journal import GameStore, JournalError
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.variant import Variant

SECONDS = 0.2           # the engine's time a position (as ``fairyboard games analyse``)


class GameAnalyses:
    """The analyses of one game store: at most one running; each one cached on disk."""

    def __init__(self, store: GameStore, *, fsf_path: str | None = None, on_change=None):
        self.store = store
        self.fsf_path = fsf_path
        self.on_change = on_change          # (status) -> None: a running analysis moved on
        self._lock = threading.Lock()
        self._running: dict[str, Any] | None = None     # the status of the analysis under way
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def path(self, gid: str) -> Path:
        return self.store.path(gid).with_suffix(".analysis.json")

    def cached(self, gid: str) -> dict | None:
        try:
            data = json.loads(self.path(gid).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("id") == gid else None

    def status(self, gid: str) -> dict:
        """``GET /api/games/ID/analysis``: the one under way, the one on disk, or none."""
        with self._lock:
            run = self._running
            if run is not None and run["id"] == gid:
                return _public(run)
        done = self.cached(gid)
        if done is not None:
            return _public(done)
        return {"id": gid, "state": "none", "engine": None, "seconds": None, "actions": None, "total": None, "done": 0,
                "start_cp": None, "turns": [], "swings": [], "error": None}

    def start(self, gid: str, seconds: float = SECONDS) -> dict:
        """Judge game ``gid`` unless it is judged already (for as many actions, at these seconds);
        BusyError while another game is being judged."""
        rec = self.store.load(gid)
        variant, actions = _playable(rec)
        done = self.cached(gid)
        if done is not None and done.get("state") == "done" and done.get("moves") == _moves_key(actions) \
                and done.get("seconds") == seconds:
            return _public(done)
        with self._lock:
            run = self._running
            if run is not None:
                if run["id"] == gid:
                    return _public(run)
                raise BusyError(f"game {run['id']} is being analysed: wait until it is done ({run['done']} of "
                                f"{run['total']} turns)")
            from board_driver.opponents.analysis import best_engine
            from board_driver.opponents.players import can_play
            engine = best_engine(variant)
            why = can_play(engine, variant)
            if why is not None:
                raise BoardDriverError(f"{engine} cannot analyse {variant.name}: {why}")
            self._running = {"id": gid, "state": "running", "engine": engine, "seconds": seconds,
                             "actions": len(actions), "moves": _moves_key(actions), "total": _turns(variant, actions, rec.header.get("start_fen")),
                             "done": 0, "start_cp": None, "turns": [], "error": None, "started": time.time()}
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, args=(gid, variant, actions,
                                                                    rec.header.get("start_fen"), engine, seconds),
                                            name=f"fairyboard-analyse-{gid}", daemon=True)
            self._thread.start()
            return _public(self._running)

    def _run(self, gid, variant: Variant, actions, start_fen, engine, seconds) -> None:
        from board_driver.opponents.analysis import analyse

        def on_turn(t) -> None:
            if self._stop.is_set():
                raise _Stopped()
            with self._lock:
                run = self._running
                if run is not None:
                    run["turns"].append(t.as_dict())
                    run["done"] = len(run["turns"])
            self._changed()
        out: dict[str, Any]
        try:
            result = analyse(variant, actions, start_fen=start_fen, engine=engine, seconds=seconds,
                             fsf_path=self.fsf_path, on_turn=on_turn)
        except _Stopped:
            with self._lock:
                self._running = None
            return
        except (BoardDriverError, EngineError, ValueError, OSError) as exc:
            with self._lock:
                out = dict(self._running or {}, state="failed", error=str(exc))
                self._running = None
            self._changed(out)
            return
        with self._lock:
            out = dict(self._running or {}, state="done", engine=result.engine, start_cp=result.start_cp,
                       turns=[t.as_dict() for t in result.turns], done=len(result.turns),
                       total=len(result.turns), finished=time.time())
        _write(self.path(gid), out)
        with self._lock:
            self._running = None
        self._changed(out)

    def _changed(self, status: dict | None = None) -> None:
        if self.on_change is None:
            return
        if status is None:
            with self._lock:
                status = dict(self._running) if self._running is not None else None
        if status is not None:
            try:
                self.on_change(_public(status))
            except Exception:           # a listener's trouble never stops the analysis
                pass

    def stop(self) -> None:
        """The service stops: the analysis under way ends after the position it is judging."""
        self._stop.set()
        t = self._thread
        if t is not None:
            t.join(5)


class BusyError(BoardDriverError):
    """Another game's analysis is under way."""


class _Stopped(Exception):
    pass


def big_swing(turn: dict) -> bool:
    """A big swing: the mover lost 150 centipawns or more (``?``, ``??`` from 300; scores
    clamped to +-1000 first, so a mate appearing where there was none counts; see
    :mod:`.analysis`)."""
    return bool(turn.get("mark"))


def _public(run: dict) -> dict:
    out: dict[str, Any] = {k: run.get(k) for k in ("id", "state", "engine", "seconds", "actions", "total", "done",
                                                    "start_cp", "turns", "error")}
    out["turns"] = list(run.get("turns") or [])
    out["swings"] = [t["ply"] for t in out["turns"] if big_swing(t)]
    return out


def _playable(rec):
    """The variant and the actions of a record that replay (a damaged record's readable part)."""
    from board_driver.pgn import replay
    if not rec.header:
        raise JournalError(rec.damage or f"{rec.path}: no game header")
    variant, _, sans, _ = replay(rec)
    return variant, list(rec.actions[:len(sans)])


def _moves_key(actions: list[str]) -> str:
    """What the cached analysis was made of: a game taken back and played on differently (as
    many actions, other ones) is judged again."""
    import hashlib
    return hashlib.sha256(" ".join(actions).encode()).hexdigest()[:16]


def _turns(variant: Variant, actions, start_fen) -> int:
    """How many turns ``actions`` make (a side's several actions in one turn count once)."""
    from engine.game import new_game
    g = new_game(variant, start_fen)
    n = 0
    cur = False
    for text in actions:
        side = g.turn
        g.push(g.parse(text))
        cur = True
        if g.turn != side or g.outcome() is not None:
            n += 1
            cur = False
    return n + (1 if cur else 0)


def _write(path: Path, data: dict) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
