"""Opening, resuming and abandoning games: how a :class:`~board_driver.session.Session` comes
to be, from a game store.

* :func:`start` -- a new game, journaled, made the store's current game;
* :func:`resume` -- a game as its journal left it, board events included;
* :func:`open_game` -- what a board plays on start: the unfinished current game, or a new one
  (abandoning the old);
* :func:`abandon` -- record that an unfinished game was left.

``Session.start``, ``Session.resume`` and ``Session.open`` call these.
"""

from __future__ import annotations

from datetime import datetime

from engine.errors import EngineError
from engine.game import new_game

from .config import load_variant
from .debounce import SquareEvent
from .journal import GameStore, JournalError, read_records
from .layout import BoardProfile, Layout
from .settings import Settings
from .texts import COLOR

ANCIENT = -10 ** 9     # the time of board events restored from a journal: long past


def start(cls, store: GameStore, variant_name: str, *, profile: BoardProfile, settings: Settings,
          occupancy: int | None = None, fen: str | None = None, players: dict[str, str] | None = None,
          date: datetime | None = None, now: int = 0):
    """A new game, journaled in ``store``. ``occupancy`` is what the board shows now (None: the
    start position); when it differs, the session waits for the board to be set up."""
    variant = load_variant(variant_name)
    variant_name = variant.name   # "random" becomes the dice outcome, so a resume replays it
    game = new_game(variant, fen)
    layout = Layout.place(profile, variant.geometry)
    start_fen = game.fen()
    players = players or {"white": "White", "black": "Black"}
    gid, journal = store.create(variant_name, start_fen, players=players, now=date, current=True)
    s = cls(game, variant_name=variant_name, layout=layout, settings=settings, journal=journal,
            game_id=gid, store=store, occupancy=occupancy, now=now, players=players)
    journal.write({"type": "board", "occ": format(s.occupancy, "x")}, sync=False)
    if s.occupancy != game.occupancy():
        s.recover = True
        s.notices.append("Set up the start position: the LEDs show the squares to fill (blue) and clear (red).")
    s._update(now)
    return s


def abandon(store: GameStore, game_id: str) -> None:
    """Record that the unfinished game ``game_id`` was left for another."""
    j = store.open(game_id)
    j.write({"type": "result", "result": "*", "reason": "abandoned"}, sync=True)
    j.close()


def open_game(cls, store: GameStore, *, profile: BoardProfile, settings: Settings, variant: str | None = None,
              new: bool = False, fen: str | None = None, occupancy: int | None = None,
              players: dict[str, str] | None = None, now: int = 0):
    """The game to play on a board: the unfinished game in progress (when ``variant`` is None
    or the same, and neither ``new`` nor ``fen`` is given), else a new one (orthodox when no
    variant is named). Returns the session and whether it was resumed."""
    gid = store.current()
    if gid is not None:
        rec = store.load(gid)
        if not rec.finished:
            if not new and not fen and (variant is None or variant == rec.variant):
                return resume(cls, store, gid, profile=profile, settings=settings, now=now), True
            abandon(store, gid)          # another game is started: this one is abandoned
    return start(cls, store, variant or "orthodox", profile=profile, settings=settings, occupancy=occupancy,
                 fen=fen, players=players, now=now), False


def resume(cls, store: GameStore, game_id: str, *, profile: BoardProfile, settings: Settings, now: int = 0):
    """The game ``game_id`` as its journal left it, board events included."""
    path = store.path(game_id)
    recs = read_records(path)
    if not recs or recs[0].get("type") != "game":
        raise JournalError(f"{path}: no game header on the first line")
    header = recs[0]
    variant = load_variant(header["variant"])
    game = new_game(variant, header.get("start_fen"))
    layout = Layout.place(profile, variant.geometry)
    journal = store.open(game_id)
    s = cls(game, variant_name=header["variant"], layout=layout, settings=settings, journal=journal,
            game_id=game_id, store=store, now=now, players=header.get("players"))
    occ = game.occupancy()
    for n, r in enumerate(recs[1:], 2):
        t = r.get("type")
        try:
            if t == "push":
                game.push(game.parse(r["action"]))
                s.marks.append(int(r.get("w", len(s.events))))
            elif t == "pop":
                game.pop()
                s.marks.pop()
            elif t == "resign":
                game.resign(COLOR.index(r["color"]))
            elif t == "reopen":
                game.unresign()
            elif t == "event":
                sq = variant.geometry.parse(r["sq"])
                s.events.append(SquareEvent(ANCIENT, sq, bool(r["placed"])))
                occ = int(r["occ"], 16)
                s.occ_after.append(occ)
            elif t == "board":
                occ = int(r["occ"], 16)
                s.events.clear()
                s.occ_after.clear()
                s.marks[:] = [0] * len(s.marks)
        except (KeyError, ValueError, EngineError) as exc:
            raise JournalError(f"{path}: line {n}: cannot replay {r!r}: {exc}") from None
    s.occupancy = occ
    s.debouncer.reset(occ)
    journal.write({"type": "resume"}, sync=False)
    s._invalidate()
    s._update(now)
    return s
