"""Where things are: board profiles, sensor and LED order, and game squares on the board.

Three kinds of index meet here:

* a *sensor index* (what a backend reports closed) -- mapped to a physical square by the
  profile's calibration map (identity unless ``calibrate`` wrote one);
* a *physical square* ``rank * files + file`` of the physical board (12 x 8: a1 = 0, l8 = 95);
* a *game square* on the variant's geometry (engine squares).

A game narrower or shorter than the board sits on a block of the board (an 8x8 game on the
12x8 board uses 8 consecutive files, by default the middle ones ``c``..``j``; the profile's
``small_game.first_file`` moves it). Physical squares outside the block, and holes of the
game's board, are never part of the game: their sensors are ignored and their LEDs stay dark
unless the scene uses them for status (the points bar of a multi-move turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from board_driver.errors import ConfigError
from engine.geometry import FILE_LETTERS, Geometry

_ORDERS = ("row-major", "serpentine", "column-major", "column-serpentine")
_CORNERS = ("a1", "l1", "a8", "l8", "first-file-first-rank")


@dataclass(frozen=True, slots=True)
class LedOrder:
    """How the LED chain runs over the physical squares.

    ``order``: along ranks -- ``row-major`` (every rank starts at the same side) or
    ``serpentine`` (ranks alternate direction) -- or along files, for boards built from one
    strip per file -- ``column-major`` (every file starts at the same end) or
    ``column-serpentine`` (files alternate direction); ``first``: the corner of LED 0, as
    ``a1``/``l1``/``a8``/``l8`` in the corner's terms (on another board size the letters still
    mean left/right, bottom/top).
    """

    files: int = 12
    ranks: int = 8
    order: str = "row-major"
    first: str = "a1"

    def chain_index(self, phys: int) -> int:
        """The position in the LED chain of the LED under physical square ``phys``."""
        f, r = phys % self.files, phys // self.files
        if self.first[0] != "a":
            f = self.files - 1 - f
        if self.first[1:] != "1":
            r = self.ranks - 1 - r
        if self.order.startswith("column"):
            if self.order == "column-serpentine" and f % 2 == 1:
                r = self.ranks - 1 - r
            return f * self.ranks + r
        if self.order == "serpentine" and r % 2 == 1:
            f = self.files - 1 - f
        return r * self.files + f

    def to_chain(self, values: tuple) -> tuple:
        """Reorder one value per physical square into LED chain order."""
        out = [None] * len(values)
        for phys, v in enumerate(values):
            out[self.chain_index(phys)] = v
        return tuple(out)


@dataclass(frozen=True, slots=True)
class BoardProfile:
    """A physical board: its size, sensor calibration, LED order and where small games sit."""

    name: str = "sim"
    files: int = 12
    ranks: int = 8
    sensor_map: tuple[int, ...] = ()     # sensor index -> physical square; () = identity
    led_order: LedOrder = LedOrder()
    first_file: str | None = None        # where a narrower game's file a sits; None = centred
    first_rank: int | None = None        # where a shorter game's rank 1 sits (1-based); None = centred
    hardware: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)  # backends' section, as read
    clock: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)  # new games' default clock

    @property
    def size(self) -> int:
        return self.files * self.ranks

    @property
    def sensor_count(self) -> int:
        return len(self.sensor_map) or self.size

    @classmethod
    def from_dict(cls, data: Any, source: str = "<board>") -> BoardProfile:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: a board profile is a mapping, not {type(data).__name__}")
        known = {"name", "description", "files", "ranks", "sensors", "leds", "small_game", "hardware",
                 "broker", "web", "engines", "clock"}    # broker: board_driver.club.broker; web: board_driver.web.service;
        # engines: board_driver.opponents.players (engines: {fsf: PATH})
        for k in data:
            if k not in known:
                raise ConfigError(f"{source}: {k}: unknown key (known: {', '.join(sorted(known))})")
        files, ranks = data.get("files", 12), data.get("ranks", 8)
        for key, v in (("files", files), ("ranks", ranks)):
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 16:
                raise ConfigError(f"{source}: {key}: {v!r}: must be a whole number from 1 to 16")
        sensors = data.get("sensors", "identity")
        if sensors in ("identity", None):
            smap: tuple[int, ...] = ()
        elif isinstance(sensors, list):
            g = Geometry(files, ranks)
            out = []
            for i, name in enumerate(sensors):
                try:
                    out.append(g.parse(str(name)))
                except ValueError as exc:
                    raise ConfigError(f"{source}: sensors[{i}]: {name!r}: {exc}") from None
            if len(set(out)) != len(out):
                twice = sorted({g.name(sq) for sq in out if out.count(sq) > 1})
                raise ConfigError(f"{source}: sensors: two sensors map to the same square ({', '.join(twice)})")
            missing = [g.name(sq) for sq in range(files * ranks) if sq not in set(out)]
            if missing:
                raise ConfigError(f"{source}: sensors: no sensor for {len(missing)} square(s): {', '.join(missing)} "
                                  f"(the list names {len(out)} of {files * ranks} squares; "
                                  "run fairyboard calibrate, or use sensors: identity)")
            smap = tuple(out)
        else:
            raise ConfigError(f"{source}: sensors: {sensors!r}: use 'identity' or a list of square names, sensor 0 first")
        leds = data.get("leds", {}) or {}
        if not isinstance(leds, Mapping):
            raise ConfigError(f"{source}: leds: {leds!r}: must be a mapping with order and first")
        order = leds.get("order", "row-major")
        if order not in _ORDERS:
            raise ConfigError(f"{source}: leds.order: {order!r}: use one of {', '.join(_ORDERS)}")
        first = str(leds.get("first", "a1")).lower()
        if first not in ("a1", "l1", "a8", "l8"):
            raise ConfigError(f"{source}: leds.first: {first!r}: use a1, l1, a8 or l8 (the corner of LED 0)")
        small = data.get("small_game", {}) or {}
        if not isinstance(small, Mapping):
            raise ConfigError(f"{source}: small_game: {small!r}: must be a mapping")
        ff = small.get("first_file", "centre")
        if ff in ("centre", "center", None):
            ff = None
        elif not (isinstance(ff, str) and len(ff) == 1 and ff in FILE_LETTERS[:files]):
            raise ConfigError(f"{source}: small_game.first_file: {ff!r}: a file letter a-{FILE_LETTERS[files - 1]} or 'centre'")
        fr = small.get("first_rank", "centre")
        if fr in ("centre", "center", None):
            fr = None
        elif not (isinstance(fr, int) and not isinstance(fr, bool) and 1 <= fr <= ranks):
            raise ConfigError(f"{source}: small_game.first_rank: {fr!r}: a rank 1-{ranks} or 'centre'")
        hw = data.get("hardware", {}) or {}
        if not isinstance(hw, Mapping):
            raise ConfigError(f"{source}: hardware: {hw!r}: must be a mapping")
        clock = data.get("clock") or {}
        if isinstance(clock, (str, int)):
            clock = {"tc": str(clock)}
        if not isinstance(clock, Mapping) or set(clock) - {"tc", "mode"}:
            raise ConfigError(f"{source}: clock: {clock!r}: say clock: 300+3, or clock: {{tc: 300+3, mode: auto|press}}")
        if clock:
            from board_driver.referee.clock import ClockError, TimeControl
            try:
                TimeControl.parse(str(clock.get("tc", "-")))
            except ClockError as exc:
                raise ConfigError(f"{source}: clock: {exc}") from None
            if clock.get("mode", "auto") not in ("auto", "press"):
                raise ConfigError(f"{source}: clock.mode: {clock.get('mode')!r}: use auto or press")
        return cls(name=str(data.get("name", Path(source).stem)), files=files, ranks=ranks,
                   sensor_map=smap, led_order=LedOrder(files, ranks, order, first),
                   first_file=ff, first_rank=fr, hardware=MappingProxyType(dict(hw)),
                   clock=MappingProxyType({k: str(v) for k, v in clock.items()}))


@dataclass(frozen=True, slots=True)
class Layout:
    """A game's geometry placed on a board profile: maps sensors, physical and game squares."""

    profile: BoardProfile
    geometry: Geometry
    file_offset: int
    rank_offset: int
    _sensor_game: tuple = ()     # sensor index -> game square or -1
    _game_phys: tuple = ()       # game square -> physical square (-1 for holes)
    _spare: list = field(default_factory=list, init=False, compare=False, repr=False)   # spare_squares(), once worked out

    @classmethod
    def place(cls, profile: BoardProfile, geometry: Geometry) -> Layout:
        if geometry.files > profile.files or geometry.ranks > profile.ranks:
            raise ConfigError(f"a {geometry.files}x{geometry.ranks} game does not fit on the "
                              f"{profile.files}x{profile.ranks} board {profile.name!r}")
        if profile.first_file is None or geometry.files == profile.files:
            fo = (profile.files - geometry.files) // 2
        else:
            fo = FILE_LETTERS.index(profile.first_file)
            if fo + geometry.files > profile.files:
                raise ConfigError(f"board {profile.name!r}: small_game.first_file {profile.first_file!r} puts a "
                                  f"{geometry.files}-file game off the board")
        if profile.first_rank is None or geometry.ranks == profile.ranks:
            ro = (profile.ranks - geometry.ranks) // 2
        else:
            ro = profile.first_rank - 1
            if ro + geometry.ranks > profile.ranks:
                raise ConfigError(f"board {profile.name!r}: small_game.first_rank {profile.first_rank} puts a "
                                  f"{geometry.ranks}-rank game off the board")
        game_phys = []
        for sq in range(geometry.size):
            if sq in geometry.holes:
                game_phys.append(-1)
            else:
                game_phys.append((geometry.rank_of(sq) + ro) * profile.files + geometry.file_of(sq) + fo)
        phys_game = {p: g for g, p in enumerate(game_phys) if p >= 0}
        smap = profile.sensor_map or tuple(range(profile.size))
        sensor_game = tuple(phys_game.get(p, -1) for p in smap)
        return cls(profile, geometry, fo, ro, sensor_game, tuple(game_phys))

    # -- squares ---------------------------------------------------------------------------
    @property
    def physical_size(self) -> int:
        return self.profile.size

    def physical(self, game_sq: int) -> int:
        """The physical square under a game square."""
        return self._game_phys[game_sq]

    def game_square(self, phys: int) -> int | None:
        """The game square on a physical square, or None outside the game (or on a hole)."""
        f, r = phys % self.profile.files - self.file_offset, phys // self.profile.files - self.rank_offset
        if not self.geometry.on_board(f, r):
            return None
        return self.geometry.square(f, r)

    def sensor_of(self, game_sq: int) -> int:
        """The sensor index that watches a game square."""
        return self._sensor_game.index(game_sq)

    def spare_squares(self) -> list[int]:
        """Physical squares outside the game's block, nearest the block first, then a1 first
        (worked out once: the LEDs show movement points on them at every frame)."""
        if not self._spare:
            self._spare.append(tuple(self._spare_squares()))
        return list(self._spare[0])

    def _spare_squares(self) -> list[int]:
        inside = set(p for p in self._game_phys if p >= 0)
        f0, f1 = self.file_offset, self.file_offset + self.geometry.files - 1

        def key(p: int):
            f = p % self.profile.files
            return (f0 - f if f < f0 else f - f1, f > f1, p // self.profile.files, f)
        block_rows = range(self.rank_offset, self.rank_offset + self.geometry.ranks)
        return sorted((p for p in range(self.profile.size)
                       if p not in inside and p // self.profile.files in block_rows
                       and not f0 <= p % self.profile.files <= f1), key=key)

    # -- occupancy ---------------------------------------------------------------------------
    def occupancy(self, closed: frozenset[int] | set[int]) -> int:
        """The game's occupancy bitboard from a set of closed sensor indexes."""
        sg = self._sensor_game
        n = len(sg)
        bb = 0
        for s in closed:
            if 0 <= s < n:
                g = sg[s]
                if g >= 0:
                    bb |= 1 << g
        return bb

    def closed_sensors(self, occupancy: int) -> frozenset[int]:
        """The sensor indexes a game occupancy closes."""
        out = set()
        for sq in self.geometry.squares_of(occupancy):
            out.add(self.sensor_of(sq))
        return frozenset(out)
