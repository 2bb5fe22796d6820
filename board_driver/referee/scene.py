"""The LED scene: game state and the reconciler's verdict -> a colour and blink per square (pure).

Layers, lowest first (a later layer wins on a square both light):

==============  ====================  =========================================================
layer           default colour        when
==============  ====================  =========================================================
last move       dim yellow            the squares of the last action seen on the board
drop squares    dim cyan              nothing in hand and the side to move may drop a piece
                                      (csipgs: next to a royal not in check; Chego: neutral
                                      squares that satisfy the drop conditions)
purchase        bright cyan           the drop squares of the piece just bought
territory       dim white / dim blue  game over in a territory game (Chego): empty squares
                                      White / Black controls
points          amber                 points left in a multi-move turn: one LED each on the
                                      spare squares beside the game (or on the back rank's
                                      empty squares when the game fills the board)
source          dim green             pieces that may still take part in the move under way
                                      (the capturers of a lifted victim, a castling rook)
target          green                 where the piece in hand may go
capture         orange                a target holding a piece to be captured
remove          magenta, blinking     pieces to lift off (the victims of a Chego drop)
hold            green                 the squares of a move being held (it may slide on): shown
                                      as soon as it is seen, committed when the hold runs out
prompt          violet, blinking      the squares of a move waiting for a choice (promotion...)
check           red                   each royal piece in check
game over       red blink / green     the mated (or resigned) royal blinks red, the winner's
                / yellow              royals are green; a draw lights every royal yellow; on
                                      time, the flagged side's royals blink red (layer flag)
                                      whether the game is lost or drawn
computer        cyan; blinking on     the computer's action to carry out: its pieces blink
                the pieces to move   where they stand, their destinations are steady, its
                                      victims blink magenta (remove)
mismatch        red / blue, blinking  fast red: take the piece off (or from, in a from->to
                                      pair); fast blue: put a piece here (to)
==============  ====================  =========================================================

Squares outside the game (the spare files of an 8x8 game on the 12x8 board) stay dark
except for the points bar.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from board_driver.devices import DARK, FAST, RGB, SLOW, STEADY, Blink, LedImage
from board_driver.errors import ConfigError
from board_driver.referee.layout import Layout
from board_driver.referee.reconcile import Fix, Verdict
from board_driver.referee.reconcile import VerdictStatus as VS
from engine.contract import ActionKind
from engine.game import Action, Outcome
from engine.moves import CASTLE, DROP


@dataclass(frozen=True, slots=True)
class Palette:
    last_move: RGB = (60, 45, 0)
    drop: RGB = (0, 40, 50)
    purchase: RGB = (0, 160, 200)
    white_area: RGB = (50, 50, 50)
    black_area: RGB = (0, 0, 70)
    points: RGB = (200, 110, 0)
    source: RGB = (0, 50, 0)
    target: RGB = (0, 200, 0)
    capture: RGB = (230, 90, 0)
    remove: RGB = (200, 0, 200)
    hold: RGB = (0, 200, 0)
    prompt: RGB = (140, 0, 255)
    check: RGB = (255, 0, 0)
    lose: RGB = (255, 0, 0)
    win: RGB = (0, 255, 0)
    draw: RGB = (220, 200, 0)
    clear: RGB = (255, 0, 0)
    fill: RGB = (0, 60, 255)
    computer: RGB = (0, 200, 200)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<palette>") -> Palette:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: palette: {data!r}: must be a mapping of layer -> [r, g, b]")
        names = {f.name for f in fields(cls)}
        out = {}
        for k, v in data.items():
            if k not in names:
                raise ConfigError(f"{source}: palette.{k}: unknown layer (known: {', '.join(sorted(names))})")
            if not (isinstance(v, (list, tuple)) and len(v) == 3
                    and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in v)):
                raise ConfigError(f"{source}: palette.{k}: {v!r}: must be [r, g, b] with values 0-255")
            out[k] = tuple(v)
        return cls(**out)

    def name_of(self, color: RGB) -> str:
        """The layer a colour belongs to (for the plain-text legend)."""
        for f in fields(self):
            if getattr(self, f.name) == color:
                return f.name.replace("_", " ")
        return "rgb(%d,%d,%d)" % color


@dataclass(frozen=True, slots=True)
class SceneState:
    """What the scene needs from the confirmed game state (computed once per position)."""

    occupancy: int = 0
    last: frozenset[int] = frozenset()          # squares of the last physical action
    checked: tuple[int, ...] = ()               # royal pieces in check
    drops: frozenset[int] = frozenset()         # legal drop squares of the side to move
    purchase: frozenset[int] = frozenset()      # drop squares of the piece just bought
    outcome: Outcome | None = None
    royals: tuple[tuple[int, int], ...] = ()    # (square, colour) of every royal piece
    territory: tuple[frozenset[int], frozenset[int]] | None = None   # (white's, black's) at game end
    points_left: int | None = None              # multi-move turn
    flagged: int | None = None                  # the side whose flag fell (a game lost or drawn on time)


def scene_of(st, outcome: Outcome | None, drops: frozenset[int], purchase: frozenset[int],
             flagged: int | None = None) -> SceneState:
    """The scene state read off the game's typed view ``st`` (``game.board_state()``):
    ``drops`` are the squares the next physical action may drop a piece on (empty when the
    game is over; after a design phase, the next player's), ``purchase`` those of the piece
    just bought."""
    territory = st.territory if outcome is not None else None
    return SceneState(st.occupancy, st.last, st.checked, drops, purchase, outcome, st.royals,
                      territory, st.points_left, flagged if outcome is not None else None)


def render(layout: Layout, palette: Palette, state: SceneState, verdict: Verdict | None = None,
           recover: Fix | None = None, prompt_squares: frozenset[int] = frozenset()) -> LedImage:
    """The LED frame for one moment: ``verdict`` is the reconciler's view of the board (None or
    settled: the board matches), ``recover`` a fix the player must make before play resumes,
    ``prompt_squares`` the squares of an open prompt."""
    return render_scene(layout, palette, state, verdict, recover, prompt_squares)[0]


def render_scene(layout: Layout, palette: Palette, state: SceneState, verdict: Verdict | None = None,
                 recover: Fix | None = None, prompt_squares: frozenset[int] = frozenset(), *,
                 computer=None) -> tuple[LedImage, tuple[str | None, ...]]:
    """The LED frame and, per physical square, the name of the layer that lit it (or None)."""
    size = layout.physical_size
    colors: list[RGB] = [DARK] * size
    blink = [STEADY] * size
    layers: list[str | None] = [None] * size
    phys = layout.physical

    def put(squares, color: RGB, pattern: Blink = STEADY, layer: str = "") -> None:
        for sq in squares:
            p = phys(sq)
            if p >= 0:
                colors[p] = color
                blink[p] = pattern
                layers[p] = layer

    status = verdict.status if verdict is not None else VS.SETTLED
    idle = status is VS.SETTLED and recover is None
    over = state.outcome is not None

    put(state.last, palette.last_move, layer="last move")
    if idle and not over:
        put(state.drops, palette.drop, layer="drop")
        put(state.purchase, palette.purchase, layer="purchase")
    if over and state.territory is not None:
        put(state.territory[0], palette.white_area, layer="white area")
        put(state.territory[1], palette.black_area, layer="black area")
    if state.points_left and not over:
        spare = layout.spare_squares()
        for p in spare[:state.points_left]:
            colors[p] = palette.points
            blink[p] = STEADY
            layers[p] = "points"

    if verdict is not None and recover is None:
        occ = _occupancy_now(state.occupancy, verdict)
        if status in (VS.PENDING, VS.HOLD, VS.PROMPT, VS.MISMATCH) and verdict.partial:
            for e in verdict.partial:
                places = _mask_of(sq for a in e.actions for sq in a.places)
                lifts = _mask_of(sq for a in e.actions for sq in a.lifts)
                todo_places = [sq for sq in _bits(places) if not (occ >> sq & 1) or (lifts >> sq & 1 and not _lifted(verdict, sq))]
                todo_lifts = [sq for sq in _bits(lifts & ~places) if occ >> sq & 1]
                if todo_places:
                    put(todo_lifts, palette.source, layer="source")
                    for sq in todo_places:
                        capture = bool(state.occupancy >> sq & 1) and bool(lifts >> sq & 1)
                        put([sq], palette.capture if capture else palette.target, layer="capture" if capture else "target")
                else:
                    put(todo_lifts, palette.remove, SLOW, "remove")
        if status is VS.HOLD:
            # the move is shown at once, as held (the hold delays its record, not the LEDs): its
            # squares, where it came from and where it may still slide on from; the last-move
            # colour comes only with the record on disk
            put([sq for a in verdict.options[0].actions for sq in (*a.lifts, *a.places)], palette.hold, layer="hold")
        if status is VS.PROMPT:
            put([sq for e in verdict.options for a in e.actions for sq in a.places], palette.prompt, SLOW, "prompt")
    put(prompt_squares, palette.prompt, SLOW, "prompt")
    if computer is not None and idle and not over:
        # the computer's action for the player to carry out: its pieces blink where they
        # stand, their destinations are lit, victims to lift off blink as removals
        put(computer.places, palette.computer, layer="computer to")
        put(movers(computer), palette.computer, SLOW, "computer from")
        put(victims(computer), palette.remove, SLOW, "remove")

    put(state.checked, palette.check, layer="check")
    if state.outcome is not None:
        win = state.outcome.winner
        for sq, color in state.royals:
            if color == state.flagged:
                put([sq], palette.lose, SLOW, "flag")     # its flag fell: blinks, a draw as much as a loss
            elif win is None:
                put([sq], palette.draw, layer="draw")
            elif color == win:
                put([sq], palette.win, layer="win")
            else:
                put([sq], palette.lose, SLOW, "lose")

    fix = recover if recover is not None else (verdict.fix if verdict is not None and status is VS.MISMATCH else None)
    if fix is not None:
        for a, b in fix.moves:
            put([a], palette.clear, FAST, "clear")
            put([b], palette.fill, FAST, "fill")
        put(fix.clear, palette.clear, FAST, "clear")
        put(fix.fill, palette.fill, FAST, "fill")
    return LedImage(tuple(colors), tuple(blink)), tuple(layers)


def _occupancy_now(confirmed: int, verdict: Verdict) -> int:
    occ = confirmed
    for sq in verdict.lifted:
        occ &= ~(1 << sq)
    for sq in verdict.placed:
        occ |= 1 << sq
    return occ


def _lifted(verdict: Verdict, sq: int) -> bool:
    return sq in verdict.lifted


def _mask_of(squares) -> int:
    m = 0
    for s in squares:
        m |= 1 << s
    return m


def _bits(bb: int):
    while bb:
        low = bb & -bb
        yield low.bit_length() - 1
        bb ^= low


def movers(action: Action) -> frozenset[int]:
    """The squares of the pieces the action moves (not its victims)."""
    m = action.code
    if m < 0:
        return frozenset(sq for sq in action.lifts if sq not in action.places) if action.kind is not ActionKind.DROP else frozenset()
    flag = m >> 24
    if flag == DROP:
        return frozenset()
    out = {m & 0xFF}
    if flag == CASTLE:
        out.add(((m >> 16) & 0xFF) - 1)
    return frozenset(out)


def victims(action: Action) -> frozenset[int]:
    return frozenset(action.lifts) - movers(action)
