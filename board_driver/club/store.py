"""The recorder's store: one SQLite file holding every board's games.

Why SQLite rather than a journal file per game: the recorder hears hundreds of boards at once,
and each record must be stored exactly once whatever order and however often it arrives. A
primary key on (board, game, seq) makes that one ``INSERT OR IGNORE``; a batch of records from
many boards is one transaction (one fsync) instead of one file write each; the web page reads
while the recorder writes (WAL mode); and the questions the page asks (every board's latest
game, the games of a round) are queries, not scans of a folder. The records themselves are kept
as the boards' journal lines, so any game can be written back out as a journal
(:meth:`RecorderStore.journal_lines`) and read with the board's own tools.

Tables: ``records`` (board, game, seq, body, stored_at, and made_at: the board's clock when it
wrote the record, sent with live records); ``games`` (per game: ``contig``, how
many of its first records are stored without a hole; ``max_seq``; ``known``, the board's own
count from its state message; and a summary folded from the contiguous records: variant,
players, date, actions, result, the last move's time by the board's clock, else the store's:
:func:`board_driver.records.fold` taken up from the stored counts; a record it cannot read
counts in ``contig`` and changes nothing else); ``boards`` (presence, health); ``rounds``;
``set_aside`` (messages the recorder refused: when, board, topic, why, the payload's first
4 KiB); ``conflicts`` (a second body for a line already stored: when, board, game, seq, body).

The first body stored for a (board, game, seq) stays: a record with another body for it changes
nothing; the other body is kept in ``conflicts`` (once) and the recorder reports it. A stored line
changes only by the documented correction, :meth:`RecorderStore.take_conflict` (``fairyboard
conflicts --take ID``, the club's operator's decision): the conflicting body takes the line's
place, the stored one goes to ``conflicts`` in its stead, and the game's summary is folded again
from its first record.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from board_driver.errors import BoardDriverError
from board_driver.records import GameFold, Header, Pop, Push, RecordError, read_record


class StoreError(BoardDriverError):
    """The store's file cannot be used (not SQLite, a directory, unreadable)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    board TEXT NOT NULL, game TEXT NOT NULL, seq INTEGER NOT NULL,
    body TEXT NOT NULL, stored_at REAL NOT NULL, made_at REAL,
    PRIMARY KEY (board, game, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS games (
    board TEXT NOT NULL, game TEXT NOT NULL,
    contig INTEGER NOT NULL DEFAULT 0, max_seq INTEGER NOT NULL DEFAULT -1, known INTEGER NOT NULL DEFAULT 0,
    variant TEXT, players TEXT, date TEXT, start_fen TEXT,
    actions INTEGER NOT NULL DEFAULT 0, last_action TEXT, last_move_at REAL,
    result TEXT, reason TEXT, first_seen REAL NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (board, game));
CREATE TABLE IF NOT EXISTS boards (
    board TEXT PRIMARY KEY, online INTEGER, presence_at REAL, health TEXT, health_at REAL);
CREATE TABLE IF NOT EXISTS rounds (
    name TEXT PRIMARY KEY, started_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS set_aside (
    at REAL NOT NULL, board TEXT, topic TEXT NOT NULL, reason TEXT NOT NULL, payload BLOB);
CREATE TABLE IF NOT EXISTS conflicts (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, board TEXT NOT NULL, game TEXT NOT NULL, seq INTEGER NOT NULL,
    body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS conflicts_line ON conflicts (board, game, seq);
"""

ASIDE_KEEP = 4096           # bytes of a set-aside payload kept for a look


def _text(v) -> str | None:
    """A summary field as the page shows it: text (at most 200 characters), else nothing."""
    return v[:200] if isinstance(v, str) else None


@dataclass
class Progress:
    """What a batch did to one game."""

    board: str
    game: str
    contig: int
    max_seq: int
    known: int
    finished: bool

    @property
    def gap(self) -> bool:
        """Records missing: a hole below the highest seen, or fewer than the board has."""
        return self.max_seq >= self.contig or self.known > self.contig


class RecorderStore:
    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a directory, not the recorder's SQLite file")
        try:
            if not readonly:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot make its folder: {exc.strerror or exc}") from None
        uri = f"file:{self.path}?mode=ro" if readonly else f"file:{self.path}"
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
            if readonly:
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            else:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")   # WAL: a commit survives a crash of the recorder
                db.executescript(SCHEMA)
                db.commit()
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            what = "not an SQLite database" if "not a database" in str(exc) else str(exc)
            raise StoreError(f"{self.path}: cannot use it as the recorder's store: {what}") from None
        self.db: sqlite3.Connection = db
        self.lock = threading.Lock()
        self.conflicted: list[tuple[str, str, int]] = []  # (board, game, seq) the last add_records heard another body for

    def close(self) -> None:
        self.db.close()

    # -- writing ----------------------------------------------------------------------------
    def add_records(self, items: list[tuple], *, now: float | None = None) -> dict[tuple[str, str], Progress]:
        """Store records ``(board, game, seq, body[, made_at])`` (duplicates ignored) in one
        transaction; ``made_at``: the board's clock when it wrote the record, if it said.
        Returns each touched game's progress."""
        now = time.time() if now is None else now
        touched: dict[tuple[str, str], Progress] = {}
        self.conflicted = []
        with self.lock, self.db:
            cur = self.db.cursor()
            maxes: dict[tuple[str, str], int] = {}
            for it in items:
                b, g, s, body = it[0], it[1], it[2], it[3]
                made = it[4] if len(it) > 4 else None
                old = cur.execute("SELECT body FROM records WHERE board=? AND game=? AND seq=?", (b, g, s)).fetchone()
                if old is None:
                    cur.execute("INSERT INTO records (board, game, seq, body, stored_at, made_at) VALUES (?, ?, ?, ?, ?, ?)",
                                (b, g, s, body, now, made))
                elif old[0] != body:     # the first body stays; the other is kept aside, once
                    if cur.execute("SELECT 1 FROM conflicts WHERE board=? AND game=? AND seq=? AND body=?",
                                   (b, g, s, body)).fetchone() is None:
                        cur.execute("INSERT INTO conflicts (at, board, game, seq, body) VALUES (?, ?, ?, ?, ?)",
                                    (now, b, g, s, body))
                        self.conflicted.append((b, g, s))
                if s > maxes.get((b, g), -1):
                    maxes[(b, g)] = s
            for (b, g), mx in maxes.items():
                touched[(b, g)] = self._advance(cur, b, g, mx, now)
        return touched

    def set_aside(self, items: list[tuple[str | None, str, str, bytes]], *, now: float | None = None) -> None:
        """Keep refused messages ``(board, topic, reason, payload)`` for a look (the payload's
        first 4 KiB)."""
        now = time.time() if now is None else now
        with self.lock, self.db:
            self.db.executemany("INSERT INTO set_aside (at, board, topic, reason, payload) VALUES (?, ?, ?, ?, ?)",
                                [(now, b, t, r, bytes(p[:ASIDE_KEEP])) for b, t, r, p in items])

    def conflicts(self) -> list[dict]:
        """Every body heard for a line already stored with another: ``{"id", "at", "board",
        "game", "seq", "body", "stored"}`` (``stored``: the line's body now)."""
        with self.lock:
            rows = self.db.execute(
                "SELECT c.id, c.at, c.board, c.game, c.seq, c.body, r.body FROM conflicts c LEFT JOIN records r "
                "ON r.board=c.board AND r.game=c.game AND r.seq=c.seq ORDER BY c.id").fetchall()
        return [dict(zip(("id", "at", "board", "game", "seq", "body", "stored"), r)) for r in rows]

    def take_conflict(self, cid: int, *, now: float | None = None) -> dict:
        """The documented correction: conflict ``cid``'s body takes its line's place; the body
        stored until now is kept in ``conflicts`` instead, and the game's summary is folded again.
        LookupError when there is no such conflict."""
        now = time.time() if now is None else now
        with self.lock, self.db:
            cur = self.db.cursor()
            row = cur.execute("SELECT board, game, seq, body FROM conflicts WHERE id=?", (cid,)).fetchone()
            if row is None:
                raise LookupError(f"no conflict {cid} in {self.path}")
            b, g, s, body = row
            old = cur.execute("SELECT body FROM records WHERE board=? AND game=? AND seq=?", (b, g, s)).fetchone()
            cur.execute("DELETE FROM conflicts WHERE id=?", (cid,))
            if old is None:
                cur.execute("INSERT INTO records (board, game, seq, body, stored_at) VALUES (?, ?, ?, ?, ?)",
                            (b, g, s, body, now))
            else:
                cur.execute("UPDATE records SET body=?, stored_at=?, made_at=NULL WHERE board=? AND game=? AND seq=?",
                            (body, now, b, g, s))
                cur.execute("INSERT INTO conflicts (at, board, game, seq, body) VALUES (?, ?, ?, ?, ?)",
                            (now, b, g, s, old[0]))
            cur.execute("UPDATE games SET contig=0, actions=0, result=NULL, reason=NULL, variant=NULL, "
                        "players=NULL, date=NULL, start_fen=NULL, last_action=NULL, last_move_at=NULL "
                        "WHERE board=? AND game=?", (b, g))
            (mx,) = cur.execute("SELECT MAX(seq) FROM records WHERE board=? AND game=?", (b, g)).fetchone()
            self._advance(cur, b, g, mx, now)
        return {"board": b, "game": g, "seq": s}

    def set_aside_rows(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT at, board, topic, reason, payload FROM set_aside ORDER BY rowid").fetchall()
        return [dict(zip(("at", "board", "topic", "reason", "payload"), r)) for r in rows]

    def _ensure_game(self, cur, board: str, game: str, now: float) -> tuple:
        row = cur.execute("SELECT contig, max_seq, known, actions, result FROM games WHERE board=? AND game=?",
                          (board, game)).fetchone()
        if row is None:
            cur.execute("INSERT INTO games (board, game, first_seen, updated_at) VALUES (?, ?, ?, ?)",
                        (board, game, now, now))
            row = (0, -1, 0, 0, None)
        return row

    def _advance(self, cur, board: str, game: str, mx: int, now: float) -> Progress:
        contig, max_seq, known, actions, result = self._ensure_game(cur, board, game, now)
        max_seq = max(max_seq, mx)
        upd: dict = {}
        (reason,) = cur.execute("SELECT reason FROM games WHERE board=? AND game=?", (board, game)).fetchone()
        f = GameFold(offset=actions, result=result, reason=reason, keep_events=False)   # as far as the summary went
        rows = cur.execute("SELECT seq, body, COALESCE(made_at, stored_at) FROM records "
                           "WHERE board=? AND game=? AND seq>=? ORDER BY seq", (board, game, contig)).fetchall()
        for seq, body, stored_at in rows:
            if seq != contig:
                break
            contig += 1
            try:
                r = read_record(body)
            except RecordError:
                continue                # the board's line, kept as it is; nothing of it to show
            f.add(r)
            if isinstance(r, Header):
                pl = {k: v for k, v in (r.players or {}).items() if isinstance(v, str)}
                upd.update(variant=_text(r.variant), players=json.dumps(pl),
                           date=_text(r.date), start_fen=_text(r.start_fen))
            elif isinstance(r, Push):
                upd.update(last_action=_text(r.action), last_move_at=stored_at)
            elif isinstance(r, Pop):
                upd["last_move_at"] = stored_at
        result = None if f.result is None else _text(f.result) or "*"
        upd.update(contig=contig, max_seq=max_seq, actions=f.plies, result=result, reason=_text(f.reason),
                   updated_at=now)
        cols = ", ".join(f"{k}=?" for k in upd)
        cur.execute(f"UPDATE games SET {cols} WHERE board=? AND game=?", (*upd.values(), board, game))
        return Progress(board, game, contig, max_seq, known, result is not None)

    def note_state(self, board: str, game: str, seq: int, *, now: float | None = None) -> Progress:
        """The board says game ``game`` has records up to ``seq``."""
        now = time.time() if now is None else now
        with self.lock, self.db:
            cur = self.db.cursor()
            contig, max_seq, known, actions, result = self._ensure_game(cur, board, game, now)
            known = max(known, seq + 1)
            cur.execute("UPDATE games SET known=? WHERE board=? AND game=?", (known, board, game))
        return Progress(board, game, contig, max_seq, known, result is not None)

    def note_presence(self, board: str, online: bool, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self.lock, self.db:
            self.db.execute("INSERT INTO boards (board, online, presence_at) VALUES (?, ?, ?) "
                            "ON CONFLICT(board) DO UPDATE SET online=excluded.online, presence_at=excluded.presence_at",
                            (board, int(online), now))

    def note_health(self, board: str, health: dict, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self.lock, self.db:
            self.db.execute("INSERT INTO boards (board, health, health_at) VALUES (?, ?, ?) "
                            "ON CONFLICT(board) DO UPDATE SET health=excluded.health, health_at=excluded.health_at",
                            (board, json.dumps(health), now))

    def start_round(self, name: str, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self.lock, self.db:
            self.db.execute("INSERT INTO rounds (name, started_at) VALUES (?, ?) "
                            "ON CONFLICT(name) DO NOTHING", (name, now))

    # -- reading ----------------------------------------------------------------------------
    def behind(self) -> list[Progress]:
        """Games that may miss records: unfinished, or with a known hole."""
        with self.lock:
            rows = self.db.execute("SELECT board, game, contig, max_seq, known, result FROM games "
                                   "WHERE result IS NULL OR max_seq >= contig OR known > contig").fetchall()
        return [Progress(b, g, c, m, k, r is not None) for b, g, c, m, k, r in rows]

    def records(self, board: str, game: str, *, contiguous: bool = True) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT seq, body FROM records WHERE board=? AND game=? ORDER BY seq",
                                   (board, game)).fetchall()
        out = []
        for i, (seq, body) in enumerate(rows):
            if contiguous and seq != i:
                break
            out.append(json.loads(body))
        return out

    def journal_lines(self, board: str, game: str) -> list[str]:
        """The game's records as its board's journal lines (the contiguous part)."""
        with self.lock:
            rows = self.db.execute("SELECT seq, body FROM records WHERE board=? AND game=? ORDER BY seq",
                                   (board, game)).fetchall()
        out = []
        for i, (seq, body) in enumerate(rows):
            if seq != i:
                break
            out.append(body)
        return out

    def seqs(self, board: str, game: str) -> list[int]:
        with self.lock:
            return [s for (s,) in self.db.execute("SELECT seq FROM records WHERE board=? AND game=? ORDER BY seq",
                                                  (board, game))]

    def games(self, board: str | None = None) -> list[dict]:
        q = ("SELECT board, game, contig, max_seq, known, variant, players, date, start_fen, actions, last_action, "
             "last_move_at, result, reason, first_seen, updated_at FROM games")
        args: tuple = ()
        if board is not None:
            q += " WHERE board=?"
            args = (board,)
        q += " ORDER BY board, first_seen, game"
        with self.lock:
            rows = self.db.execute(q, args).fetchall()
        keys = ("board", "game", "contig", "max_seq", "known", "variant", "players", "date", "start_fen", "actions",
                "last_action", "last_move_at", "result", "reason", "first_seen", "updated_at")
        out = []
        for row in rows:
            d = dict(zip(keys, row))
            d["players"] = json.loads(d["players"]) if d["players"] else {}
            out.append(d)
        return out

    def boards(self) -> list[dict]:
        """Every board heard of, with its presence, health and latest game."""
        with self.lock:
            rows = self.db.execute("SELECT board, online, presence_at, health, health_at FROM boards").fetchall()
        info = {b: {"board": b, "online": None if o is None else bool(o), "presence_at": pa,
                    "health": json.loads(h) if h else None, "health_at": ha} for b, o, pa, h, ha in rows}
        for g in self.games():
            d = info.setdefault(g["board"], {"board": g["board"], "online": None, "presence_at": None,
                                             "health": None, "health_at": None})
            prev = d.get("game")
            if prev is None or (g["date"] or "", g["first_seen"]) >= (prev["date"] or "", prev["first_seen"]):
                d["game"] = g
        return [info[b] for b in sorted(info)]

    def rounds(self) -> list[tuple[str, float]]:
        with self.lock:
            return list(self.db.execute("SELECT name, started_at FROM rounds ORDER BY started_at, name"))

    def round_games(self, name: str) -> list[dict] | None:
        """The games of round ``name``: those first seen after it started and before the next
        round started; None when there is no such round."""
        rounds = self.rounds()
        names = [n for n, _ in rounds]
        if name not in names:
            return None
        i = names.index(name)
        start = rounds[i][1]
        end = rounds[i + 1][1] if i + 1 < len(rounds) else float("inf")
        return [g for g in self.games() if start <= g["first_seen"] < end]

    def count(self) -> int:
        with self.lock:
            return self.db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
