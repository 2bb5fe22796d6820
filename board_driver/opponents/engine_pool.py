"""One engine process per board: the UCI engine the computer, the hint, the live evaluation
and the page's analyses share (docs/engine.md, *One engine per board*).

A Fairy-Stockfish process is 10-100 MB natively and 200-350 MB as the WebAssembly build under
node; a board on a 1 GB Pi cannot run one for each of them. The service is one process per
board, so the pool is one per process (:func:`shared`): it keeps one engine process per
(command, variants.ini) -- ``fsf`` and ``fsf:5`` for the same variant share one -- and gives
each user a :class:`PooledPlayer`, a :class:`~.players.Player` like the others.

* **Requests take turns by priority**: :data:`MOVE` (the computer's move), then :data:`HINT`,
  :data:`EVAL` (the live evaluation), :data:`ANALYSIS` (a saved game judged). A request runs in
  its caller's thread while it holds the engine; one of a higher priority arriving meanwhile
  stops it (UCI ``stop``), takes the engine as soon as its ``bestmove`` is in, and the stopped
  request is queued again and searched afresh after it (its partial result is not used: it
  was cut short). The computer's move therefore never waits behind an evaluation, only for
  the engine to stop (a few milliseconds). Requests of one priority are served in order.
* **Options are set per request**: the Skill Level of the spec (``fsf:5``: 5, ``fsf``: full
  strength) is sent before each search (python-chess sends only what changed), so the
  computer at skill 5 and a full-strength hint share the process. Hash (:data:`HASH_MB`) and
  Threads (:data:`THREADS`) are the process's, set once.
* **A dead engine is started again**: a request that finds the process gone (killed, crashed,
  or silent :data:`HANG_SECONDS` past its time, then killed) starts a new one and is tried once
  more; the players are told (:meth:`PooledPlayer.take_notices`: the computer says it). A
  second failure is a :class:`~.players.PlayerError` saying so.
* **Closed with its users**: each player holds the engine; when the last one is closed (the
  game's computer and hint with the session, the live evaluation switched off, the analysis
  done) the process quits. The service closes them all when it stops (and :func:`shared`'s
  pool closes what is left when the interpreter exits).

``FAIRYBOARD_ENGINE_POOL=0`` in the environment gives every user an engine of its own again
(the old arrangement; tests/bench/bench_memory.py compares the two).
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import heapq
import itertools
import os
import shutil
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from board_driver.opponents.players import (
    EngineSpec,
    Evaluation,
    Player,
    PlayerError,
    UciSetup,
    evaluation_of,
    make_player,
    parse_spec,
    position_of,
    quit_engine,
    start_uci,
    uci_setup,
)

if TYPE_CHECKING:
    from engine.contract import Game
    from engine.variant import Variant

MOVE, HINT, EVAL, ANALYSIS = 0, 1, 2, 3     # request priorities, the most urgent first
PRIORITY_NAMES = {MOVE: "move", HINT: "hint", EVAL: "evaluation", ANALYSIS: "analysis"}
HASH_MB = 16            # the engine's transposition table (Fairy-Stockfish's default)
THREADS = 1
HANG_SECONDS = 20.0     # an engine silent this long past its search time is taken for dead
POLL_SECONDS = 0.02     # how often a waiting request looks at its caller's stop()
FULL_SKILL = 20         # Fairy-Stockfish's Skill Level at full strength (its default)


def pooling() -> bool:
    """Users share engines (``FAIRYBOARD_ENGINE_POOL=0``: each starts its own)."""
    return os.environ.get("FAIRYBOARD_ENGINE_POOL", "1").strip().lower() not in ("0", "no", "off", "false")


class _Stopped(Exception):
    """The request's caller no longer wants the answer (its stop() said so)."""


class _Request:
    """One search asked of an engine: its priority and order, and what it was told meanwhile."""

    def __init__(self, priority: int, seq: int, stop: Callable[[], bool] | None):
        self.priority = priority
        self.seq = seq
        self.stop = stop
        self.preempted = False      # a more urgent request wants the engine: stop and queue again
        self.handle: Any = None     # the running search (python-chess's SimpleAnalysisResult)

    def __lt__(self, other: _Request) -> bool:
        return (self.priority, self.seq) < (other.priority, other.seq)

    def unwanted(self) -> bool:
        return self.stop is not None and bool(self.stop())


class _Engine:
    """One engine process and the requests taking turns on it."""

    def __init__(self, pool: EnginePool, key: tuple, spec: EngineSpec, setup: UciSetup):
        self.pool = pool
        self.key = key
        self.spec = spec                # the spec it was first asked for (its messages name it)
        self.setup = setup
        self.cv = threading.Condition()
        self.queue: list[_Request] = []     # a heap: the most urgent first, then the oldest
        self.holder: _Request | None = None
        self.engine: Any = None         # python-chess's SimpleEngine, None until started (or dead)
        self.name = setup.command[0]
        self.options: Any = {}          # the engine's options (Skill Level ...), once started
        self.folder: str | None = None
        self.users = 0
        self.closed = False
        self.starts = 0                 # processes started (1 + restarts)
        self.notices: list[str] = []    # said once, to the first player that takes them
        self.log: collections.deque[tuple[str, int]] = collections.deque(maxlen=100)   # (event, priority)
        self.skills: collections.deque[tuple[int, Any]] = collections.deque(maxlen=100)  # (priority, Skill Level)

    # -- the process ---------------------------------------------------------------------------------
    def pid(self) -> int | None:
        eng = self.engine
        if eng is None:
            return None
        try:
            return eng.transport.get_pid()
        except Exception:
            return None

    def _alive(self) -> bool:
        eng = self.engine
        return eng is not None and not eng.returncode.done() and not getattr(eng, "_shutdown", False)

    def _ensure(self, spec: EngineSpec) -> Any:
        """The running engine, started when there is none (by the request holding it)."""
        if self.closed:
            raise PlayerError(f"{spec}: the engine was closed")
        if self.engine is not None and not self._alive():
            self._start_again(spec, self._died(spec))     # it died since the last request
        elif self.engine is None:
            self._start(spec)
        return self.engine

    def _start(self, spec: EngineSpec) -> None:
        engine, name, folder = start_uci(spec, self.setup, {"Hash": self.pool.hash_mb, "Threads": self.pool.threads})
        self.engine, self.name, self.folder = engine, name, folder
        self.options = engine.options
        self.starts += 1

    def ensure(self, spec: EngineSpec, priority: int) -> None:
        """Start the engine now (a new user: its errors are said at once), unless it runs."""
        if self._alive():
            return
        self.run(spec, priority, None, None)

    def _drop(self, kill: bool = False) -> None:
        """Forget the process (asking it to quit if it still runs; ``kill``: at once)."""
        eng, self.engine = self.engine, None
        if eng is not None:
            if kill or eng.returncode.done():
                eng.close()
            else:
                quit_engine(eng)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def _died(self, spec: EngineSpec, hung: bool = False) -> str:
        """The engine's process ended (or hung: it is killed): what to tell the players."""
        eng = self.engine
        if hung:
            self._drop(kill=True)
            return f"The engine {self.name} ({spec}) stopped answering (it was ended)"
        how = "it stopped answering"
        if eng is not None:
            try:
                code = eng.returncode.result(timeout=2)
                how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            except Exception:
                pass
        self._drop()
        return f"The engine {self.name} ({spec}) stopped ({how})"

    def close(self) -> None:
        with self.cv:
            self.closed = True
            holder = self.holder
            if holder is not None:
                holder.preempted = True
                if holder.handle is not None:
                    _stop(holder.handle)
            self.cv.notify_all()
        self._drop()

    # -- requests ------------------------------------------------------------------------------------
    def run(self, spec: EngineSpec, priority: int, stop: Callable[[], bool] | None,
            search: Callable[[Any], Any] | None):
        """``search(engine)`` once this request holds the engine (more urgent ones first), in the
        caller's thread; again after a preemption, and once more on a new process when the
        engine dies under it. _Stopped when the caller's ``stop()`` says the answer is unwanted."""
        req = _Request(priority, next(self.pool.seq), stop)
        retried = False
        while True:
            self._acquire(req)
            try:
                try:
                    engine = self._ensure(spec)
                    if search is None:
                        return None
                    out = search(engine)
                except Exception as exc:
                    import chess.engine
                    # a process found dead as a search starts: python-chess cancels the command;
                    # one that stops answering as a search starts (its options, its isready):
                    # python-chess gives up on the command after its timeout
                    died = (chess.engine.EngineTerminatedError, concurrent.futures.CancelledError, _Hung,
                            TimeoutError)
                    if not isinstance(exc, died) or self.closed:
                        raise
                    if isinstance(exc, TimeoutError):
                        self.log.append(("hung", priority))
                    line = self._died(spec, hung=isinstance(exc, (_Hung, TimeoutError)))
                    if retried:
                        raise PlayerError(f"{line}; started again, it stopped again") from None
                    retried = True
                    self._start_again(spec, line)
                    continue
                if req.preempted and not self.closed and not req.unwanted():
                    self.log.append(("requeued", priority))
                    req.preempted = False
                    req.seq = next(self.pool.seq)
                    continue        # searched afresh after the more urgent request
                if req.unwanted():
                    raise _Stopped()
                return out
            finally:
                self._release(req)

    def _start_again(self, spec: EngineSpec, line: str) -> None:
        try:
            self._start(spec)
        except PlayerError as exc:
            raise PlayerError(f"{line}; it cannot be started again: {exc}") from None
        self._tell(f"{line}; it was started again.")

    def _tell(self, line: str) -> None:
        with self.cv:
            self.notices.append(line)
        self.pool.notice(line)

    def _acquire(self, req: _Request) -> None:
        with self.cv:
            heapq.heappush(self.queue, req)
            h = self.holder
            if h is not None and h.priority > req.priority and not h.preempted:
                h.preempted = True
                self.log.append(("preempted", h.priority))
                if h.handle is not None:
                    _stop(h.handle)
            while not self.closed and (self.holder is not None or self.queue[0] is not req):
                if req.unwanted():
                    self.queue.remove(req)
                    heapq.heapify(self.queue)
                    self.cv.notify_all()
                    raise _Stopped()
                self.cv.wait(POLL_SECONDS if req.stop is not None else None)
            if self.closed:
                if req in self.queue:
                    self.queue.remove(req)
                    heapq.heapify(self.queue)
                raise PlayerError(f"{self.spec}: the engine was closed")
            heapq.heappop(self.queue)
            self.holder = req

    def _release(self, req: _Request) -> None:
        with self.cv:
            if self.holder is req:
                self.holder = None
            req.handle = None
            self.cv.notify_all()

    def search(self, req_spec: EngineSpec, priority: int, game: Game, seconds: float, level: int | None,
               stop: Callable[[], bool] | None, uci_variant: str | None) -> tuple[Any, Any]:
        """(best move or None, info) of a search of ``game``'s position for ``seconds``."""
        import chess.engine

        def go(engine: Any):
            req = self.holder
            assert req is not None
            options = {}
            if "Skill Level" in engine.options:
                options["Skill Level"] = FULL_SKILL if level is None else level
            pos = position_of(game, uci_variant)
            self.log.append(("started", priority))
            handle = engine.analysis(pos, chess.engine.Limit(time=max(0.01, seconds * 0.9)),
                                     info=chess.engine.INFO_SCORE, options=options)
            self.skills.append((priority, engine.protocol.config.get("Skill Level")))   # as sent
            with self.cv:
                req.handle = handle
                if req.preempted:
                    _stop(handle)
            waiting = _wait(handle)
            deadline = time.monotonic() + seconds + HANG_SECONDS
            stopped = False
            while True:
                try:
                    best = waiting.result(timeout=POLL_SECONDS if stop is not None else
                                          max(0.0, deadline - time.monotonic()))
                    break
                except concurrent.futures.TimeoutError:
                    if time.monotonic() > deadline:
                        self.log.append(("hung", priority))
                        raise _Hung() from None
                    if not stopped and stop is not None and stop():
                        _stop(handle)
                        stopped = True
            info = handle.info
            self.log.append(("preempted-done" if req.preempted else "done", priority))
            return best.move, info

        out = self.run(req_spec, priority, stop, go)
        assert out is not None
        return out


class _Hung(Exception):
    """The engine gave no bestmove long after its time (killed, then started again)."""


def _stop(handle: Any) -> None:
    try:
        handle.stop()
    except Exception:           # the engine is gone: its request finds out
        pass


def _wait(handle: Any) -> concurrent.futures.Future:
    """The search's bestmove as a future (python-chess's wait() blocks without a timeout)."""
    import asyncio
    return asyncio.run_coroutine_threadsafe(handle.inner.wait(), handle.simple_engine.protocol.loop)


class EnginePool:
    """The engine processes of one service (see the module docstring)."""

    def __init__(self, *, hash_mb: int = HASH_MB, threads: int = THREADS,
                 on_notice: Callable[[str], None] | None = None):
        self.hash_mb = hash_mb
        self.threads = threads
        self.on_notice = on_notice
        self.fsf_path: str | None = None    # the board profile's Fairy-Stockfish, once a user names it
        self.seq = itertools.count()
        self._lock = threading.Lock()
        self._engines: dict[tuple, _Engine] = {}

    def player(self, spec: EngineSpec | str, variant: Variant, *, priority: int, fsf_path: str | None = None,
               seed: int | None = None) -> Player:
        """A player whose searches run on the shared engine at ``priority`` (builtin, random and
        registered kinds: a player of their own, as :func:`.players.make_player` makes). The
        engine is started now when it does not run yet (a PlayerError says why it cannot)."""
        if isinstance(spec, str):
            spec = parse_spec(spec)
        if spec.kind not in ("fsf", "uci") or not pooling():
            return make_player(spec, variant, fsf_path=fsf_path, seed=seed)
        if fsf_path is not None:
            self.fsf_path = fsf_path
        setup = uci_setup(spec, variant, fsf_path or self.fsf_path)
        key = (setup.command, setup.ini)
        with self._lock:
            eng = self._engines.get(key)
            if eng is None or eng.closed:
                eng = self._engines[key] = _Engine(self, key, spec, setup)
            eng.users += 1
        player = PooledPlayer(self, eng, spec, variant, setup, priority)
        try:
            eng.ensure(spec, priority)
            if spec.level is not None and "Skill Level" not in eng.options:
                raise PlayerError(f"{spec}: {eng.name} has no Skill Level option")
        except BaseException:
            player.close()
            raise
        return player

    def _release(self, eng: _Engine) -> None:
        with self._lock:
            eng.users -= 1
            last = eng.users <= 0
            if last and self._engines.get(eng.key) is eng:
                del self._engines[eng.key]
        if last:
            eng.close()

    def notice(self, line: str) -> None:
        if self.on_notice is not None:
            try:
                self.on_notice(line)
            except Exception:
                pass

    def engines(self) -> list[_Engine]:
        with self._lock:
            return list(self._engines.values())

    def pids(self) -> list[int]:
        """The engine processes running now."""
        return [p for p in (e.pid() for e in self.engines()) if p is not None]

    def close(self) -> None:
        """Stop every engine (the service stops)."""
        with self._lock:
            engines = list(self._engines.values())
            self._engines.clear()
        for e in engines:
            e.close()


class PooledPlayer(Player):
    """A UCI player whose searches run on a pool's shared engine, at its priority."""

    def __init__(self, pool: EnginePool, engine: _Engine, spec: EngineSpec, variant: Variant, setup: UciSetup,
                 priority: int):
        self.spec = spec
        self.variant = variant
        self.pool = pool
        self.shared = engine
        self.priority = priority
        self.build = setup.build
        self.uci_variant = setup.uci_variant
        self._open = True

    @property
    def name(self) -> str:
        return self.shared.name

    def _search(self, game: Game, seconds: float, stop: Callable[[], bool] | None):
        if not self._open:
            raise PlayerError(f"{self.spec}: the engine was closed")
        return self.shared.search(self.spec, self.priority, game, seconds, self.spec.level, stop, self.uci_variant)

    def turn(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> list:
        import chess.engine
        try:
            move, info = self._search(game, seconds, stop)
        except _Stopped:
            return []
        except chess.engine.EngineError as exc:
            raise PlayerError(f"{self.spec}: {self.name}: {exc}") from None
        if move is None:
            raise PlayerError(f"{self.spec}: {self.name} found no move in {game.fen()}")
        self.last_info = info
        return [move]

    def evaluate(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> Evaluation:
        import chess.engine
        try:
            move, info = self._search(game, seconds, stop)
        except _Stopped:
            return Evaluation(0, None, (), 0)
        except chess.engine.EngineError as exc:
            raise PlayerError(f"{self.spec}: {self.name}: {exc}") from None
        return evaluation_of(info, move)

    def take_notices(self) -> list[str]:
        with self.shared.cv:
            out, self.shared.notices = self.shared.notices, []
        return out

    def close(self) -> None:
        if self._open:
            self._open = False
            self.pool._release(self.shared)


_SHARED: EnginePool | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> EnginePool:
    """This process's pool (a service serves one board)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = EnginePool()
            atexit.register(_SHARED.close)
        return _SHARED


def player(spec: EngineSpec | str, variant: Variant, *, priority: int, fsf_path: str | None = None,
           seed: int | None = None) -> Player:
    """:meth:`EnginePool.player` of this process's pool."""
    return shared().player(spec, variant, priority=priority, fsf_path=fsf_path, seed=seed)
