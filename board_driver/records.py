"""A game's journal records as values: one frozen dataclass per record type, one reader, one fold.

A journal line is one JSON object whose ``"type"`` names its record (the format is described
in :mod:`board_driver.journal`). Each record type here writes exactly the object it stands for
(:meth:`to_dict`: the same keys in the same order, an optional key left out when absent), so
a journal written with these classes is byte for byte the journal written before them:

========================  ======================================================================
``"game"``                :class:`Header` (the first line)
``"board"``               :class:`BoardRead` (the board read afresh: a start)
``"event"``               :class:`Event` (a debounced board event)
``"push"`` / ``"pop"``    :class:`Push` / :class:`Pop` (an action committed / taken back)
``"resign"``              :class:`Resign`
``"draw"``                :class:`Draw` (a draw agreed)
``"flag"``                :class:`Flag` (a flag fell)
``"result"``              :class:`Result` (the end of the game)
``"reopen"``              :class:`Reopen` (the result taken back)
``"clock"``               :class:`ClockChange` (pause, start, adjust, press)
``"hint"``                :class:`Hint`
``"players"``             :class:`Players` (the players' names changed)
``"computer"``            :class:`ComputerSettings` (how the computer plays changed)
``"resume"``              :class:`Resume` (the game was taken up again)
========================  ======================================================================

:func:`read_record` turns a line (or a decoded object) into its record, and raises
:class:`RecordError` naming what is wrong for a line that is not one (not JSON, no type, an
unknown type, a field missing or of the wrong kind). Keys a record type does not know are
ignored.

:func:`fold` is the one reader of a game's records: replay, resume, the club's store and the
publisher each fold the records into a :class:`GameFold` and take what they need from it
(actions, result, board events, clocks).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence, Union, overload

from board_driver.errors import BoardDriverError

VERSION = 1
COLORS = ("white", "black")

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode     # one record per line, no spaces
_SQUARE = re.compile(r"^[a-p](?:[1-9]|1[0-6])$")
_HEX = re.compile(r"^[0-9a-f]{1,64}$")

Pair = tuple[int, int]          # [white, black]: milliseconds left, or moves made


@overload
def pair(v: Sequence[int]) -> Pair: ...
@overload
def pair(v: None) -> None: ...
def pair(v: Sequence[int] | None) -> Pair | None:
    """Both clocks' values (a clock's tuple or a list, [white, black]) as a record holds them."""
    return None if v is None else (v[0], v[1])

_MISSING = object()


class RecordError(BoardDriverError, ValueError):
    """A journal line that is not a record: not JSON, no type, an unknown type, a bad field."""


# -- reading fields ----------------------------------------------------------------------------
def _what(v: Any) -> str:
    """The offending value, as short as it can be said."""
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, (str, int, float)):
        return repr(v[:40] if isinstance(v, str) else v)
    return "an object" if isinstance(v, dict) else "a list" if isinstance(v, list) else type(v).__name__


def _bad(kind: str, key: str, v: Any, want: str) -> RecordError:
    return RecordError(f"a {kind} record whose {key!r} is {_what(v)}, not {want}")


def _get(d: Mapping[str, Any], kind: str, key: str, ok: Callable[[Any], bool], want: str, *,
         required: bool) -> Any:
    v = d.get(key, _MISSING)
    if v is _MISSING:
        if required:
            raise RecordError(f"a {kind} record without its {key!r}")
        return None
    if not ok(v):
        raise _bad(kind, key, v, want)
    return v


def _is_int(v: Any) -> bool:
    return type(v) is int               # not a bool


def _is_pair(v: Any) -> bool:
    return type(v) is list and len(v) == 2 and type(v[0]) is int and type(v[1]) is int


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_names(v: Any) -> bool:
    """The players' names: an object by colour (its values as written: names, as a rule)."""
    return isinstance(v, dict)


def _str(d: Mapping[str, Any], kind: str, key: str, required: bool = True) -> Any:
    return _get(d, kind, key, _is_str, "text", required=required)


def _int(d: Mapping[str, Any], kind: str, key: str, required: bool = True) -> Any:
    return _get(d, kind, key, _is_int, "a whole number", required=required)


def _maybe_number(d: Mapping[str, Any], kind: str, key: str) -> float | None:
    """A key always written, whose value is a number or null."""
    return _get(d, kind, key, lambda v: v is None or _is_int(v) or isinstance(v, float), "a number or null",
                required=True)


def _bool(d: Mapping[str, Any], kind: str, key: str, required: bool = True) -> Any:
    return _get(d, kind, key, _is_bool, "true or false", required=required)


def _pair(d: Mapping[str, Any], kind: str, key: str, required: bool = False) -> Pair | None:
    v = _get(d, kind, key, _is_pair, "two whole numbers", required=required)
    return None if v is None else (v[0], v[1])


def _color(d: Mapping[str, Any], kind: str, key: str = "color") -> str:
    return _get(d, kind, key, lambda v: v in COLORS, "white or black", required=True)


def _hex(d: Mapping[str, Any], kind: str) -> str:
    return _get(d, kind, "occ", lambda v: isinstance(v, str) and bool(_HEX.match(v)), "a hex occupancy",
                required=True)


def _put(out: dict[str, Any], key: str, v: Any) -> None:
    """An optional key: written only when it has a value."""
    if v is not None:
        out[key] = list(v) if isinstance(v, tuple) else v


# -- the records -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Header:
    """``{"type": "game", "version": 1, "id", "variant", "start_fen", "date", "players", ...}``:
    the first line. ``extra`` holds the rest of the header (``computer``, ``clock``,
    ``remote``, ``recovered_from``, a match's ``event`` ...) in the order written."""

    TYPE: ClassVar[str] = "game"
    id: str | None = None
    variant: str | None = None
    start_fen: str | None = None
    date: str | None = None
    players: dict[str, Any] | None = None
    version: int | None = VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    KEYS: ClassVar[tuple[str, ...]] = ("type", "version", "id", "variant", "start_fen", "date", "players")

    @property
    def computer(self) -> dict[str, Any] | None:
        c = self.extra.get("computer")
        return c if isinstance(c, dict) else None

    @property
    def clock(self) -> dict[str, Any] | None:
        c = self.extra.get("clock")
        return c if isinstance(c, dict) else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE}
        _put(out, "version", self.version)
        _put(out, "id", self.id)
        _put(out, "variant", self.variant)
        _put(out, "start_fen", self.start_fen)
        _put(out, "date", self.date)
        _put(out, "players", self.players)
        for k, v in self.extra.items():
            if k not in Header.KEYS:
                out[k] = v
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Header:
        k = "game header"
        players = _get(d, k, "players", _is_names, "an object of names", required=False)
        return cls(id=_str(d, k, "id", False), variant=_str(d, k, "variant", False),
                   start_fen=_str(d, k, "start_fen", False), date=_str(d, k, "date", False),
                   players=None if players is None else dict(players), version=_int(d, k, "version", False),
                   extra={key: v for key, v in d.items() if key not in Header.KEYS})


@dataclass(frozen=True, slots=True)
class BoardRead:
    """``{"type": "board", "occ": hex}``: the board read afresh (what it shows at a start)."""

    TYPE: ClassVar[str] = "board"
    occ: str

    @property
    def occupancy(self) -> int:
        return int(self.occ, 16)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "occ": self.occ}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BoardRead:
        return cls(_hex(d, "board"))


@dataclass(frozen=True, slots=True)
class Event:
    """``{"type": "event", "t": ms, "sq": "e2", "placed": false, "occ": hex}``: a debounced
    board event; ``occ``: the game squares' occupancy after it."""

    TYPE: ClassVar[str] = "event"
    t: int
    sq: str
    placed: bool
    occ: str

    @property
    def occupancy(self) -> int:
        return int(self.occ, 16)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "t": self.t, "sq": self.sq, "placed": self.placed, "occ": self.occ}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        k = "board event"
        return cls(_int(d, k, "t"),
                   _get(d, k, "sq", lambda v: isinstance(v, str) and bool(_SQUARE.match(v)), "a square name",
                        required=True),
                   _bool(d, k, "placed"), _hex(d, k))


@dataclass(frozen=True, slots=True)
class Push:
    """``{"type": "push", "ply": n, "action": "e2e4", "w": i}``: an action committed. ``ply``:
    the history length after it; ``w``: the first board event of the next position's window.
    Under a clock: ``clk`` (both times after it), ``clk0`` (before it), ``n`` (moves made)."""

    TYPE: ClassVar[str] = "push"
    ply: int
    action: str
    w: int | None = None
    clk: Pair | None = None
    clk0: Pair | None = None
    n: Pair | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE, "ply": self.ply, "action": self.action}
        _put(out, "w", self.w)
        _put(out, "clk", self.clk)
        _put(out, "clk0", self.clk0)
        _put(out, "n", self.n)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Push:
        k = "move"
        return cls(_int(d, k, "ply"), _str(d, k, "action"), _int(d, k, "w", False), _pair(d, k, "clk"),
                   _pair(d, k, "clk0"), _pair(d, k, "n"))


@dataclass(frozen=True, slots=True)
class Pop:
    """``{"type": "pop", "ply": n, "action": "e2e4", "why": "takeback"}``: the last action taken
    back (``why``: takeback, replaced, remote adopt; ``by``: the board that asked, in a remote
    game; ``clk``: both times restored)."""

    TYPE: ClassVar[str] = "pop"
    ply: int
    action: str
    why: str
    by: str | None = None
    clk: Pair | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE, "ply": self.ply, "action": self.action, "why": self.why}
        _put(out, "by", self.by)
        _put(out, "clk", self.clk)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Pop:
        k = "takeback"
        return cls(_int(d, k, "ply"), _str(d, k, "action"), _str(d, k, "why"), _str(d, k, "by", False),
                   _pair(d, k, "clk"))


@dataclass(frozen=True, slots=True)
class Resign:
    """``{"type": "resign", "color": "white"}``: that side resigned (``by``: the board it was
    played on, in a remote game). The result record follows."""

    TYPE: ClassVar[str] = "resign"
    color: str
    by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE, "color": self.color}
        _put(out, "by", self.by)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Resign:
        return cls(_color(d, "resignation"), _str(d, "resignation", "by", False))


@dataclass(frozen=True, slots=True)
class Draw:
    """``{"type": "draw"}``: a draw agreed (``by``: the board whose player accepted or offered
    it, in a remote game). The result record follows."""

    TYPE: ClassVar[str] = "draw"
    by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE}
        _put(out, "by", self.by)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Draw:
        return cls(_str(d, "draw", "by", False))


@dataclass(frozen=True, slots=True)
class Flag:
    """``{"type": "flag", "color": "white", "t": ms, "draw": false, "clk": [w, b]}``: that side's
    flag fell (a draw when the other side could not win). The result record follows."""

    TYPE: ClassVar[str] = "flag"
    color: str
    draw: bool
    t: int | None = None
    clk: Pair | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE, "color": self.color}
        _put(out, "t", self.t)
        out["draw"] = self.draw
        _put(out, "clk", self.clk)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Flag:
        k = "flag"
        return cls(_color(d, k), _bool(d, k, "draw"), _int(d, k, "t", False), _pair(d, k, "clk"))


@dataclass(frozen=True, slots=True)
class Result:
    """``{"type": "result", "result": "1-0", "reason": "checkmate"}``: the game ended (``*``,
    ``abandoned``: it was left for another); ``clk``: both times at the end."""

    TYPE: ClassVar[str] = "result"
    result: str
    reason: str
    clk: Pair | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE, "result": self.result, "reason": self.reason}
        _put(out, "clk", self.clk)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        k = "result"
        return cls(_str(d, k, "result"), _str(d, k, "reason"), _pair(d, k, "clk"))


@dataclass(frozen=True, slots=True)
class Reopen:
    """``{"type": "reopen"}``: the result taken back (a resignation or an agreed draw taken
    back, an abandoned game taken up again)."""

    TYPE: ClassVar[str] = "reopen"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Reopen:
        return cls()


@dataclass(frozen=True, slots=True)
class Resume:
    """``{"type": "resume"}``: the game was taken up again from its journal."""

    TYPE: ClassVar[str] = "resume"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Resume:
        return cls()


@dataclass(frozen=True, slots=True)
class ClockChange:
    """``{"type": "clock", "op": "pause" | "start" | "adjust" | "press", "clk": [w, b], "n": [..]}``:
    the clock changed by hand; an adjustment names its ``color`` (and, from the other board of
    a remote game, ``by`` and the ``ply`` it was made at)."""

    TYPE: ClassVar[str] = "clock"
    op: str
    clk: Pair
    n: Pair
    color: str | None = None
    by: str | None = None
    ply: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE, "op": self.op}
        _put(out, "color", self.color)
        _put(out, "by", self.by)
        _put(out, "ply", self.ply)
        out["clk"] = list(self.clk)
        out["n"] = list(self.n)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClockChange:
        k = "clock"
        clk, n = _pair(d, k, "clk", True), _pair(d, k, "n", True)
        assert clk is not None and n is not None
        return cls(_str(d, k, "op"), clk, n, _str(d, k, "color", False), _str(d, k, "by", False),
                   _int(d, k, "ply", False))


@dataclass(frozen=True, slots=True)
class Hint:
    """``{"type": "hint", "ply": n, "color": "white", "actions": [...], "engine": spec, "cp": c,
    "mate": m}``: a hint given (``cp`` and ``mate`` from White's side, either may be null)."""

    TYPE: ClassVar[str] = "hint"
    ply: int
    color: str
    actions: tuple[str, ...]
    engine: str
    cp: float | None        # centipawns (a whole number, as engines give it)
    mate: float | None      # plies to mate (a whole number)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "ply": self.ply, "color": self.color, "actions": list(self.actions),
                "engine": self.engine, "cp": self.cp, "mate": self.mate}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Hint:
        k = "hint"
        acts = _get(d, k, "actions", lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
                    "a list of actions", required=True)
        return cls(_int(d, k, "ply"), _str(d, k, "color"), tuple(acts), _str(d, k, "engine"),
                   _maybe_number(d, k, "cp"), _maybe_number(d, k, "mate"))


@dataclass(frozen=True, slots=True)
class Players:
    """``{"type": "players", "players": {"white": ..., "black": ...}}``: the names changed."""

    TYPE: ClassVar[str] = "players"
    players: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "players": dict(self.players)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Players:
        return cls(dict(_get(d, "players", "players", _is_names, "an object of names", required=True)))


@dataclass(frozen=True, slots=True)
class ComputerSettings:
    """``{"type": "computer", "computer": {"move_time": s}}``: how the computer plays changed
    (the header's ``computer`` holds it from the start)."""

    TYPE: ClassVar[str] = "computer"
    computer: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "computer": dict(self.computer)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ComputerSettings:
        return cls(dict(_get(d, "computer", "computer", lambda v: isinstance(v, dict), "an object",
                             required=True)))


Record = Union[Header, BoardRead, Event, Push, Pop, Resign, Draw, Flag, Result, Reopen, Resume, ClockChange,
               Hint, Players, ComputerSettings]

TYPES: dict[str, Any] = {c.TYPE: c for c in (Header, BoardRead, Event, Push, Pop, Resign, Draw, Flag, Result,
                                              Reopen, Resume, ClockChange, Hint, Players, ComputerSettings)}


# -- reading and writing lines ------------------------------------------------------------------
def record_of(d: Any) -> Record:
    """The record a decoded journal object stands for; RecordError says what is wrong."""
    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise RecordError("not a journal record (an object with a type)")
    cls = TYPES.get(d["type"])
    if cls is None:
        raise RecordError(f"an unknown record type {d['type'][:40]!r}")
    return cls.from_dict(d)


def read_record(line: bytes | str | Mapping[str, Any]) -> Record:
    """The record on a journal line (bytes or text without its newline, or the decoded object);
    RecordError says what is wrong with a line that is not one."""
    if isinstance(line, Mapping):
        return record_of(line)
    try:
        d = json.loads(line)
    except RecursionError:
        raise RecordError("JSON nested too deeply to be a journal record") from None
    except ValueError:
        raise RecordError(f"not a JSON record: {line[:60]!r}") from None
    return record_of(d)


def as_dict(record: Record | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object a record is written as (a dict is taken as it is)."""
    if isinstance(record, Mapping):
        return dict(record)
    return record.to_dict()


def encode(record: Record | Mapping[str, Any]) -> bytes:
    """The record's journal line, newline included."""
    return _ENCODE(as_dict(record)).encode() + b"\n"


# -- the fold -----------------------------------------------------------------------------------
@dataclass
class ClockFold:
    """Both clocks as the records leave them: ``remaining`` and ``moves`` ([white, black]), and
    the state before each action still on the board (what a takeback restores)."""

    remaining: Pair
    moves: Pair = (0, 0)
    stack: list[tuple[Pair, Pair]] = field(default_factory=list)


@dataclass
class GameFold:
    """A game's records folded in order (see :func:`fold`).

    ``pushes`` are the actions on the board (takebacks applied) with ``push_at``, each one's
    index among the records folded (the header is 0). ``ended`` is the record that ended the
    game on the board (a resignation, a flag, an agreed draw) while it stands; ``result`` and
    ``reason`` what the game's end says (None while it goes on). ``events`` are the board
    events since the board was last read afresh (``event_at``: their indexes), ``occ`` the
    occupancy the last board record left, ``marks`` each action's first board event of the
    next position's window. ``clock`` is folded only when a start is given (:func:`fold`).

    ``offset`` counts actions folded before (the club's store keeps a count, not the records):
    :attr:`plies` is the number of actions on the board. ``keep_events=False`` keeps no board
    events, only their number (a summary has no use for them)."""

    header: Header | None = None
    players: dict[str, Any] | None = None
    computer: dict[str, Any] | None = None
    pushes: list[Push] = field(default_factory=list)
    push_at: list[int] = field(default_factory=list)
    offset: int = 0
    result: str | None = None
    reason: str | None = None
    ended: Resign | Flag | Draw | None = None
    events: list[Event] = field(default_factory=list)
    event_at: list[int] = field(default_factory=list)
    occ: str | None = None
    marks: list[int] = field(default_factory=list)
    clock: ClockFold | None = None
    count: int = 0
    keep_events: bool = True
    events_dropped: int = 0     # board events since the board was read, not kept (keep_events False)

    @property
    def actions(self) -> list[str]:
        return [p.action for p in self.pushes]

    @property
    def plies(self) -> int:
        return self.offset + len(self.pushes)

    @property
    def finished(self) -> bool:
        return self.result is not None

    def add(self, r: Record) -> None:
        """Fold one more record."""
        i = self.count
        self.count += 1
        if isinstance(r, Push):
            self.pushes.append(r)
            self.push_at.append(i)
            self.marks.append(r.w if r.w is not None else len(self.events) + self.events_dropped)
            c = self.clock
            if c is not None:
                c.stack.append((r.clk0 or c.remaining, c.moves))
                c.remaining, c.moves = r.clk or c.remaining, r.n or c.moves
        elif isinstance(r, Pop):
            if self.pushes:
                self.pushes.pop()
                self.push_at.pop()
            elif self.offset:
                self.offset -= 1
            if self.marks:
                self.marks.pop()
            if self.marks:
                # events before a takeback are no evidence after it
                self.marks[-1] = len(self.events) + self.events_dropped
            self.result = self.reason = None
            self.ended = None
            c = self.clock
            if c is not None:
                if c.stack:
                    c.remaining, c.moves = c.stack.pop()
                c.remaining = r.clk or c.remaining
        elif isinstance(r, Resign):
            # the result record follows; a journal without it still ends in the resignation
            self.result = "1-0" if r.color == "black" else "0-1"
            self.reason = "resignation"
            self.ended = r
        elif isinstance(r, Draw):
            self.result, self.reason = "1/2-1/2", "agreement"
            self.ended = r
        elif isinstance(r, Flag):
            # the result record follows; a journal without it still ends on time
            self.result = "1/2-1/2" if r.draw else "1-0" if r.color == "black" else "0-1"
            self.reason = "time forfeit"
            self.ended = r
            if self.clock is not None and r.clk is not None:
                self.clock.remaining = r.clk
        elif isinstance(r, Result):
            self.result, self.reason = r.result, r.reason
            if self.clock is not None and r.clk is not None:
                self.clock.remaining = r.clk
        elif isinstance(r, ClockChange):
            if self.clock is not None:
                self.clock.remaining, self.clock.moves = r.clk, r.n
        elif isinstance(r, Reopen):
            self.result = self.reason = None
            self.ended = None
        elif isinstance(r, Event):
            if self.keep_events:
                self.events.append(r)
                self.event_at.append(i)
            else:
                self.events_dropped += 1
            self.occ = r.occ
        elif isinstance(r, BoardRead):
            self.occ = r.occ
            self.events = []
            self.event_at = []
            self.events_dropped = 0
            self.marks = [0] * len(self.marks)
        elif isinstance(r, Header):
            if self.header is None:
                self.header = r
        elif isinstance(r, Players):
            self.players = dict(r.players)
        elif isinstance(r, ComputerSettings):
            self.computer = dict(r.computer)
        # Hint, Resume: nothing a replay needs

    def header_dict(self) -> dict[str, Any]:
        """The header as read, with the players and the computer's settings as changed since."""
        h = self.header.to_dict() if self.header is not None else {}
        if self.players is not None:
            h["players"] = self.players
        if self.computer is not None:
            h["computer"] = self.computer
        return h


def fold(records: Iterable[Record], *, into: GameFold | None = None, clock: Pair | None = None) -> GameFold:
    """Fold a game's records, in order, into a :class:`GameFold` (``into``: go on folding one).
    ``clock``: both clocks' start ([white, black] ms) when the game has one, to fold the clock
    records too."""
    f = into if into is not None else GameFold()
    if clock is not None and f.clock is None:
        f.clock = ClockFold(clock)
    for r in records:
        f.add(r)
    return f
