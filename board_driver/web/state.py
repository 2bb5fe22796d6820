"""The snapshot of a session that ``GET /api/state`` answers and the WebSocket pushes.

Built in the board loop's thread (the session's owner) and handed to the web thread as a plain
JSON-ready dict, so the web side never touches the session. The fields of ``play --json``
come first (variant, game, moves, fen, turn, result, reason, pending, journal); the rest is
what the page draws. docs/web.md lists every field.
"""

from __future__ import annotations

import dataclasses
import enum
import weakref
from typing import TYPE_CHECKING, Any

from board_driver.devices import BLINK_NAMES
from board_driver.referee.texts import catalog
from engine.contract import ActionKind
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.contract import Game
    from board_driver.referee.session import Session

# What each LED layer means, in words (the page's legend; layer names come from leds.py).
MEANINGS = {
    "last move": "the last move's squares",
    "drop": "a piece may be dropped here",
    "purchase": "the piece just bought may be dropped here",
    "white area": "White's territory",
    "black area": "Black's territory",
    "points": "movement points left in this turn",
    "source": "this piece may still take part in the move",
    "target": "the piece in hand may go here",
    "capture": "a capture: the piece here is taken",
    "remove": "lift this piece off the board",
    "hold": "the move is held here: it may still slide on",
    "prompt": "this move waits for a choice",
    "check": "in check",
    "win": "the winner's royal piece",
    "lose": "the loser's royal piece",
    "flag": "the royal piece of the side whose flag fell",
    "draw": "a drawn game",
    "clear": "take the piece off this square",
    "fill": "put a piece on this square",
    "computer from": "the computer's move: lift this piece",
    "computer to": "the computer's move: put the piece here",
}

NOTICE_KEEP = 40


def _decimal(x) -> str:
    from engine.csipgs_cost import decimal
    return decimal(x)


def _hex(rgb) -> str:
    return "#%02x%02x%02x" % tuple(rgb)


def jsonable(value: Any) -> Any:
    """Dataclasses, enums, sets and tuples as JSON values (for the family's typed view)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, (str, int)) else value.name.lower()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def family_view(game: Game) -> dict:
    """The family's own state: reserves, hands, treasuries, phase, points left, ..."""
    view = getattr(game, "view", None)
    if callable(view):
        try:
            v = jsonable(view())
            if isinstance(v, dict):
                return v
        except (EngineError, TypeError, ValueError, AttributeError):
            pass
    return jsonable(game.describe())


def army_rules(game: Game) -> dict | None:
    """Army csipgs: the budget and the number of pieces each army has (None in other games)."""
    army = getattr(getattr(game, "rules", None), "army", None)
    if army is None:
        return None
    return {"budget": _decimal(army.budget), "pieces": army.pieces, "setup": army.setup,
            "second_row": army.second_row, "second_row_max": _decimal(army.second_row_max)}


def computer_move(session: Session) -> dict | None:
    """The computer's move the player is to carry out on the board: its action and, in words,
    what to do (None when the computer has nothing to show)."""
    comp = session.computer
    if comp is None or session.recover:
        return None
    hint = comp.hint()
    if hint is None:
        return None
    from board_driver.opponents.computer import describe_move
    from board_driver.referee.texts import COLOR
    peer = comp.peer                        # a remote opponent: named by its board, as its notice names it
    head = f"{peer} ({COLOR[session.game.turn]}) plays" if peer is not None else None
    try:
        text = describe_move(session, hint, head=head)
    except (EngineError, ValueError, KeyError):
        text = hint.text
    return {"move": hint.text, "text": text}


def remote_requests(session: Session) -> dict | None:
    """A remote game's open takeback request or draw offer, either way (docs/remote.md), else None."""
    comp = session.computer
    peer = comp.peer_player() if comp is not None else None
    return peer.requests() if peer is not None else None


HINT_MEANINGS = {"computer from": "the hint's move: lift this piece",
                 "computer to": "the hint's move: put the piece here"}


def hint_move(session: Session) -> dict | None:
    """The hint shown on the board (the ``hint`` command's, lit like the computer's move until
    the game moves on): its action, what to do in words and the ply it is for; None when no
    hint is shown now."""
    shown = session.hint_shown
    if shown is None or session.recover or session.outcome() is not None:
        return None
    at, action = shown
    g = session.game
    if action is None or at != len(g.history):
        return None
    from board_driver.opponents.computer import describe_move
    from board_driver.referee.texts import COLOR
    try:
        text = describe_move(session, action, head=f"Hint for {COLOR[g.turn]}:")
    except (EngineError, ValueError, KeyError):
        text = action.text
    return {"move": action.text, "text": text, "ply": at}


def dice_of(variant_name: str) -> list[int] | None:
    """Random Variant Chess: the three dice of a ``random-A-B-C`` game, else None."""
    parts = variant_name.split("-")
    if len(parts) == 4 and parts[0] == "random" and all(p.isdigit() and 1 <= int(p) <= 6 for p in parts[1:]):
        return [int(p) for p in parts[1:]]
    return None


# The moves' names (SAN) of each session's game, kept between snapshots: a snapshot names only
# the actions added since the last one (a takeback or a new game starts again from the start).
_SANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def sans_of(session: Session) -> list[tuple[int, Any, str]]:
    """(turn, action, SAN) of every action of the session's game, as ``pgn.replay`` gives them
    for a saved game; an action that cannot be named keeps its engine notation."""
    g = session.game
    history = list(g.history)
    texts = [a.text for a in history]
    try:
        key, known, done = _SANS[session]
    except (KeyError, TypeError):
        key, known, done = None, [], []
    if key != session.game_id or texts[:len(known)] != known:
        known, done = [], []
    done = list(done[:len(texts)])
    if len(done) < len(texts):
        try:
            c = g.copy()
            for _ in range(len(texts) - len(done)):
                c.pop()
            for a in history[len(done):]:
                done.append((c.turn, a, c.san(a) if not a.silent else a.text))
                c.push(a)
        except (EngineError, ValueError, AttributeError, IndexError, KeyError):
            done += [(None, a, a.text) for a in history[len(done):]]
    try:
        _SANS[session] = (session.game_id, texts, done)
    except TypeError:
        pass
    return done


def numbered(sans, start_fullmove: int = 1) -> list[str]:
    """Each action's label with its move number, as a chess reader expects: ``1. e4``,
    ``1... e5`` (a side's further actions in one turn, csipgs' purchases, Cost Progressive's
    moves, share the number)."""
    out = []
    number = start_fullmove
    prev = None
    for turn, _action, san in sans:
        if prev is not None and turn == 0 and prev == 1:
            number += 1
        out.append(f"{number}. {san}" if turn == 0 else f"{number}... {san}")
        prev = turn
    return out


def _legal(session: Session) -> list:
    if session.outcome() is not None:
        return []
    bases = session.bases                       # the session's cached reconciler inputs
    try:
        b0 = bases.base(0)
        if b0 is not None:
            return list(b0.actions)
    except (EngineError, AttributeError, TypeError):
        pass
    return list(session.game.legal_actions())


def snapshot(session: Session, *, sim: bool, version: int, notices: list[dict], extra: dict | None = None) -> dict:
    """Everything the page shows, as JSON-ready data."""
    g = session.game
    geo = g.geometry
    name = geo.name
    report = session.report()
    view = family_view(g)
    pm = g.piece_map()
    occ = session.occupancy
    pieces = {}
    for sq, (letter, color) in sorted(pm.items()):
        pieces[name(sq)] = letter.upper() if color == 0 else letter.lower()
    on_board = [name(sq) for sq in geo.squares() if occ >> sq & 1]
    leds = {}
    layout = session.layout
    frame = session.leds
    layers = session.led_layers
    for sq in geo.squares():
        if sq in geo.holes:
            continue
        p = layout.physical(sq)
        if p < 0 or frame.colors[p] == (0, 0, 0):
            continue
        layer = layers[p] if p < len(layers) else None
        leds[name(sq)] = {"color": _hex(frame.colors[p]), "blink": BLINK_NAMES.get(frame.blink[p], "steady"),
                          "layer": layer, "meaning": MEANINGS.get(layer or "", "")}
    legal = _legal(session)
    scene = session.scene_state()
    sans = sans_of(session)
    from board_driver.pgn import fullmove, movetext
    start = fullmove(getattr(g, "start_fen", None))
    computer = computer_move(session)
    hint = hint_move(session) if computer is None else None
    if hint is not None:            # the hint is lit in the computer's colours: its legend says so
        for led in leds.values():
            led["meaning"] = HINT_MEANINGS.get(led["layer"] or "", led["meaning"])
    peer = session.computer.peer if session.computer is not None else None
    if computer is not None and peer:   # a remote opponent's move: named by its board, not as the computer's
        for led in leds.values():
            if (led["layer"] or "").startswith("computer"):
                led["meaning"] = str(led["meaning"] or "").replace("the computer's move", f"{peer}'s move")
    out = dict(report)
    out.update({
        "san": [t for _, _, t in sans],
        "movetext": movetext(sans, start) if all(t is not None for t, _, _ in sans) else " ".join(t for _, _, t in sans),
        "version": version,
        "family": g.family,
        "description": getattr(g.variant, "description", "") or "",
        "players": dict(session.players),
        "board": {"files": geo.files, "ranks": geo.ranks, "holes": sorted(name(h) for h in geo.holes)},
        "pieces": pieces,
        "occupied": on_board,
        "lifted": [s for s in pieces if s not in set(on_board)],
        "extra": [s for s in on_board if s not in pieces],
        "check": [name(sq) for sq in scene.checked],
        "leds": leds,
        "legal": [a.text for a in legal],
        "actions": sorted({str(getattr(a.kind, "value", a.kind)) for a in legal}),
        "buy": [{"design": a.detail.design, "price": _decimal(a.detail.price), "letter": a.piece,
                 "command": f"buy {a.detail.design}"}
                for a in legal if a.kind is ActionKind.BUY and hasattr(a.detail, "design") and hasattr(a.detail, "price")],
        "view": view,
        "catalog": catalog(g, view),
        "notices": notices[-NOTICE_KEEP:],
        "sim": sim,
        "dice": dice_of(session.variant_name),
        "computer": computer,
        "hint": hint,
        "remote": remote_requests(session),
        "army": army_rules(g),
    })
    if extra:
        out.update(extra)
    return out
