"""Computer players: the built-in search, a random mover and UCI engines.

An engine spec names a player, the same everywhere (``play --black``, ``serve``, ``match``,
the page)::

    builtin          the built-in search (engine/search.py), full strength
    builtin:LEVEL    the same, at most LEVEL turns deep (1-20)
    random           a uniformly random legal action (a whole turn of them)
    fsf              Fairy-Stockfish, loaded with the variant's exported variants.ini: the
                     first native binary that loads the variant (a configured one, the one
                     ``fairyboard install-engine`` built, the distribution's), else the
                     WebAssembly build under node (fsf_wasm/, ``install-engine --wasm``)
    fsf:SKILL        the same at its Skill Level SKILL (-20..20)
    uci:COMMAND      any UCI engine started with COMMAND (orthodox chess, or any variant
                     Fairy-Stockfish can express when the engine takes a VariantPath)

More kinds can be added with :func:`register_kind` (the benchmarks' ``builtin-old``, the search
of another copy of engine/search.py: tests/bench/old_search.py).

A player answers :meth:`Player.turn` with the actions of its whole turn, each legal after the
ones before it (a csipgs action and its design phase, every move of a Cost Progressive turn).
``turn(game, seconds, stop=...)`` may be given a ``stop()`` callable: when it answers True the
answer is no longer wanted (the game changed while the computer thought in the background, see
:mod:`.computer`), and the built-in search ends at its next clock check; the other players
answer within their time anyway. UCI engines run as child processes through python-chess's
``chess.engine``.
"""

from __future__ import annotations

import math
import os
import random
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from board_driver.errors import BoardDriverError
from engine.errors import EngineError
from engine.search import Searcher, level_depth, random_turn

if TYPE_CHECKING:
    import chess.engine

    from engine.contract import Game
    from engine.variant import Variant

FSF_DEFAULT = "/usr/games/fairy-stockfish"
WASM_DIR = Path(__file__).resolve().parent / "fsf_wasm"   # the node launcher and its package.json
WASM_PACKAGE = "fairy-stockfish-nnue.wasm"
KINDS = ("builtin", "random", "fsf", "uci")


class PlayerError(BoardDriverError, ValueError):
    """An engine spec is wrong, or the engine cannot play this variant or stopped working."""


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """A parsed engine spec (see the module docstring)."""

    kind: str                   # builtin | random | fsf | uci
    level: int | None = None    # builtin: depth cap; fsf: skill level
    command: str = ""           # uci: the command line

    @property
    def text(self) -> str:
        if self.kind == "uci":
            return f"uci:{self.command}"
        return self.kind if self.level is None else f"{self.kind}:{self.level}"

    def __str__(self) -> str:
        return self.text


def parse_spec(text: str) -> EngineSpec:
    """``builtin``, ``builtin:4``, ``random``, ``fsf``, ``fsf:5``, ``uci:stockfish``;
    ``computer`` is ``builtin``. PlayerError says what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise PlayerError("empty engine spec (use builtin, builtin:LEVEL, random, fsf, fsf:SKILL or uci:COMMAND)")
    t = text.strip()
    kind, sep, arg = t.partition(":")
    kind = kind.lower()
    if kind == "computer" and not sep:
        return EngineSpec("builtin")
    if kind == "uci":
        if not arg.strip():
            raise PlayerError(f"engine spec {text!r}: uci needs a command, e.g. uci:stockfish")
        return EngineSpec("uci", None, arg.strip())
    if kind not in KINDS and kind not in _REGISTERED:
        raise PlayerError(f"engine spec {text!r}: unknown engine {kind!r} "
                          "(use builtin, builtin:LEVEL, random, fsf, fsf:SKILL or uci:COMMAND)")
    if not sep:
        return EngineSpec(kind)
    if kind == "random":
        raise PlayerError(f"engine spec {text!r}: random takes no level")
    try:
        level = int(arg)
    except ValueError:
        raise PlayerError(f"engine spec {text!r}: the level {arg!r} is not a whole number") from None
    if _builtin_levels(kind) and not 1 <= level <= 20:
        raise PlayerError(f"engine spec {text!r}: builtin levels are 1 to 20 (turns searched)")
    if kind == "fsf" and not -20 <= level <= 20:
        raise PlayerError(f"engine spec {text!r}: Fairy-Stockfish skill levels are -20 to 20")
    return EngineSpec(kind, level)


PAGE_LEVELS = (1, 2, 3)         # the built-in levels a player picks from on the page, weakest first
_TURNS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def describe_spec(spec: EngineSpec | str) -> str:
    """What an engine spec means to a player choosing an opponent, short enough for a phone's
    menu: ``level 2: looks two turns ahead``, ``full strength: uses all its time`` (the levels
    are measured against each other in docs/board-driver.md, *Strength*)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if _builtin_levels(spec.kind):
        if spec.level is None:
            return "full strength: uses all its time"
        n = _TURNS.get(spec.level, str(spec.level))
        return f"level {spec.level}: looks {n} turn{'s' if spec.level > 1 else ''} ahead"
    if spec.kind == "random":
        return "random moves: for a first game"
    if spec.kind == "fsf":
        return "Fairy-Stockfish, full strength" if spec.level is None else f"Fairy-Stockfish, skill {spec.level}"
    return f"the UCI engine {spec.command}"


def engine_title(spec: EngineSpec | str) -> str:
    """The computer as a game record names it (the PGN's ``White``/``Black``): its engine and
    level, ``fairyboard builtin level 1``, ``fairyboard builtin`` (full strength),
    ``fairyboard random``, ``Fairy-Stockfish level 5``, ``Fairy-Stockfish``, or a UCI engine's
    command (``stockfish``)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if spec.kind == "uci":
        return spec.command
    name = "Fairy-Stockfish" if spec.kind == "fsf" else f"fairyboard {spec.kind}"
    return name if spec.level is None else f"{name} level {spec.level}"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """An engine's verdict on a position: its score for the side to move and its best turn."""

    cp: int                     # centipawns for the side to move (a mate: +-MATE_CP less its plies)
    mate: int | None            # plies to a mate for the side to move (negative: it is mated), or None
    best: tuple                 # the actions of the best turn (may be empty)
    depth: int = 0


MATE_CP = 100000                # what a mate is worth in an Evaluation's centipawns


class Player:
    """The interface of every computer player."""

    spec: EngineSpec
    last_score: int = 0         # the built-in search's figures of its last turn
    last_nodes: int = 0
    last_depth: int = 0
    last_seconds: float = 0.0

    def turn(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> list:
        raise NotImplementedError

    def evaluate(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> Evaluation:
        """The score of ``game``'s position (not over) and the best turn found in ``seconds``
        (PlayerError where the player cannot judge: the random mover). ``stop``: as for
        :meth:`turn` (the answer is no longer wanted)."""
        raise PlayerError(f"{self.spec}: this player does not evaluate positions")

    def take_notices(self) -> list[str]:
        """What happened to the engine that the player should be told, once (an engine that
        stopped and was started again: :mod:`.engine_pool`)."""
        return []

    def close(self) -> None:
        """Stop the engine's process, if any."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class PlayerKind:
    """A kind of player added with :func:`register_kind`: how to make one for a spec and a
    variant, and why it cannot play one (None: it can)."""

    make: Callable[..., Player]             # (spec, variant, *, clock) -> Player
    why_not: Callable[[EngineSpec, object], str | None]
    builtin_levels: bool = False            # its levels are the built-in search's (1-20 turns)


_REGISTERED: dict[str, PlayerKind] = {}


def _builtin_levels(kind: str) -> bool:
    """The kind's levels are the built-in search's turns (1-20)."""
    k = _REGISTERED.get(kind)
    return kind == "builtin" or (k is not None and k.builtin_levels)


def register_kind(name: str, kind: PlayerKind) -> None:
    """Let engine specs name ``name`` (``name`` or ``name:LEVEL``) from now on."""
    _REGISTERED[name.lower()] = kind


class BuiltinPlayer(Player):
    def __init__(self, spec: EngineSpec, *, clock=time.monotonic, search=None):
        """``search``: a module with the search's ``Searcher`` and ``level_depth`` (default
        engine.search; the benchmarks give another copy of it)."""
        self.spec = spec
        self.depth = (search.level_depth if search is not None else level_depth)(spec.level)
        self.clock = clock
        self.searcher = search.Searcher() if search is not None else Searcher()
        self.total_nodes = 0
        self.total_seconds = 0.0

    def turn(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> list:
        clock, start = self.clock, None
        if stop is not None:
            # a stopped search sees its time run out at its next clock check
            clock, start = (lambda: math.inf if stop() else self.clock()), self.clock()
        r = self.searcher.choose(game, clock=clock, seconds=seconds, depth=self.depth)
        spent = r.seconds if start is None or math.isfinite(r.seconds) else self.clock() - start
        self.last_nodes, self.last_depth, self.last_seconds = r.nodes, r.depth, spent
        self.total_nodes += r.nodes
        self.total_seconds += spent
        self.last_score = r.score
        return list(r.actions)

    def evaluate(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> Evaluation:
        from engine.search import MATE, MATE_BOUND
        actions = self.turn(game, seconds, stop=stop)
        s = self.last_score
        if abs(s) >= MATE_BOUND:
            plies = MATE - abs(s)
            return Evaluation(MATE_CP - plies if s > 0 else plies - MATE_CP, plies if s > 0 else -plies,
                              tuple(actions), self.last_depth)
        return Evaluation(s, None, tuple(actions), self.last_depth)


class RandomPlayer(Player):
    def __init__(self, spec: EngineSpec, *, seed: int | None = None):
        self.spec = spec
        self.rng = random.Random(seed)

    def turn(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> list:
        return random_turn(game, self.rng)


def installed_native() -> Path | None:
    """The native Fairy-Stockfish ``fairyboard install-engine`` installed in the data folder for
    this machine's arch (DATA/engines/fairy-stockfish-VERSION-ARCH: the pinned version, else the
    newest), or None."""
    from board_driver.journal import data_dir
    from board_driver.opponents import native_build
    try:
        arch = native_build.machine_arch()
    except native_build.NativeBuildError:
        return None
    folder = data_dir() / "engines"
    pinned = folder / f"{native_build.BINARY}-{native_build.PYFFISH_VERSION}-{arch}"
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return pinned
    try:
        others = [f for f in folder.glob(f"{native_build.BINARY}-*-{arch}") if f.is_file() and os.access(f, os.X_OK)]
    except OSError:
        return None
    return max(others, key=lambda f: f.stat().st_mtime) if others else None


def fsf_candidates(configured: str | None = None) -> list[str]:
    """Every Fairy-Stockfish binary ``fsf`` may use, in the order it tries them: ``configured``
    (a profile's path), ``$FAIRYBOARD_FSF``, the native build installed in the data folder
    (:func:`installed_native`), then the distribution's: ``fairy-stockfish`` on PATH, else
    /usr/games/fairy-stockfish."""
    out = [c for c in (configured, os.environ.get("FAIRYBOARD_FSF")) if c]
    native = installed_native()
    if native is not None:
        out.append(str(native))
    found = shutil.which("fairy-stockfish") or (FSF_DEFAULT if os.access(FSF_DEFAULT, os.X_OK) else None)
    if found:
        out.append(found)
    return list(dict.fromkeys(out))


def find_fairy_stockfish(configured: str | None = None) -> str | None:
    """The first Fairy-Stockfish binary of :func:`fsf_candidates`; None when there is none."""
    found = fsf_candidates(configured)
    return found[0] if found else None


def wasm_dirs() -> list[Path]:
    """Where ``fairyboard install-engine`` may have put the WebAssembly build's node_modules,
    in the order they are looked in: ``$FAIRYBOARD_FSF_WASM``, the launcher's own folder, the
    data folder's ``fsf-wasm``."""
    from board_driver.journal import data_dir
    dirs = [Path(d) for d in (os.environ.get("FAIRYBOARD_FSF_WASM"),) if d]
    return dirs + [WASM_DIR, data_dir() / "fsf-wasm"]


def find_fsf_wasm() -> list[str] | str:
    """The command that runs Fairy-Stockfish's WebAssembly build as a UCI engine
    (``node .../fsf_wasm/uci.mjs --module DIR``), or why there is none."""
    configured = os.environ.get("FAIRYBOARD_NODE")
    node = shutil.which(configured) if configured else shutil.which("node") or shutil.which("nodejs")
    if not node:
        return (f"node is not installed (apt install nodejs{'; $FAIRYBOARD_NODE names ' + configured if configured else ''}),"
                " so the WebAssembly Fairy-Stockfish cannot run")
    for d in wasm_dirs():
        module = d / "node_modules" / WASM_PACKAGE
        if (module / "stockfish.js").is_file() and (module / "stockfish.wasm").is_file():
            return [node, str(WASM_DIR / "uci.mjs"), "--module", str(module)]
    return "the WebAssembly Fairy-Stockfish is not installed (fairyboard install-engine --wasm)"


_VERSIONS: dict[str, int | None] = {}


def native_version(path: str) -> int | None:
    """The major version a Fairy-Stockfish binary greets with (``Fairy-Stockfish 11.1 LB64``:
    11), None when it says none; asked once a path."""
    import re
    import subprocess
    if path not in _VERSIONS:
        try:
            r = subprocess.run([path], input="quit\n", capture_output=True, text=True, timeout=10)
            m = re.search(r"Fairy-Stockfish (\d+)", r.stdout)
            _VERSIONS[path] = int(m.group(1)) if m else None
        except (OSError, subprocess.SubprocessError):
            _VERSIONS[path] = None
    return _VERSIONS[path]


def fsf_command(variant: Variant, configured: str | None = None) -> tuple[list[str], str] | str:
    """The Fairy-Stockfish that plays ``variant``: (command, ``native`` or ``wasm``), or why
    none can. The first binary of :func:`fsf_candidates` that loads the variant (orthodox
    chess, a version 12 or later, or a version 11 whose built-in pieces stand in for every
    custom one), else the WebAssembly build under node."""
    from engine import fsf
    ini = None
    if not _is_orthodox(variant):
        try:
            ini = fsf.variants_ini(variant)
        except EngineError as exc:
            return str(exc)
    why_native = "Fairy-Stockfish is not installed"
    for n, path in enumerate(fsf_candidates(configured)):
        version = native_version(path)
        if ini is None or (version is not None and version >= 12):
            return [path], "native"
        try:
            legacy_ini(ini, f"Fairy-Stockfish {version}")
            return [path], "native"
        except PlayerError as exc:
            if n == 0:
                why_native = str(exc)
    wasm = find_fsf_wasm()
    if isinstance(wasm, str):
        return f"{why_native}; {wasm}; fairyboard install-engine builds a native one that loads every variant"
    return wasm, "wasm"


def fsf_path_from_profile(data, source: str = "<board>") -> str | None:
    """The Fairy-Stockfish path a board profile names (``engines: {fsf: PATH}``), or None;
    a malformed section is a PlayerError naming the file and key."""
    engines = data.get("engines") if hasattr(data, "get") else None
    if engines is None:
        return None
    if not hasattr(engines, "get") or set(engines) - {"fsf"}:
        raise PlayerError(f"{source}: engines: {engines!r}: use a mapping such as {{fsf: /usr/games/fairy-stockfish}}")
    path = engines.get("fsf")
    if path is not None and (not isinstance(path, str) or not path):
        raise PlayerError(f"{source}: engines.fsf: {path!r}: must be the path of the engine")
    return path


class _Position:
    """What python-chess's UCI protocol needs of a board, for a position of any size: the FEN
    to send and the legal moves to check the engine's answer against."""

    uci_variant = "chess"
    chess960 = False
    move_stack: list = []

    def __init__(self, fen: str, legal: dict, variant: str | None):
        self.fen_text = fen
        self.legal = legal          # lower-case text -> action text
        self.variant = variant

    def root(self):
        return self

    def copy(self, stack=False):
        return self

    def fen(self, **kwargs) -> str:
        return self.fen_text

    def push_uci(self, text: str) -> str:
        found = self.legal.get(text.lower())
        if found is None:
            raise ValueError(f"the engine answered {text!r}, which is not a legal move here")
        return found

    def parse_uci(self, text: str) -> str:
        return text

    def pop(self) -> None:
        return None

    @property
    def turn(self) -> bool:
        return " b " not in self.fen_text


def _protocol():
    import chess.engine

    class VariantUci(chess.engine.UciProtocol):
        """UCI with Fairy-Stockfish's variants: the position is sent as the engine's FEN of any
        board size (python-chess's boards are 8x8), UCI_Variant named as the variants.ini does."""

        def _position(self, board: _Position) -> None:   # type: ignore[override]  # noqa: D401 (python-chess's hook, given our _Position)
            if board.variant:
                self.send_line(f"setoption name UCI_Variant value {board.variant}")
            self.send_line(f"position fen {board.fen()}")
            self.board = board  # type: ignore[assignment]

    return VariantUci


@dataclass(frozen=True)
class UciSetup:
    """What starting a UCI engine for a spec and a variant takes, checked before any process
    starts: the command, the build (``native`` or ``wasm`` for fsf, else ``uci``), the
    UCI_Variant to name and the variants.ini to load (None: orthodox chess, nothing to load)."""

    command: tuple[str, ...]
    build: str
    uci_variant: str | None
    ini: str | None


def uci_setup(spec: EngineSpec, variant: Variant, fsf_path: str | None = None) -> UciSetup:
    """The :class:`UciSetup` of a UCI spec (fsf or uci:COMMAND) for ``variant``, or a
    PlayerError saying why it cannot play it."""
    from engine import fsf
    if variant.family != "chess":
        raise PlayerError(f"{spec}: UCI engines play chess-family variants; {variant.name!r} is "
                          f"{variant.family} (use builtin or random)")
    build = "uci"
    if spec.kind == "fsf":
        found = fsf_command(variant, fsf_path)
        if isinstance(found, str):
            raise PlayerError(f"{spec}: {found} (apt install fairy-stockfish, or name its path in "
                              "the board profile or $FAIRYBOARD_FSF; fairyboard install-engine for "
                              "the variants it cannot load)")
        command, build = found
    else:
        command = shlex.split(spec.command)
    uci_variant: str | None = None
    ini = None
    if not _is_orthodox(variant) or spec.kind == "fsf":
        if not fsf.expressible(variant):
            try:
                fsf.variants_ini(variant)
            except EngineError as exc:
                raise PlayerError(f"{spec}: {exc}") from None
        ini = fsf.variants_ini(variant)
        uci_variant = fsf.fsf_name(variant.name)
    return UciSetup(tuple(command), build, uci_variant, ini)


def start_uci(spec: EngineSpec, setup: UciSetup, options: dict | None = None):
    """Start the engine ``setup`` names and load its variants: (python-chess's SimpleEngine,
    the engine's name, the temporary folder of its variants.ini or None). ``options``: set
    where the engine has them (Hash, Threads). A PlayerError says why it cannot start."""
    import chess.engine
    command = list(setup.command)
    try:
        engine = chess.engine.SimpleEngine.popen(_protocol(), command, timeout=20)
    except (OSError, ValueError) as exc:
        raise PlayerError(f"{spec}: cannot start {' '.join(command)!r}: {exc}") from None
    except Exception as exc:   # chess.engine.EngineError, asyncio timeouts
        raise PlayerError(f"{spec}: {' '.join(command)!r} does not speak UCI: {exc}") from None
    name = engine.id.get("name", command[0])
    folder = None
    try:
        if setup.ini is not None:
            ini = setup.ini
            if _legacy(name):
                ini = legacy_ini(ini, f"{spec}: {name}")
            if "VariantPath" not in engine.options:
                raise PlayerError(f"{spec}: {name} cannot load variants (no VariantPath option); "
                                  f"it plays orthodox chess only")
            folder = tempfile.mkdtemp(prefix="fairyboard-fsf-")
            p = Path(folder) / "variants.ini"
            p.write_text(ini, encoding="utf-8")
            engine.configure({"VariantPath": str(p)})
        wanted = {k: v for k, v in (options or {}).items() if k in engine.options}
        if wanted:
            engine.configure(wanted)
    except BaseException as exc:
        quit_engine(engine)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, PlayerError) or not isinstance(exc, Exception):
            raise
        raise PlayerError(f"{spec}: {name} refused the options: {exc}") from None
    return engine, name, folder


def quit_engine(engine) -> None:
    """Ask the engine to quit (closing it where it does not answer)."""
    try:
        engine.quit()
    except Exception:
        try:
            engine.close()
        except Exception:
            pass


def evaluation_of(info: Mapping[str, Any], move) -> Evaluation:
    """An Evaluation from a UCI search's info (score, depth) and its best move (None: none)."""
    score = info.get("score")
    best = (move,) if move is not None else ()
    depth = int(info.get("depth", 0) or 0)
    if score is None:
        return Evaluation(0, None, best, depth)
    rel = score.relative
    mate = rel.mate()
    if mate is not None:
        # UCI counts moves; ours are plies (a mate in 1 move is 1 ply, in 2 moves 3 plies)
        plies = 2 * abs(mate) - 1 if mate > 0 else 2 * abs(mate)
        return Evaluation(MATE_CP - plies if mate > 0 else plies - MATE_CP, plies if mate > 0 else -plies,
                          best, depth)
    return Evaluation(int(rel.score() or 0), None, best, depth)


def position_of(game: Game, uci_variant: str | None) -> _Position:
    """What the UCI protocol is given for ``game``'s position."""
    return _Position(game.fen(), {a.text.lower(): a for a in game.legal_actions()}, uci_variant)


class UciPlayer(Player):
    """A UCI engine of its own through python-chess's ``chess.engine`` (see
    :mod:`.engine_pool` for the engine a board's computer, hint and evaluations share)."""

    def __init__(self, spec: EngineSpec, variant: Variant, *, fsf_path: str | None = None):
        self.spec = spec
        self.variant = variant
        self._dir: str | None = None
        setup = uci_setup(spec, variant, fsf_path)
        self.build = setup.build    # fsf: native or wasm
        self.uci_variant = setup.uci_variant
        engine, self.name, self._dir = start_uci(spec, setup)
        self.engine: chess.engine.SimpleEngine | None = engine      # None once closed
        try:
            if spec.level is not None:
                if "Skill Level" not in engine.options:
                    raise PlayerError(f"{spec}: {self.name} has no Skill Level option")
                engine.configure({"Skill Level": spec.level})
        except PlayerError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise PlayerError(f"{spec}: {self.name} refused the options: {exc}") from None

    def turn(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> list:
        import chess.engine
        pos = position_of(game, self.uci_variant)
        assert self.engine is not None, "the engine was closed"
        try:
            # _Position offers the engine what it reads of a chess.Board (FEN, moves, variant)
            limit = chess.engine.Limit(time=max(0.01, seconds * 0.9))
            result = self.engine.play(pos, limit)  # type: ignore[arg-type]
        except chess.engine.EngineTerminatedError as exc:
            raise PlayerError(f"{self.spec}: {self.name} stopped in {game.fen()}: {exc}") from None
        except chess.engine.EngineError as exc:
            raise PlayerError(f"{self.spec}: {self.name}: {exc}") from None
        if result.move is None:
            raise PlayerError(f"{self.spec}: {self.name} found no move in {game.fen()}")
        self.last_info = result.info
        return [result.move]

    def evaluate(self, game: Game, seconds: float, *, stop: Callable[[], bool] | None = None) -> Evaluation:
        import chess.engine
        pos = position_of(game, self.uci_variant)
        assert self.engine is not None, "the engine was closed"
        try:
            result = self.engine.play(pos, chess.engine.Limit(time=max(0.01, seconds * 0.9)),  # type: ignore[arg-type]
                                      info=chess.engine.INFO_SCORE)
        except chess.engine.EngineError as exc:
            raise PlayerError(f"{self.spec}: {self.name}: {exc}") from None
        return evaluation_of(result.info, result.move)

    def close(self) -> None:
        eng = getattr(self, "engine", None)
        if eng is not None:
            quit_engine(eng)
            self.engine = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


# Fairy-Stockfish before version 12 reads no customPiece lines (it silently drops their
# pieces from every FEN); its built-in pieces stand in for the Betza moves they have.
_LEGACY_PIECES = {
    "A": "alfil", "F": "fers", "W": "wazir", "K": "commoner", "BN": "archbishop", "NB": "archbishop",
    "RN": "chancellor", "NR": "chancellor", "QN": "amazon", "NQ": "amazon", "mRcpR": "cannon",
    "KN": "centaur", "NK": "centaur", "B": "bishop", "R": "rook", "N": "knight", "Q": "queen",
}
_LEGACY_NAMES = set(_LEGACY_PIECES.values()) | {"king", "pawn"}


def _legacy(name: str) -> bool:
    import re
    m = re.match(r"Fairy-Stockfish (\d+)", name)
    return m is not None and int(m.group(1)) < 12


def legacy_ini(ini: str, who: str = "Fairy-Stockfish") -> str:
    """The variants.ini section with every ``customPieceN = x:BETZA`` replaced by the built-in
    piece of the same moves (``x:BN`` -> ``archbishop = x``), for Fairy-Stockfish 11; a
    PlayerError names the pieces that have no built-in twin."""
    lines = ini.splitlines()
    assigned = {}
    for ln in lines:
        name, eq, value = (x.strip() for x in ln.partition("="))
        if eq and name in _LEGACY_NAMES and value != "-":
            assigned[name] = value
    out, missing = [], []
    for ln in lines:
        name, eq, value = (x.strip() for x in ln.partition("="))
        if eq and name.startswith("customPiece"):
            letter, _, betza = value.partition(":")
            builtin = _LEGACY_PIECES.get(betza)
            if builtin is None or builtin in assigned:
                missing.append(f"{letter} ({betza})")
                continue
            assigned[builtin] = letter
            out.append(f"{builtin} = {letter}")
            continue
        out.append(ln)
    if missing:
        raise PlayerError(f"{who} knows no custom pieces (version 12 and later do): "
                          f"{', '.join(missing)} cannot be played; install a newer Fairy-Stockfish")
    return "\n".join(ln for ln in out
                     if not (ln.partition("=")[0].strip() in assigned and ln.partition("=")[2].strip() == "-")) + "\n"


def _is_orthodox(variant: Variant) -> bool:
    from engine.game import new_game
    g = variant.geometry
    if variant.family != "chess" or g.files != 8 or g.ranks != 8 or g.holes:
        return False
    try:
        start = new_game(variant).fen()
    except EngineError:
        return False
    return start.split()[0] == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR" and \
        {p.name for p in variant.pieces} == {"king", "queen", "rook", "bishop", "knight", "pawn"}


def make_player(spec: EngineSpec | str, variant: Variant, *, fsf_path: str | None = None, seed: int | None = None,
                clock=time.monotonic) -> Player:
    """A player for ``variant`` (PlayerError when the engine cannot play it)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if spec.kind == "builtin":
        return BuiltinPlayer(spec, clock=clock)
    if spec.kind in _REGISTERED:
        return _REGISTERED[spec.kind].make(spec, variant, clock=clock)
    if spec.kind == "random":
        return RandomPlayer(spec, seed=seed)
    return UciPlayer(spec, variant, fsf_path=fsf_path)


def can_play(spec: EngineSpec | str, variant: Variant) -> str | None:
    """Why ``spec`` cannot play ``variant`` (without starting it), or None."""
    from engine import fsf
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if spec.kind in ("builtin", "random"):
        return None
    if spec.kind in _REGISTERED:
        return _REGISTERED[spec.kind].why_not(spec, variant)
    if variant.family != "chess":
        return f"UCI engines play chess-family variants; {variant.name!r} is {variant.family}"
    if spec.kind == "fsf":
        found = fsf_command(variant)
        return found if isinstance(found, str) else None
    if not fsf.expressible(variant) and not (spec.kind == "uci" and _is_orthodox(variant)):
        try:
            fsf.variants_ini(variant)
        except EngineError as exc:
            return str(exc)
    return None
