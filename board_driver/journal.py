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
``{"type": "resign", "color": "white"}``, ``{"type": "result", "result": "1-0", "reason": ...}``
    the end of the game (a takeback after it removes the result: ``{"type": "reopen"}``).

Actions and results are written with ``fsync`` before the LEDs confirm them; board events
are written without (they survive a killed process, and losing the last few in a power cut
only means the board is read afresh). A torn last line (a write cut short) is ignored and
cut off before the next append.

Observers (:func:`add_observer`) are told of each record once it is on disk (after the
``fsync`` that covers it): ``observer(game_id, seq, record)``, ``seq`` being the record's line
index in the file (the header is 0). They run on the writer's thread, so they must be quick
(the club publisher only notes the number and wakes its own thread); an observer that raises
is ignored, never the journal.

The data folder is ``$FAIRYBOARD_DATA`` if set, else ``$XDG_DATA_HOME/fairyboard`` or
``~/.local/share/fairyboard``. ``<data>/current`` names the game ``fairyboard play`` resumes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from .errors import BoardDriverError

VERSION = 1


class JournalError(BoardDriverError, ValueError):
    """A game record is missing or unreadable."""


Observer = Callable[[str, int, dict], None]
_observers: list[Observer] = []


def add_observer(fn: Observer) -> None:
    """Call ``fn(game_id, seq, record)`` for every record once it is fsynced."""
    if fn not in _observers:
        _observers.append(fn)


def remove_observer(fn: Observer) -> None:
    try:
        _observers.remove(fn)
    except ValueError:
        pass


def data_dir() -> Path:
    env = os.environ.get("FAIRYBOARD_DATA")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg) / "fairyboard"
    return Path.home() / ".local" / "share" / "fairyboard"


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


class Journal:
    """Appends records to one game's file."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._repair()
        self._f = open(self.path, "ab", buffering=0)
        self._seq: int | None = None                  # the next record's line index, once counted
        self._unsynced: list[tuple[int, dict]] = []   # written, not yet fsynced (kept for observers)

    def _repair(self) -> None:
        """Cut a torn last line (no newline at the end) so the next record starts clean."""
        try:
            with open(self.path, "rb+") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                if size == 0:
                    return
                f.seek(size - 1)
                if f.read(1) == b"\n":
                    return
                data = Path(self.path).read_bytes()
                keep = data.rfind(b"\n") + 1
                f.truncate(keep)
                f.flush()
                os.fsync(f.fileno())
        except FileNotFoundError:
            return

    def write(self, record: dict, *, sync: bool) -> None:
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        self._f.write(line)
        if _observers:
            if self._seq is None:
                self._seq = Path(self.path).read_bytes().count(b"\n") - 1
            else:
                self._seq += 1
            self._unsynced.append((self._seq, record))
        else:
            self._seq = None
        if sync:
            os.fsync(self._f.fileno())
            self._notify()

    def sync(self) -> None:
        os.fsync(self._f.fileno())
        self._notify()

    def _notify(self) -> None:
        if not self._unsynced:
            return
        done, self._unsynced = self._unsynced, []
        game_id = self.path.stem
        for fn in list(_observers):
            for seq, record in done:
                try:
                    fn(game_id, seq, record)
                except Exception:       # an observer never breaks the journal
                    pass

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


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

    @property
    def variant(self) -> str:
        return self.header.get("variant", "?")

    @property
    def finished(self) -> bool:
        return self.result is not None


def read_records(path: Path) -> list[dict]:
    """Every whole record of a journal (a torn last line is skipped)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read: {exc.strerror or exc}") from None
    out = []
    lines = data.split(b"\n")
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except ValueError:
            if n == len(lines):        # torn last line: a write cut short
                break
            raise JournalError(f"{path}: line {n}: not a JSON record: {raw[:60]!r}") from None
        if not isinstance(rec, dict) or "type" not in rec:
            raise JournalError(f"{path}: line {n}: not a journal record: {raw[:60]!r}")
        out.append(rec)
    return out


def load_record(path: Path) -> GameRecord:
    recs = read_records(path)
    if not recs or recs[0].get("type") != "game":
        raise JournalError(f"{path}: no game header on the first line")
    header = recs[0]
    rec = GameRecord(str(header.get("id", Path(path).stem)), Path(path), header, records=recs[1:])
    for r in recs[1:]:
        t = r["type"]
        if t == "push":
            rec.actions.append(r["action"])
        elif t == "pop":
            if rec.actions:
                rec.actions.pop()
            rec.result = rec.reason = None
        elif t == "result":
            rec.result, rec.reason = r.get("result"), r.get("reason")
        elif t == "reopen":
            rec.result = rec.reason = None
    return rec


class GameStore:
    """The folder of game records."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root is not None else data_dir()
        self.games = self.root / "games"

    def _ensure(self) -> None:
        self.games.mkdir(parents=True, exist_ok=True)

    def path(self, game_id: str) -> Path:
        return self.games / f"{game_id}.jsonl"

    def create(self, variant: str, start_fen: str, *, players: dict[str, str] | None = None,
               now: datetime | None = None, extra: dict | None = None) -> tuple[str, Journal]:
        """A new game record; returns its id and an open journal with the header written."""
        self._ensure()
        now = now or datetime.now().astimezone()
        stem = now.strftime("%Y%m%d-%H%M%S")
        n = 1
        game_id = stem
        while True:
            try:
                fd = os.open(self.path(game_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                n += 1
                game_id = f"{stem}-{n}"
        os.close(fd)
        journal = Journal(self.path(game_id))
        header = {"type": "game", "version": VERSION, "id": game_id, "variant": variant,
                  "start_fen": start_fen, "date": now.isoformat(timespec="seconds"),
                  "players": dict(players or {"white": "White", "black": "Black"})}
        header.update(extra or {})
        journal.write(header, sync=True)
        _fsync_dir(self.games)
        return game_id, journal

    def open(self, game_id: str) -> Journal:
        p = self.path(game_id)
        if not p.exists():
            raise JournalError(f"no game {game_id!r} in {self.games}")
        return Journal(p)

    def load(self, game_id: str) -> GameRecord:
        p = self.path(game_id)
        if not p.exists():
            known = ", ".join(self.ids()[-5:]) or "none yet"
            raise JournalError(f"no game {game_id!r} in {self.games} (latest: {known})")
        return load_record(p)

    def ids(self) -> list[str]:
        if not self.games.is_dir():
            return []
        return sorted(p.stem for p in self.games.glob("*.jsonl"))

    def list(self) -> list[GameRecord]:
        out = []
        for gid in self.ids():
            try:
                out.append(load_record(self.path(gid)))
            except JournalError:
                continue
        return out

    # -- the game in progress -------------------------------------------------------------------
    def current(self) -> str | None:
        try:
            gid = (self.root / "current").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return gid if gid and self.path(gid).exists() else None

    def set_current(self, game_id: str | None) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.root / "current"
        if game_id is None:
            try:
                target.unlink()
            except FileNotFoundError:
                pass
            return
        tmp = self.root / "current.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(game_id + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        _fsync_dir(self.root)
