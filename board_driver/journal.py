"""Game records: an append-only journal per game, and the store that holds them.

A game is one file ``<data>/games/<id>.jsonl``, one JSON object per line:

``{"type": "game", "version": 1, "id": ..., "variant": ..., "start_fen": ..., "date": ..., "players": {...}}``
    the header, first line;
``{"type": "push", "ply": n, "action": "e2e4", "w": i}``
    an action was committed (``ply``: the history length after it; ``w``: the index of the
    first board event of the next position's window, so a resumed session sees the board
    exactly as before);
``{"type": "pop", "ply": n, "action": "e2e4", "why": "takeback" | "replaced"}``
    the last action was taken back;
``{"type": "event", "t": ms, "sq": "e2", "placed": false, "occ": "hex"}``
    a debounced board event (``occ``: the game-square occupancy after it, as hex);
``{"type": "players", "players": {"white": ..., "black": ...}}``
    the players' names changed (``play --resume ID --white NAME``);
``{"type": "computer", "computer": {"move_time": s}}``
    how the computer plays changed (``play --resume ID --move-time S``; the header's
    ``computer`` holds it from the start);
``{"type": "resign", "color": "white"}``, ``{"type": "result", "result": "1-0", "reason": ...}``
    the end of the game (a takeback after it removes the result: ``{"type": "reopen"}``);
``{"type": "draw", "by": "board-02"}``
    a draw agreed (a draw offer accepted; ``by``: the board whose player accepted or offered it,
    in a remote game); the result record follows, ``"reason": "agreement"``;
``{"type": "flag", "color": "white", "t": ms, "draw": false, "clk": [0, 41200]}``
    a flag fell (the result record follows, ``"reason": "time forfeit"``).

Under a time control (the header's ``"clock": {"tc": "300+3", "mode": "auto"}``; with time
odds ``"tc"`` holds both sides' controls, White's then Black's: ``"300+3,180+3"``) every
``push`` carries ``"clk": [w, b]`` (both times left after it, in ms), ``"clk0"`` (both times
just before it: what a takeback restores) and ``"n"`` (moves completed per side); every
``pop`` and ``result`` carries ``"clk"``; ``{"type": "clock", "op": "pause" | "start" |
"adjust" | "press", "clk": [w, b], "n": [..]}`` records the rest. A resume restores the clocks
of the last of these records, stopped until the next board event or ``clock start``.

Actions and results are written with ``fsync`` before the LEDs confirm them; board events
are written without, by the end of the step that saw them (in the same write as the action
they complete; they survive a killed process, and losing the last few in a power cut only
means the board is read afresh). A torn last line (a write cut short) is ignored and
cut off before the next append.

Each record type is a frozen dataclass of :mod:`board_driver.records` (:class:`~board_driver.records.Push`,
:class:`~board_driver.records.Pop`, ...), which writes exactly the object above; :meth:`Journal.write`
takes them (or a plain dict, written as it is). :func:`board_driver.records.fold` is the one reader
of a game's records: :func:`load_record` here, the resume, the club's store and its publisher fold
them with it.

Observers (:func:`add_observer`, for every journal or for one data folder's; ``on_record`` of a
:class:`Journal` or a :class:`GameStore`, for theirs) are told of each record once it is on disk (after the
``fsync`` that covers it): ``observer(game_id, seq, record)``, ``seq`` being the record's line
index in the file (the header is 0). They run on the writer's thread, so they must be quick;
an observer that raises is logged and ignored, never the journal.

The data folder is ``$FAIRYBOARD_DATA`` if set, else ``$XDG_DATA_HOME/fairyboard`` or
``~/.local/share/fairyboard``. ``<data>/current`` names the game ``fairyboard play`` resumes.
"""

from __future__ import annotations

import builtins
import errno
import json
import logging
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from board_driver.errors import BoardDriverError
from board_driver.records import VERSION, Header, Record, RecordError, as_dict, encode, fold, record_of

log = logging.getLogger(__name__)

# A game id: what GameStore.create makes (20250101-120000, 20250101-120000-2), or any name of
# letters, digits, '-' and '_' -- never a path, never '..'.
_GAME_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

OnRecord = Callable[[str, int, dict], None]


class JournalError(BoardDriverError, ValueError):
    """A game record is missing or unreadable, or a record could not be written."""


class DataFolderBusy(JournalError):
    """Another process holds the data folder's lock."""


_observers: list[tuple[OnRecord, Path | None]] = []
Writable = Record | Mapping[str, Any]     # a record, or the JSON object of one


def add_observer(fn: OnRecord, root: Path | None = None) -> None:
    """Call ``fn(game_id, seq, record)`` for every record of every journal once it is fsynced;
    with ``root``, only for the games of that data folder (``root/games/*.jsonl``)."""
    key = (fn, Path(root).resolve() if root is not None else None)
    if key not in _observers:
        _observers.append(key)


def remove_observer(fn: OnRecord) -> None:
    _observers[:] = [o for o in _observers if o[0] != fn]


def data_dir() -> Path:
    env = os.environ.get("FAIRYBOARD_DATA")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg) / "fairyboard"
    return Path.home() / ".local" / "share" / "fairyboard"


def check_game_id(game_id: str) -> str:
    """``game_id`` if it is a game id (letters, digits, ``-``, ``_``), else a JournalError."""
    if not isinstance(game_id, str) or not _GAME_ID.match(game_id):
        raise JournalError(f"{game_id!r} is not a game id (ids look like 20250101-120000; "
                           f"fairyboard games list shows them)")
    return game_id


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _is_record(raw: bytes) -> bool:
    try:
        rec = json.loads(raw)
    except ValueError:
        return False
    return isinstance(rec, dict) and "type" in rec


class Journal:
    """Appends records to one game's file, each whole or not at all.

    ``on_record(game_id, seq, record)`` (optional) is called once for every record this
    journal writes, after the record is durably on disk (after the ``fsync`` that covers it:
    at once for ``sync=True`` records, at the next :meth:`sync`, synced write or :meth:`close`
    for the others), in the order written. ``seq`` is the record's 0-based line index in the
    game's file (the header is 0). The callback runs in the writing thread; an exception it
    raises is logged and does not affect the journal.

    :meth:`write` loops over short writes; if the disk refuses the rest of a record, the part
    written is cut off again and :class:`JournalError` is raised, so a half record never stays
    in front of the next one (if even the cut fails, it is retried before the next write).
    """

    def __init__(self, path: Path, *, game_id: str | None = None, on_record: OnRecord | None = None):
        self.path = Path(path)
        self.game_id = game_id if game_id is not None else self.path.stem
        self.on_record = on_record
        lines = self._repair()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._size = os.fstat(self._fd).st_size
        self._count = lines                 # whole lines in the file: the next record's seq
        self._torn = False                  # a failed write could not be cut off yet
        self._unsynced: list[tuple[int, dict]] = []
        self._held: list[dict] = []          # written in front of the next write (see write)
        self._root: Path | None = None      # the data folder, for observers of one folder

    def _repair(self) -> int:
        """Make the file end with a whole line; returns the number of lines.

        A last line without its newline is kept (the newline is added) when it is a whole
        record -- it was replayed, so it must stay -- and cut off when it is a torn one."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0
        if not data or data.endswith(b"\n"):
            return data.count(b"\n")
        keep = data.rfind(b"\n") + 1
        with open(self.path, "rb+") as f:
            if _is_record(data[keep:]):
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
                lines = data.count(b"\n") + 1
            else:
                f.truncate(keep)
                lines = data.count(b"\n")
            f.flush()
            os.fsync(f.fileno())
        return lines

    def write(self, record: Writable, *, sync: bool, hold: bool = False) -> None:
        """Write one record. ``hold`` (with ``sync=False``): keep it until the next write or
        :meth:`flush`, which writes it in front of what follows -- one system call for a
        board event and the move it completes (the service flushes at the end of each step)."""
        if hold and not sync:
            if self._fd is None:
                raise JournalError(f"{self.path}: the journal is closed")
            self._held.append(as_dict(record))
            return
        self.write_all([record], sync=sync)

    def flush(self) -> None:
        """Write the held records (see :meth:`write`)."""
        if self._held:
            self.write_all([], sync=False)

    def write_all(self, records: Sequence[Writable], *, sync: bool) -> None:
        """Write ``records`` (after any held ones) together: all of them, or (JournalError)
        none -- the held ones are then kept for the next try."""
        if self._fd is None:
            raise JournalError(f"{self.path}: the journal is closed")
        records = self._held + [as_dict(r) for r in records]
        if not records:
            if sync:
                self.sync()
            return
        line = b"".join(encode(r) for r in records)     # one record per line, no spaces
        if self._torn:
            self._cut(self._size)
        done = 0
        try:
            while done < len(line):
                n = os.write(self._fd, line[done:])
                if not n:
                    raise OSError(errno.ENOSPC, "the disk took no more bytes")
                done += n
        except OSError as exc:
            if done:
                self._torn = True
                self._cut(self._size)
            raise JournalError(f"{self.path}: cannot write the game record "
                               f"({exc.strerror or exc}); it was not saved") from None
        self._size += len(line)
        self._held = []
        for record in records:
            self._unsynced.append((self._count, record))
            self._count += 1
        if sync:
            self.sync()

    def _cut(self, size: int) -> None:
        assert self._fd is not None     # only a write cuts, and it refuses a closed journal
        try:
            os.ftruncate(self._fd, size)
            self._torn = False
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot cut off a record half written "
                               f"({exc.strerror or exc})") from None

    def sync(self) -> None:
        if self._fd is None:
            return
        if self._held:
            self.flush()
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot save the game record ({exc.strerror or exc})") from None
        self._notify()

    def _notify(self) -> None:
        pending, self._unsynced = self._unsynced, []
        observers = [self.on_record] if self.on_record is not None else []
        if _observers:
            if self._root is None:
                self._root = self.path.resolve().parent.parent
            observers += [fn for fn, root in _observers if root is None or root == self._root]
        for fn in observers:
            for seq, record in pending:
                try:
                    fn(self.game_id, seq, record)
                except Exception:  # an observer never breaks the game record
                    log.exception("journal observer failed on %s record %d", self.game_id, seq)

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            self.flush()
            if self._unsynced:
                self.sync()
        finally:
            os.close(self._fd)
            self._fd = None


@dataclass
class GameRecord:
    """A game read back from its journal."""

    id: str
    path: Path
    header: dict
    actions: list[str] = field(default_factory=list)          # the game's actions, takebacks applied
    records: list[dict] = field(default_factory=list)         # every record after the header
    result: str | None = None
    reason: str | None = None
    action_lines: list[int] = field(default_factory=list)     # the line of each action's push record
    clocks: list[list[int] | None] = field(default_factory=list)   # per action: [white ms, black ms] after it
    damage: str | None = None       # why the file cannot be read whole ("<file>: line n: ...")

    @property
    def variant(self) -> str:
        return self.header.get("variant", "?")

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def status(self) -> str:
        """``damaged``, ``playing``, or the result (``abandoned`` for an abandoned game)."""
        if self.damage is not None:
            return "damaged"
        if self.result is None:
            return "playing"
        if self.result == "*":
            return self.reason or "abandoned"
        return self.result


MAX_RECORD = 64 * 1024      # bytes in one journal line: the longest real record is well under 1 KiB


def read_prefix(path: Path) -> tuple[list[dict], str | None]:
    """The whole records of a journal up to the first unreadable line, and what is wrong with
    that line (``"<file>: line n: ..."``) or None. A torn last line (a write cut short) is not
    damage: it is skipped."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return [], f"{path}: cannot read: {exc.strerror or exc}"
    out: list[dict] = []
    lines = data.split(b"\n")
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if len(raw) > MAX_RECORD:
            return out, f"{path}: line {n}: a record of {len(raw)} bytes (a journal record is at most {MAX_RECORD})"
        try:
            rec = json.loads(raw)
        except RecursionError:
            return out, f"{path}: line {n}: JSON nested too deeply to be a journal record"
        except ValueError:
            if n == len(lines):        # torn last line: a write cut short
                break
            return out, f"{path}: line {n}: not a JSON record: {raw[:60]!r}"
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            return out, f"{path}: line {n}: not a journal record: {raw[:60]!r}"
        out.append(rec)
    return out, None


def read_records(path: Path) -> list[dict]:
    """Every whole record of a journal (a torn last line is skipped); a damaged line is a
    JournalError naming the file and line."""
    recs, problem = read_prefix(path)
    if problem is not None:
        raise JournalError(problem)
    return recs


def line_numbers(path: Path) -> list[int]:
    """The 1-based line number of each non-blank line (the records read_prefix returns)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    return [n for n, raw in enumerate(data.split(b"\n"), 1) if raw.strip()]


def record_from(path: Path, recs: list[dict], damage: str | None = None, *,
                lines: list[int] | None = None) -> GameRecord:
    """A GameRecord from the records read (those before any damage), folded with
    :func:`board_driver.records.fold`; a record that is not one of its type (a move without its
    move, a board event that cannot be read, an unknown type) is damage, and the records before
    it are the game. ``lines`` are the records' 1-based line numbers (read from ``path`` when
    not given)."""
    if not recs or recs[0].get("type") != "game":
        header: dict = {}
        damage = damage or f"{path}: line 1: no game header" + ("" if recs else " (the file is empty)")
        body = recs
    else:
        header, body = recs[0], recs[1:]
    rec = GameRecord(str(header.get("id", Path(path).stem)), Path(path), header, records=list(body), damage=damage)
    lines = line_numbers(path) if lines is None else lines
    typed: list[Record] = []
    for i, r in enumerate(recs):
        try:
            typed.append(record_of(r))
        except RecordError as exc:
            rec.damage = rec.damage or f"{path}: line {_nth(lines, i)}: {exc}: {json.dumps(r)[:80]}"
            break
    f = fold(typed)
    rec.actions = f.actions
    rec.action_lines = [_nth(lines, i) for i in f.push_at]
    rec.clocks = [list(p.clk) if p.clk is not None else None for p in f.pushes]
    rec.result, rec.reason = f.result, f.reason
    if f.players is not None:
        rec.header = {**rec.header, "players": f.players}
    if f.computer is not None:
        rec.header = {**rec.header, "computer": f.computer}
    return rec


def _nth(lines: list[int], i: int) -> int:
    return lines[i] if 0 <= i < len(lines) else i + 1


def load_record(path: Path) -> GameRecord:
    """The game in a journal; a damaged journal is a JournalError naming the file and line."""
    recs, problem = read_prefix(path)
    rec = record_from(path, recs, problem)
    if rec.damage is not None:
        raise JournalError(rec.damage)
    return rec


def load_any(path: Path) -> GameRecord:
    """The game in a journal, damaged or not (``damage`` says what is wrong, the rest is the
    readable part)."""
    recs, problem = read_prefix(path)
    return record_from(path, recs, problem)


class DataLock:
    """The data folder's lock (``<data>/lock``, an ``flock``): one process plays from a data
    folder at a time. The file names the holder (pid and command) for the next one to say."""

    def __init__(self, root: Path, what: str):
        import fcntl
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / "lock"
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = ""
            try:
                holder = os.pread(self._fd, 200, 0).decode("utf-8", "replace").strip()
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None
            pid, _, cmd = holder.partition(" ")
            who = f"process {pid} ({cmd})" if pid.isdigit() else "another process"
            raise DataFolderBusy(f"the data folder {root} is in use by {who}: stop it first, or give this "
                                 f"one its own folder with FAIRYBOARD_DATA=DIR") from None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()} {what}\n".encode(), 0)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)          # closing drops the flock
            self._fd = None

    def __enter__(self) -> DataLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class GameStore:
    """The folder of game records.

    ``on_record`` is passed to every :class:`Journal` the store opens (see there).
    :attr:`problems` collects what was found damaged (``current`` unreadable ...), one line
    each, for the caller to log."""

    def __init__(self, root: Path | None = None, *, on_record: OnRecord | None = None):
        self.root = Path(root) if root is not None else data_dir()
        self.games = self.root / "games"
        self.on_record = on_record
        self.problems: list[str] = []

    def _ensure(self) -> None:
        self.games.mkdir(parents=True, exist_ok=True)

    def path(self, game_id: str) -> Path:
        return self.games / f"{check_game_id(game_id)}.jsonl"

    def lock(self, what: str = "fairyboard") -> DataLock:
        """Take the data folder's lock (DataFolderBusy, naming the holder, if another has it)."""
        return DataLock(self.root, what)

    def create(self, variant: str, start_fen: str, *, players: dict[str, str] | None = None,
               now: datetime | None = None, extra: dict | None = None,
               current: bool = False, game_id: str | None = None) -> tuple[str, Journal]:
        """A new game record; returns its id and an open journal with the header written.

        The header is written and synced under a temporary name, ``current`` is pointed at
        the game (when ``current``), and only then the file gets its name: a process killed
        on the way leaves no empty game behind."""
        self._ensure()
        now = now or datetime.now().astimezone()
        stem = now.strftime("%Y%m%d-%H%M%S")
        n = 1
        wanted = game_id
        game_id = check_game_id(wanted) if wanted else stem
        while True:
            tmp = self.games / f".{game_id}.jsonl.new"
            if not self.path(game_id).exists():
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                    break
                except FileExistsError:
                    pass
            if wanted:
                raise JournalError(f"a game {wanted!r} exists already in {self.games}")
            n += 1
            game_id = f"{stem}-{n}"
        header = Header(id=game_id, variant=variant, start_fen=start_fen, date=now.isoformat(timespec="seconds"),
                        players=dict(players or {"white": "White", "black": "Black"}), version=VERSION,
                        extra=dict(extra or {})).to_dict()
        try:
            data = encode(header)
            done = 0
            while done < len(data):
                k = os.write(fd, data[done:])
                if not k:
                    raise OSError(errno.ENOSPC, "the disk took no more bytes")
                done += k
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise JournalError(f"{self.games}: cannot create a game record ({exc.strerror or exc})") from None
        os.close(fd)
        if current:
            self.set_current(game_id)
        os.replace(tmp, self.path(game_id))
        _fsync_dir(self.games)
        journal = Journal(self.path(game_id), game_id=game_id, on_record=self.on_record)
        journal._unsynced.append((0, header))
        journal._notify()
        return game_id, journal

    def open(self, game_id: str) -> Journal:
        p = self.path(game_id)
        if not p.exists():
            raise JournalError(f"no game {game_id!r} in {self.games}")
        return Journal(p, game_id=game_id, on_record=self.on_record)

    def load(self, game_id: str) -> GameRecord:
        p = self.path(game_id)
        if not p.exists():
            known = ", ".join(self.ids()[-5:]) or "none yet"
            raise JournalError(f"no game {game_id!r} in {self.games} (latest: {known})")
        return load_record(p)

    def ids(self) -> list[str]:
        if not self.games.is_dir():
            return []
        return sorted(p.stem for p in self.games.glob("*.jsonl")
                      if _GAME_ID.match(p.stem))

    def list(self) -> list[GameRecord]:
        """Every game, damaged ones too (``status`` ``damaged``, ``damage`` says why)."""
        return [load_any(self.path(gid)) for gid in self.ids()]

    # -- the game in progress -------------------------------------------------------------------
    def remove_orphans(self) -> "builtins.list[Path]":
        """Remove the ``.ID.jsonl.new`` files a process killed inside :meth:`create` left (the
        game never got its name, so nothing refers to them). Call it holding the data lock."""
        removed: builtins.list[Path] = []
        if self.games.is_dir():
            for p in sorted(self.games.glob(".*.jsonl.new")):
                try:
                    p.unlink()
                    removed.append(p)
                except OSError:
                    pass
        return removed

    def current(self) -> str | None:
        """The game ``current`` names, if it names one; an unreadable pointer is noted in
        :attr:`problems` and counts as none."""
        target = self.root / "current"
        if target.is_dir():
            self._problem(f"{target}: a directory, not the game pointer; it is left as it is and no game is "
                          f"resumed from it (remove it to let play resume games)")
            return None
        try:
            raw = target.read_bytes()
        except OSError:
            return None
        try:
            gid = raw.decode("utf-8").strip()
            check_game_id(gid)
        except (UnicodeDecodeError, JournalError):
            self._problem(f"{target}: not a game id ({raw[:40]!r}); no game is resumed from it")
            return None
        return gid if self.path(gid).exists() else None

    def _problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)

    def set_current(self, game_id: str | None) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.root / "current"
        if target.is_dir():
            self.current()              # names it in problems; a directory is never written over
            return
        if game_id is None:
            try:
                target.unlink()
            except FileNotFoundError:
                pass
            return
        check_game_id(game_id)
        tmp = self.root / "current.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(game_id + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        _fsync_dir(self.root)
