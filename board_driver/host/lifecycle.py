"""Opening, resuming and leaving games: one lifecycle for ``fairyboard play`` and ``serve``.

* :func:`start` -- a new game, journaled (made the store's current game unless it is a game of
  its own);
* :func:`resume` -- a game as its journal left it, board events included;
* :func:`abandon` -- record that an unfinished game was left;
* :func:`open_game` -- what a board plays (below); :func:`replace_game` -- the ``new`` command.

:func:`open_game` decides, from the data folder and what was asked, whether to resume a game
or start one, and says so in :attr:`Opening.notes` (one line each, for stderr or the
service's log):

* the game ``current`` names is resumed when it is unfinished and nothing else was asked
  (``--new``, another ``--variant``, ``--fen``);
* ``resume=ID`` continues that game (an unfinished or abandoned one) by id;
* starting another game while one is unfinished *leaves* it: it is marked abandoned, a note
  names it, and ``--resume ID`` takes it up again (``confirm`` may ask first);
* a game of its own (``own=True``: an events script) never touches the game in progress and
  never becomes the one ``play`` resumes;
* a damaged journal never stops a new game: its file is left as it is, a note names the file
  and line, and the readable part is copied into a new game ``<id>-recovered`` that is resumed
  in its place (or offered, when a new game was asked for). A ``current`` pointer that names
  no game is noted and ignored.

:func:`replace_game` is the ``new [VARIANT]`` command: the variant is checked before the
game in progress is left, so a bad name is an error message and the game goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Sequence, Union

from board_driver.config import load_variant
from board_driver.errors import BoardDriverError
from board_driver.journal import (
    GameRecord,
    GameStore,
    JournalError,
    line_numbers,
    load_any,
    read_prefix,
    read_records,
)
from board_driver.records import (
    BoardRead,
    Draw,
    Flag,
    Push,
    Record,
    RecordError,
    Reopen,
    Resign,
    Result,
    Resume,
    fold,
    record_of,
)
from board_driver.referee.clock import Clock, ClockError, ClockState, TimeControl
from board_driver.referee.debounce import SquareEvent
from board_driver.referee.layout import BoardProfile, Layout
from board_driver.referee.session import Session, both_players
from board_driver.referee.texts import COLOR
from board_driver.settings import DriverSettings
from engine.contract import Termination
from engine.errors import EngineError
from engine.game import new_game, start_problem
from engine.variant import Variant

ANCIENT = -10 ** 9     # the time of board events restored from a journal: long past

Confirm = Callable[[str], bool]


class LifecycleError(BoardDriverError, ValueError):
    """The game asked for cannot be played (no such game, already over ...)."""


class Unplayable(LifecycleError):
    """A game whose record is damaged so that nothing of it can be continued."""


class ReplayError(JournalError):
    """A journal's record cannot be replayed; ``line`` is its line in the file."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def clock_spec(spec: dict | None) -> dict | None:
    """A checked clock spec for the header (``{"tc": "300+3", "mode": "auto"}``), or None for
    none (no spec, or ``tc`` ``-``). ClockError says what is wrong."""
    if not spec or not spec.get("tc"):
        return None
    tc = TimeControl.parse(str(spec["tc"]))
    if tc is None:
        return None
    mode = spec.get("mode") or "auto"
    if mode not in ("auto", "press"):
        raise ClockError(f"clock mode {mode!r}: say auto (the board switches the clock) or press (a button does)")
    return {"tc": tc.text, "mode": mode}


Occupancy = Union[int, Callable[[Variant], int], None]
"""What the board shows for a new game: the occupancy, or how to get it for the game's variant
(the simulated board sets the variant's start position up), or None: the start position."""


def start(store: GameStore, variant_name: str, *, profile: BoardProfile, settings: DriverSettings,
          occupancy: int | None = None, fen: str | None = None, players: dict[str, str] | None = None,
          date: datetime | None = None, now: int = 0, current: bool = True, cls=None,
          computer: dict | None = None, clock: dict | None = None, game_id: str | None = None,
          header: dict | None = None, actions: Sequence[str] = ()) -> Session:
    """A new game, journaled in ``store`` (made its current game when ``current``).
    ``occupancy`` is what the board shows now (None: the start position); when it differs, the
    session waits for the board to be set up. ``computer``: how the computer plays its sides
    (``{"move_time": seconds}``), kept in the header with the players. ``game_id``: the id it
    must have (a remote game's, agreed with the other board); ``header``: more header fields
    (a remote game's ``remote``). ``actions``: the game's first actions (a game read from PGN,
    played on from there), journaled as played: the board is then set up for the position
    they reach."""
    variant = load_variant(variant_name)
    variant_name = variant.name   # "random" becomes the dice outcome, so a resume replays it
    game = new_game(variant, fen)
    layout = Layout.place(profile, variant.geometry)
    start_fen = game.fen()
    for text in actions:
        game.push(game.parse(text))
    players = both_players(players)
    clock = clock_spec(clock)
    extra = dict(header or {})
    if computer:
        extra["computer"] = dict(computer)
    if clock:
        extra["clock"] = clock
    gid, journal = store.create(variant_name, start_fen, players=players, now=date, current=current,
                                extra=extra or None, game_id=game_id)
    s = (cls or Session)(game, variant_name=variant_name, layout=layout, settings=settings, journal=journal,
            game_id=gid, store=store, occupancy=occupancy, now=now, players=players)
    for ply, text in enumerate(actions, 1):
        journal.write(Push(ply, text, w=0), sync=False)
    journal.write(BoardRead(format(s.occupancy, "x")), sync=False)
    s.ask_for_setup()
    if clock:
        tc = TimeControl.parse(clock["tc"])
        assert tc is not None
        s.attach_clock(Clock(tc), clock["mode"])
    s.update(now)
    return s


def playable_start(variant: Variant, fen: str | None):
    """The game from ``fen`` (None: the variant's start), when a game can start there: a
    position that is already over (an empty board in chess, a side without its royal piece,
    checkmate) is a LifecycleError saying why."""
    game = new_game(variant, fen)
    if fen is not None:
        why = start_problem(game)
        if why is not None:
            raise LifecycleError(f"FEN {fen!r}: no game can start there: no game of {variant.name} reaches "
                                 f"this position: {why}")
        out = game.outcome()
        if out is not None:
            raise LifecycleError(f"FEN {fen!r}: no game can start there: it is already over ({out.result}, "
                                 f"{out.reason})")
    return game


def abandon(store: GameStore, game_id: str) -> None:
    """Record that the unfinished game ``game_id`` was left for another."""
    j = store.open(game_id)
    j.write(Result("*", "abandoned"), sync=True)
    j.close()


@dataclass
class Opening:
    session: Session
    resumed: bool
    left: str | None = None                       # the unfinished game that was left, if any
    notes: list[str] = field(default_factory=list)


def replay_problem(rec: GameRecord) -> tuple[int, str] | None:
    """The first action of a record that cannot be played, as (line, message), or None."""
    try:
        game = new_game(load_variant(rec.variant), rec.header.get("start_fen"))
    except (EngineError, BoardDriverError, ValueError) as exc:
        return 1, f"{rec.path}: line 1: {exc}"
    for i, text in enumerate(rec.actions):
        try:
            game.push(game.parse(text))
        except (EngineError, ValueError) as exc:
            line = rec.action_lines[i] if i < len(rec.action_lines) else 0
            return line, f"{rec.path}: line {line}: {text!r} cannot be played here: {exc}"
    return None


def check(rec: GameRecord) -> tuple[GameRecord, int | None]:
    """``rec`` with ``damage`` set when an action cannot be replayed; and the first bad line
    (None when the whole file is good)."""
    if rec.damage is None and rec.header:
        bad = replay_problem(rec)
        if bad is not None:
            rec.damage = bad[1]
            return rec, bad[0]
    if rec.damage is None:
        return rec, None
    try:
        return rec, int(rec.damage.split(": line ", 1)[1].split(":", 1)[0])
    except (IndexError, ValueError):
        return rec, 1


def recover(store: GameStore, rec: GameRecord, bad_line: int, *, current: bool) -> str | None:
    """Copy the records before ``bad_line`` into the game ``<id>-recovered`` (made once; the
    damaged file is not touched). Returns its id, or None when nothing can be kept (the header
    itself is what is damaged: no copy could be played either)."""
    if not rec.header or rec.finished or bad_line <= 1:
        return None
    gid = f"{rec.path.stem}-recovered"[:64]
    if store.path(gid).exists():
        if current:
            store.set_current(gid)
        return gid
    recs, _ = read_prefix(rec.path)
    lines = line_numbers(rec.path)
    keep = [r for r, n in zip(recs[1:], lines[1:]) if n < bad_line]
    h = rec.header
    extra = {k: v for k, v in h.items() if k not in ("type", "version", "id", "variant", "start_fen", "date",
                                                      "players")}
    extra["recovered_from"] = {"id": rec.id, "damage": rec.damage}
    try:
        date = datetime.fromisoformat(str(h.get("date")))
    except (TypeError, ValueError):
        date = None
    _, journal = store.create(rec.variant, h.get("start_fen", ""), players=h.get("players"), now=date,
                              extra=extra, current=current, game_id=gid)
    try:
        for r in keep:
            journal.write(r, sync=False)
        journal.sync()
    finally:
        journal.close()
    return gid


def open_game(store: GameStore, *, profile: BoardProfile, settings: DriverSettings, variant: str | None = None,
              new: bool = False, resume: str | None = None, fen: str | None = None,
              players: dict[str, str] | None = None, occupancy: Occupancy = None, now: int = 0,
              own: bool = False, confirm: Confirm | None = None, cls=None,
              computer: dict | None = None, clock: dict | None = None, game_id: str | None = None,
              header: dict | None = None, actions: Sequence[str] = ()) -> Opening:
    """The game to play (see the module docstring). ``resume`` is a game id, or ``"current"``
    for the game in progress (which must then be unfinished). ``players`` given for a resumed
    game are journaled as its new names. ``occupancy``: what the board shows, for a new game
    (an int, or a function of the Variant; None: the start position). ``confirm(question)`` is
    asked before an unfinished game is left (False: LifecycleError, nothing changed).
    ``actions``: a new game's first actions (:func:`start`).
    ``players`` and ``computer`` name only what the user gave: a resumed game keeps its own
    (journaled once, at its start) and journals only what changed."""
    notes: list[str] = []
    for orphan in store.remove_orphans():
        notes.append(f"removed {orphan}: a game file left half-made by a process stopped while creating it")
    current = store.current()
    if resume == "current":
        if current is None:
            raise LifecycleError("--resume: there is no game in progress to resume (fairyboard games list "
                                 "shows the games; --resume ID continues one)")
        resume = current
    if resume is not None:
        return _resume_id(store, resume, profile=profile, settings=settings, variant=variant, players=players,
                          now=now, make_current=not own or resume == current, notes=notes, cls=cls,
                          computer=computer)
    name = variant or "orthodox"
    v = load_variant(name)             # an unknown name fails here, before any game is left
    if fen is not None:
        playable_start(v, fen)         # and a position that cannot start a game
    name = v.name                      # "random": the dice are thrown once
    left = None
    if not own and current is not None:
        rec: GameRecord | None = load_any(store.path(current))
        assert rec is not None
        going_on = not new and not fen and (variant is None or variant == rec.variant)
        if rec.damage is None and not rec.finished and going_on:
            # the usual start: resume (a record that cannot be replayed is found on the way)
            try:
                return Opening(_resume_or_recover(store, rec, profile, settings, players, now, cls, notes, True,
                                                  computer), True, None, notes)
            except Unplayable:
                store.set_current(None)     # noted; a new game starts, as for any other damage
                rec = None
        if rec is not None:
            bad = None
            if rec.damage is not None or not rec.finished:
                rec, bad = check(rec)       # before a game is left: a damaged file is never written to
            if bad is not None:
                notes.append(f"damaged game record: {rec.damage} (the file is left as it is)")
                copy = recover(store, rec, bad, current=False)
                if copy is None:
                    store.set_current(None)
                elif going_on:
                    notes.append(f"game {current}: its readable part ({_count(store, copy)}) goes on as game {copy}")
                    store.set_current(copy)
                    return Opening(_resume(store, copy, profile, settings, players, now, cls, computer), True, None,
                                   notes)
                else:
                    notes.append(f"game {current}: its readable part is saved as game {copy}; "
                                 f"fairyboard play --resume {copy} continues it")
                    store.set_current(None)
            elif not rec.finished:
                question = (f"Game {current} ({rec.variant}, {len(rec.actions)} actions) is unfinished. "
                            f"Leave it and start a new {variant or 'orthodox'} game?")
                if confirm is not None and not confirm(question):
                    raise LifecycleError(f"nothing changed: game {current} is still in progress "
                                         f"(fairyboard play resumes it)")
                left = _leave(store, current)
                notes.append(f"left game {current} ({rec.variant}, {len(rec.actions)} actions) unfinished: "
                             f"fairyboard play --resume {current} continues it")
    if callable(occupancy):
        occupancy = occupancy(v)
    s = start(store, name, profile=profile, settings=settings, occupancy=occupancy,
              fen=fen, players=players, now=now, current=not own, cls=cls, computer=computer, clock=clock,
              game_id=game_id, header=header, actions=actions)
    return Opening(s, False, left, notes)


def _count(store: GameStore, gid: str) -> str:
    n = len(load_any(store.path(gid)).actions)
    return f"{n} action{'s' if n != 1 else ''}"


def _leave(store: GameStore, gid: str) -> str:
    abandon(store, gid)
    return gid


def _resume_or_recover(store: GameStore, rec: GameRecord, profile, settings, players, now, cls, notes,
                       make_current: bool, computer: dict | None = None):
    """Resume ``rec``; a record that cannot be replayed makes it a damaged game (see recover)."""
    try:
        return _resume(store, rec.path.stem, profile, settings, players, now, cls, computer)
    except ReplayError as exc:
        rec.damage = str(exc)
        notes.append(f"damaged game record: {rec.damage} (the file is left as it is)")
        copy = recover(store, rec, exc.line, current=make_current)
        if copy is None:
            notes.append(f"game {rec.path.stem}: nothing of it can be continued; it is listed as damaged")
            raise Unplayable(f"game {rec.id}: the game record is damaged and nothing of it can be "
                             f"continued: {rec.damage}") from None
        notes.append(f"game {rec.path.stem}: its readable part ({_count(store, copy)}) goes on as game {copy}")
        return _resume(store, copy, profile, settings, players, now, cls, computer)


def _resume(store: GameStore, gid: str, profile, settings, players, now, cls=None, computer=None) -> Session:
    session = resume(store, gid, profile=profile, settings=settings, now=now, cls=cls)
    header = load_any(store.path(gid)).header
    session.name_players(header.get("players") or session.players, journal=False)
    if players:
        named = {k: v for k, v in players.items() if v}
        if named:
            session.name_players({**session.players, **named})
    if computer and {**(header.get("computer") or {}), **computer} != (header.get("computer") or {}):
        session.note_computer({**(header.get("computer") or {}), **computer})
    return session


def _resume_id(store: GameStore, gid: str, *, profile, settings, variant: str | None, players, now, make_current,
               notes, cls=None, computer=None) -> Opening:
    p = store.path(gid)
    if not p.exists():
        known = ", ".join(g.id for g in store.list() if g.status in ("playing", "abandoned"))[-200:] or "none"
        raise LifecycleError(f"--resume {gid}: no such game in {store.games} (unfinished: {known})")
    rec, bad = check(load_any(p))
    if bad is not None:
        notes.append(f"damaged game record: {rec.damage} (the file is left as it is)")
        copy = recover(store, rec, bad, current=make_current)
        if copy is None:
            raise LifecycleError(f"--resume {gid}: the game record is damaged and nothing of it can be "
                                 f"continued: {rec.damage}")
        notes.append(f"game {gid}: its readable part ({_count(store, copy)}) goes on as game {copy}")
        rec, gid = load_any(store.path(copy)), copy
    if variant is not None and variant != rec.variant:
        raise LifecycleError(f"--resume {gid}: that game is {rec.variant}, not {variant}")
    if rec.finished and rec.result != "*":
        raise LifecycleError(f"--resume {gid}: that game is over ({rec.result}, {rec.reason}); "
                             f"fairyboard games show {gid} shows it")
    old = store.current()
    if make_current and old is not None and old != gid:
        orec = load_any(store.path(old))
        if orec.damage is None and not orec.finished and check(orec)[1] is None:
            _leave(store, old)
            notes.append(f"left game {old} ({orec.variant}, {len(orec.actions)} actions) unfinished: "
                         f"fairyboard play --resume {old} continues it")
    if rec.finished:                    # an abandoned game taken up again
        j = store.open(gid)
        try:
            j.write(Reopen(), sync=True)
        finally:
            j.close()
    if make_current:
        store.set_current(gid)
    return Opening(_resume_or_recover(store, rec, profile, settings, players, now, cls, notes, make_current,
                                      computer), True, None, notes)


def replace_game(session: Session, store: GameStore, variant: str, *, profile: BoardProfile,
                 settings: DriverSettings, occupancy: Occupancy = None, players: dict[str, str] | None = None, now: int = 0, fen: str | None = None,
                 computer: dict | None = None, clock: dict | None = None, game_id: str | None = None,
                 header: dict | None = None) -> Opening:
    """A new game in place of the one in progress (the ``new`` command, a button, the page):
    the variant and the start position are checked first (a bad name or FEN is a
    LifecycleError and the game goes on); then the game in progress is left (abandoned if
    unfinished) and a new one starts, with ``players`` (else the same players). ``game_id`` and
    ``header``: a remote game's, as both boards agreed on it."""
    try:
        v = load_variant(variant)
        start_occ = playable_start(v, fen).occupancy()
    except (EngineError, BoardDriverError, ValueError, OSError) as exc:
        raise LifecycleError(f"new: {exc}") from None
    occ = occupancy(v) if callable(occupancy) else occupancy
    if occ is None:
        occ = start_occ
    out = session.outcome()
    gid = session.game_id
    session.close()
    notes = []
    left = None
    if out is None and gid is not None:
        left = _leave(store, gid)
        notes.append(f"left game {gid} ({session.variant_name}, {len(session.game.history)} actions) unfinished: "
                     f"fairyboard play --resume {gid} continues it")
    s = start(store, v.name, profile=profile, settings=settings, occupancy=occ, fen=fen,
              players=players or session.players, now=now, cls=type(session), computer=computer, clock=clock,
              game_id=game_id, header=header)
    return Opening(s, False, left, notes)


def resume(store: GameStore, game_id: str, *, profile: BoardProfile, settings: DriverSettings, now: int = 0,
           cls=None) -> Session:
    """The game ``game_id`` as its journal left it, board events included."""
    path = store.path(game_id)
    recs = read_records(path)
    if not recs or recs[0].get("type") != "game":
        raise JournalError(f"{path}: no game header on the first line")
    header = recs[0]
    try:
        variant = load_variant(header["variant"])
        game = new_game(variant, header.get("start_fen"))
    except (KeyError, ValueError, EngineError, BoardDriverError) as exc:
        # the header names a variant or a start position this install cannot play (an upgrade
        # renamed a variant file): nothing of the game can be replayed
        raise ReplayError(f"{path}: line 1: {exc}", 1) from None
    layout = Layout.place(profile, variant.geometry)
    journal = store.open(game_id)
    s = (cls or Session)(game, variant_name=header["variant"], layout=layout, settings=settings, journal=journal,
            game_id=game_id, store=store, now=now, players=header.get("players"))
    occ = game.occupancy()
    spec = None
    try:
        spec = clock_spec(header.get("clock"))
    except ClockError:
        pass                                # an unreadable time control: the game goes on without a clock
    tc = TimeControl.parse(spec["tc"]) if spec else None
    typed: list[Record] = []
    for n, r in enumerate(recs, 1):
        try:
            typed.append(record_of(r))
        except RecordError as exc:
            journal.close()
            raise ReplayError(f"{path}: line {_nth_line(path, n)}: cannot replay {r!r}: {exc}",
                              _nth_line(path, n)) from None
    f = fold(typed, clock=tc.initials if tc is not None else None)
    at = 0                              # the record being replayed (0-based; the header is 0)
    events: list[tuple[SquareEvent, int]] = []
    try:
        for at, p in zip(f.push_at, f.pushes):
            game.push(game.parse(p.action))
        for at, e in zip(f.event_at, f.events):
            events.append((SquareEvent(ANCIENT, variant.geometry.parse(e.sq), e.placed), e.occupancy))
        end = f.ended
        if isinstance(end, Resign):
            game.resign(COLOR.index(end.color))
        elif isinstance(end, Flag):
            game.resign(COLOR.index(end.color), Termination.TIME_FORFEIT, draw=end.draw)
        elif isinstance(end, Draw):
            game.resign(game.turn, Termination.AGREEMENT, draw=True)
    except (ValueError, EngineError) as exc:
        journal.close()
        line = _nth_line(path, at + 1)
        raise ReplayError(f"{path}: line {line}: cannot replay {recs[at]!r}: {exc}", line) from None
    if f.occ is not None:
        occ = int(f.occ, 16)
    s.restore(events, f.marks, occ)
    c = f.clock
    if tc is not None and c is not None and spec is not None:
        stack = [ClockState(rem, moves) for rem, moves in c.stack]
        s.attach_clock(Clock(tc, ClockState(c.remaining, c.moves)), spec["mode"], stack=stack, resumed=True)
    journal.write(Resume(), sync=False)
    s.invalidate()
    s.update(now)
    return s


def _nth_line(path, n: int) -> int:
    """The file line of the n-th record (1-based; blank lines are not records)."""
    lines = line_numbers(path)
    return lines[n - 1] if 0 < n <= len(lines) else n
