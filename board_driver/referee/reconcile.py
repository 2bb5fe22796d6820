"""Reconciliation: which legal actions explain what the board shows? (pure)

The board senses occupancy only; the engine knows which piece stands where. The reconciler
takes the confirmed game state (as one or more :class:`Base` snapshots), the debounced
occupancy, the lift/place events since each base was confirmed and the time, and returns a
:class:`Verdict`:

``settled``
    the board shows the confirmed position: nothing to do;
``commit``
    one explanation fits and cannot be extended any more: apply it;
``hold``
    one explanation fits but the move could still be extended (a slider set down on a
    square it may also pass over, a rook moved next to its king, a Chego drop that could
    still kill more): apply it at ``deadline`` unless the board changes;
``prompt``
    several explanations fit the same occupancy (promotion piece, which reserve piece,
    one long step or two short ones in a multi-move turn): the player chooses, ``default``
    says what happens when they do not;
``pending``
    the board is on the way to one or more legal actions (a piece in hand, a victim
    removed, a castling half done);
``mismatch``
    nothing legal explains the board: :class:`Fix` says which squares to clear and fill.

An explanation is a number of physical actions taken back (``depth``) and the actions
played from there. Depth 0 explains the board from the current state (possibly with an
implicit ``end`` of a multi-move turn first, when the opponent has started moving); depth 1
is a takeback, or a *replacement*: a piece set down and picked up again continues the same
move ("Rf1, then the king lifted and set on g1" becomes castling); depth 2 is a double
takeback.

Matching rules, for an action with squares ``lifts`` and ``places`` from a base with
occupancy ``B``:

* exact -- the board equals ``(B - lifts) | places`` and every square in both ``lifts`` and
  ``places`` (a capture's target) has been lifted since the base: a capture is seen as the
  victim leaving, whichever piece was lifted first;
* partial -- every square that changed is one of the action's (emptied squares among
  ``lifts``, filled squares among ``places``): the action may still be under way.

Nothing here guesses: an occupancy that no candidate explains is a mismatch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from board_driver.referee.evidence import EventLog
from engine.contract import ActionKind, TextEnum
from engine.game import Action
from engine.geometry import bits

# -- inputs --------------------------------------------------------------------------------


_FROM_OUTSIDE = (ActionKind.PROMOTION, ActionKind.DROP, ActionKind.SETUP)


def _mask(squares) -> int:
    m = 0
    for s in squares:
        m |= 1 << s
    return m


_MASKS: dict[int, tuple] = {}   # id(action) -> (action, lifts mask, places mask, sources)


def _action_masks(a) -> tuple[int, int, int]:
    """An action's lifts and places as bitboards, and its source squares. Games hand out the
    same Action object for the same move again and again: the masks are kept per object."""
    hit = _MASKS.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[1]
    lm, pm = _mask(a.lifts), _mask(a.places)
    out = (lm, pm, 0 if a.kind in _FROM_OUTSIDE else lm & ~pm)
    if len(_MASKS) >= 50000:
        _MASKS.clear()
    _MASKS[id(a)] = (a, out)
    return out


@dataclass(frozen=True, slots=True)
class Base:
    """A confirmed game state the board may be explained from (a snapshot: no engine calls)."""

    depth: int                          # physical actions taken back to reach it (0: the current state)
    occupancy: int
    actions: tuple[Action, ...]         # the legal actions in this state
    files: int                          # the game's width (for the slide geometry)
    start: int = 0                      # index of the first event of this base's window
    prefix: tuple[Action, ...] = ()     # silent actions played first (an implicit end of turn)
    undone: tuple[tuple[Action, int], ...] = ()   # (physical action taken back, event index of its commit)
    replaceable: bool = False           # depth 1: the last action may be replaced by another
    same_turn: bool = False             # depth 1: the same side is to move here and now (multi-move turn)
    last_side: int = -1                 # depth 0: squares of the side that made the last physical action
    last_to_move: bool = False          # depth 0: and that side is to move again (multi-move turn)
    last_drop: bool = False             # depth 0: the last physical action was a drop
    before_last: int = -1               # the occupancy one physical action further back (-1: none)
    masks: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)
    sources: tuple[int, ...] = field(default=(), compare=False, repr=False)
    after: dict[int, list[int]] = field(default_factory=dict, compare=False, repr=False)
    lifting: dict[int, list[int]] = field(default_factory=dict, compare=False, repr=False)
    placing: dict[int, list[int]] = field(default_factory=dict, compare=False, repr=False)
    victims: int = field(default=0, compare=False, repr=False)     # squares the side to move could capture on

    def __post_init__(self) -> None:
        if not self.masks:
            # (lifts mask, places mask, source squares) per action; the source squares: one of
            # them must be empty before the piece can be set down (a promotion piece or a
            # dropped one comes from outside the board)
            per = [_action_masks(a) for a in self.actions]
            object.__setattr__(self, "masks", tuple((lm, pm) for lm, pm, _ in per))
            object.__setattr__(self, "sources", tuple(src for _, _, src in per))
        # indexes of the actions (made while the board is idle, read by every frame): by the
        # occupancy each leaves, and by each square it lifts from or places on
        b = self.occupancy
        after, lifting, placing = self.after, self.lifting, self.placing
        victims = 0
        for i, (lm, pm) in enumerate(self.masks):
            if not lm and not pm:
                continue
            victims |= lm & pm
            after.setdefault((b & ~lm) | pm, []).append(i)
            for sq in bits(lm):
                lifting.setdefault(sq, []).append(i)
            for sq in bits(pm):
                placing.setdefault(sq, []).append(i)
        object.__setattr__(self, "victims", victims)


@dataclass(frozen=True, slots=True)
class Board:
    """What the board shows: the debounced occupancy and the log of the events that led to it."""

    occupancy: int
    log: EventLog = field(default_factory=EventLog)


@dataclass(frozen=True, slots=True)
class Preferences:
    """What a prompt defaults to when the player does not choose."""

    promotion: tuple[str, ...] = ("q",)     # promotion letters, best first
    drop: tuple[str, ...] = ()              # reserve piece letters to assume, best first
    choice: str | None = None               # the player's choice (``choose n``): a key of an option


# -- outputs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Explanation:
    """Take back ``depth`` physical actions, then play ``actions``."""

    depth: int
    actions: tuple[Action, ...]

    @property
    def physical(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if not a.silent)

    @property
    def label(self) -> str:
        """How a prompt names this option: ``e7e8q``, ``N@e4``, ``takeback``, ``e2e3 e3e4``."""
        shown = [a.text for a in self.physical] or [a.text for a in self.actions]
        if not shown:
            return "takeback" if self.depth == 1 else f"takeback {self.depth}"
        return " ".join(shown)

    def keys(self) -> frozenset[str]:
        """Words a player may ``choose`` this option by."""
        out = {self.label.lower()}
        last = self.physical[-1] if self.physical else None
        if last is not None:
            out.add(last.text.lower())
            if last.promotion:
                out.add(last.promotion.lower())
            elif last.kind in (ActionKind.MOVE, ActionKind.CAPTURE) and last.text[-1:].isalpha():
                out.add(last.text[-1].lower())
            if last.drop:
                out.add(last.drop.lower())
            elif "@" in last.text:
                out.add(last.text.split("@")[0].lower())
        return frozenset(out)

    def squares(self) -> frozenset[int]:
        s: set[int] = set()
        for a in self.actions:
            s |= a.lifts | a.places
        return frozenset(s)

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True, slots=True)
class Fix:
    """What to do to make the board match the confirmed position."""

    moves: tuple[tuple[int, int], ...] = ()   # (from, to): move the piece on ``from`` to ``to``
    clear: tuple[int, ...] = ()               # remove the piece on these squares
    fill: tuple[int, ...] = ()                # put the missing piece back on these squares
    back: tuple[int, ...] = ()                # then (once the moves free them) put the missing piece back here

    @property
    def squares(self) -> frozenset[int]:
        return frozenset(self.clear) | frozenset(self.fill) | frozenset(s for m in self.moves for s in m)


class VerdictStatus(TextEnum):
    """What the reconciler made of the board (:attr:`Verdict.status`)."""

    SETTLED = "settled"         # the board shows the game
    COMMIT = "commit"           # one exact explanation: apply it
    HOLD = "hold"               # one exact explanation that may still slide on: apply it at the deadline
    PROMPT = "prompt"           # several exact explanations: the player chooses (or the default is taken)
    PENDING = "pending"         # a move is under way
    MISMATCH = "mismatch"       # nothing explains the board: the fix says how to restore it


@dataclass(frozen=True, slots=True)
class Verdict:
    status: VerdictStatus                         # settled | commit | hold | prompt | pending | mismatch
    options: tuple[Explanation, ...] = ()         # commit/hold: one; prompt: every fitting explanation
    default: int | None = None                    # prompt: index of the option taken when nobody chooses
    partial: tuple[Explanation, ...] = ()         # candidates still under way (for the LEDs)
    deadline: int | None = None                   # hold: when to commit
    fix: Fix | None = None                        # mismatch (and pending): how to get back to the confirmed position
    lifted: frozenset[int] = frozenset()          # confirmed-occupied squares now empty
    placed: frozenset[int] = frozenset()          # confirmed-empty squares now occupied
    # mismatch: what the board shows was tried, as (from, to) -- a piece moved (to None: only
    # lifted) or set down from off the board (from None); None when it is no one such action
    tried: tuple[int | None, int | None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.status, VerdictStatus):
            object.__setattr__(self, "status", VerdictStatus(self.status))

    @property
    def chosen(self) -> Explanation | None:
        """The explanation to apply now (commit), or after the hold / by default (prompt)."""
        if self.status in (VerdictStatus.COMMIT, VerdictStatus.HOLD):
            return self.options[0]
        if self.status is VerdictStatus.PROMPT and self.default is not None:
            return self.options[self.default]
        return None

    @property
    def exact(self) -> bool:
        return self.status in (VerdictStatus.COMMIT, VerdictStatus.HOLD, VerdictStatus.PROMPT)

    def due(self) -> Verdict:
        """A hold whose deadline has passed with nothing changed: its move committed (what
        :func:`reconcile` answers then)."""
        return Verdict(VerdictStatus.COMMIT, options=self.options, partial=self.partial, lifted=self.lifted,
                       placed=self.placed)


# -- the reconciler ------------------------------------------------------------------------


def window(board: Board, base: Base) -> tuple[int, int, int]:
    """(lifted mask, placed mask, time of the last event) over the events since the base was
    last seen on the board (and not before it was confirmed). Bounded cost: see evidence.py."""
    log = board.log
    start = _wstart(board, base)
    lifted, placed = log.touched_since(start)
    return lifted, placed, (log.last_t if start < len(log) else -1)


def _wstart(board: Board, base: Base) -> int:
    return max(base.start, board.log.last_seen(base.occupancy) + 1)


def _touched_since(board: Board, index: int) -> tuple[int, int]:
    return board.log.touched_since(index)


def _in_order(log: EventLog | None, start: int, src: int, pm: int) -> bool:
    """Was every square of ``pm`` last filled after a source of the move (``src``) was first
    emptied (since event ``start``)? A piece cannot arrive before it leaves: a piece set down
    on the target first (a victim set aside there) and the mover lifted afterwards is not
    this move."""
    if log is None or not src:
        return True
    firsts = [f for f in (log.first_lift_since(s, start) for s in bits(src)) if f >= 0]
    if not firsts:
        return True
    first = min(firsts)
    return all(log.last_place(d) > first for d in bits(pm))


def _scan(base: Base, occ: int, lifted: int, weak_lifted: int = 0, weak: list[int] | None = None,
          log: EventLog | None = None, start: int = 0):
    """Exact and partial actions of one base. A capture's target must have been lifted
    (``lifted``); with ``weak`` given, exact fits whose targets were lifted only as far as
    ``weak_lifted`` shows (earlier in the same position, before the board showed it again;
    -1: nobody watched, every square and any order) go there: they are asked about, never taken."""
    b = base.occupancy
    changed = occ ^ b
    filled = occ & ~b
    emptied = b & ~occ
    exact: list[int] = []
    partial: list[int] = []
    if not changed:
        return exact, partial
    # the candidates: the actions that leave this occupancy, and those that may be under way
    # (every emptied square one they lift from, every filled one one they place on)
    candidates = base.after.get(occ, ())
    if emptied:
        under_way = base.lifting.get((emptied & -emptied).bit_length() - 1, ())
    else:
        under_way = base.placing.get((filled & -filled).bit_length() - 1, ())
    if under_way:
        candidates = sorted(set(candidates).union(under_way)) if candidates else under_way
    masks = base.masks
    for i in candidates:
        lm, pm = masks[i]
        if (b & ~lm) | pm == occ:
            if (lm & pm) & ~lifted == 0 and _in_order(log, start, base.sources[i], pm):
                exact.append(i)
                continue
            if weak is not None and (lm & pm) & ~weak_lifted == 0 and (
                    weak_lifted == -1 or _in_order(log, base.start, base.sources[i], pm)):
                weak.append(i)
        if changed & ~(lm | pm) == 0 and filled & ~pm == 0 and emptied & ~lm == 0:
            src = base.sources[i]
            if filled and src and not src & emptied:
                continue            # a piece set down before any piece that could move there left
            partial.append(i)
    return exact, partial


_MAX_RANKS = 32      # no board is taller


def _coords(sq: int, files: int) -> tuple[int, int]:
    return sq % files, sq // files


def _extendable(base: Base, index: int) -> bool:
    """Could the move ``base.actions[index]`` still be extended by the same piece sliding on?

    True when the piece has another legal destination further along the same line (PicoChess
    holds a move while the piece has other destinations; holding only for those further on
    keeps ordinary moves fast)."""
    lm, pm = base.masks[index]
    if lm & pm:
        return False                     # a capture: the victim was removed, the move ends here
    sources = lm & ~pm
    dests = pm & ~lm
    if not sources or not dests:
        return False
    files = base.files
    if not sources & (sources - 1) and not dests & (dests - 1):
        # one piece from s to d (the usual move): is there a legal destination of the same
        # piece further along the line from s through d?
        s = sources.bit_length() - 1
        rs, fs = divmod(s, files)
        rd, fd = divmod(dests.bit_length() - 1, files)
        df, dr = fd - fs, rd - rs
        if not (df == 0 or dr == 0 or abs(df) == abs(dr)):
            return False                # not along a line
        sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
        beyond = 0
        f, r = fd + sf, rd + sr
        while 0 <= f < files and 0 <= r < _MAX_RANKS:     # (squares off the board match no action)
            beyond |= 1 << (r * files + f)
            f += sf
            r += sr
        masks = base.masks
        return any(masks[j][1] & beyond and masks[j][0] & sources for j in base.lifting.get(s, ()) if j != index)
    return _extendable_general(base, index)


def _extendable_general(base: Base, index: int) -> bool:
    """:func:`_extendable` for any move (several pieces: castling), by every pair of a source
    and another destination of the pieces moving off it."""
    lm, pm = base.masks[index]
    sources = lm & ~pm
    dests = pm & ~lm
    files = base.files
    src = [(s, *divmod(s, files)) for s in bits(sources)]          # (square, rank, file)
    dst = [divmod(d, files) for d in bits(dests)]
    masks = base.masks
    for j in {j for s, _, _ in src for j in base.lifting.get(s, ())}:   # the moves off a source
        if j == index:
            continue
        lm2, pm2 = masks[j]
        further = pm2 & ~pm
        while further:
            low = further & -further
            further ^= low
            r2, f2 = divmod(low.bit_length() - 1, files)
            for s, rs, fs in src:
                if not lm2 >> s & 1:
                    continue
                df, dr = f2 - fs, r2 - rs
                if not (df == 0 or dr == 0 or abs(df) == abs(dr)):
                    continue            # not along a line: the piece does not slide there
                n = max(abs(df), abs(dr))
                sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
                for rd, fd in dst:
                    k = max(abs(fd - fs), abs(rd - rs))
                    if 0 < k < n and fd == fs + k * sf and rd == rs + k * sr:
                        return True     # d lies on the way from s to t2
    return False


def reconcile(bases: Callable[[int], Base | None], board: Board, now: int, *,
              hold_ms: int = 350, prefs: Preferences = Preferences(),
              end_base: Callable[[], Base | None] | None = None) -> Verdict:
    """Explain ``board`` by legal actions from the confirmed state.

    ``bases(k)`` returns the state with ``k`` physical actions taken back (``k`` = 0, 1, 2),
    or None; ``end_base()`` returns the state after an implicit end of a multi-move turn, or
    None. Both are called lazily, only when the nearer explanations fail.

    Evidence for a capture (its target lifted) counts only from events since the current
    position was confirmed: a piece knocked over in an earlier position, or before a
    takeback, is no evidence in this one. When the board fits a capture whose target was
    lifted only before the board showed the position again, or fits a replacement of the
    last action while the opponent's move on the piece just moved may be under way, two
    explanations remain: the verdict asks (a prompt without a default, once the board has
    been still for ``hold_ms``) and takes neither.
    """
    b0 = bases(0)
    assert b0 is not None, "bases(0) is the confirmed state: there always is one"
    occ = board.occupancy
    lifted_sq = frozenset(bits(b0.occupancy & ~occ))
    placed_sq = frozenset(bits(occ & ~b0.occupancy))
    if occ == b0.occupancy:
        return Verdict(VerdictStatus.SETTLED)

    # 1. from the current state
    lifted, placed, last_t = window(board, b0)
    since0, placed0 = board.log.touched_since(b0.start)   # every lift (place) since the position was confirmed
    if board.log.unwatched_since(b0.start):
        since0 = -1     # nobody watched for a while: any square may have been lifted (asked about, never taken)
    weak0: list[int] = []
    ex, pa = _scan(b0, occ, lifted, since0, weak0, log=board.log, start=_wstart(board, b0))
    exact = [(b0, i) for i in ex]
    partial = [(b0, i) for i in pa]
    ambiguous_steps: list[tuple[Base, int]] = []
    ask: list[tuple[Base, int]] = [(b0, i) for i in weak0]
    if exact and ask:
        if since0 == -1:
            # the others are asked only because nobody watched for a while; the exact capture's
            # victim was lifted and a piece landed on its square since: that was seen -- the
            # capture (a knight in the hand at a restart, then set down on one of its targets)
            ask = []
        else:
            # a capture asked about (its victim lifted before the board showed the position again)
            # and another one the same board shows: the piece seemingly in the hand may already
            # have captured (a knocked piece would then read as the second capture) -- ask both
            ask = exact + ask
            exact = []

    b1 = None
    # Taking back or replacing the last action needs a piece of the side that made it picked up.
    own_touched = bool(lifted & b0.last_side)
    if exact and b0.last_to_move and own_touched:
        # a multi-move turn: the piece just set down may be continuing its move (one long step)
        # or making a second move (two short steps) -- both legal is a prompt.
        b1 = bases(1)
        if b1 is not None and b1.replaceable and b1.same_turn:
            last_places = _mask(b1.undone[0][0].places) if b1.undone else 0
            if any(b0.masks[i][0] & last_places for _, i in exact):
                l1, p1, t1 = window(board, b1)
                ex1, _ = _scan(b1, occ, l1 & lifted, log=board.log, start=_wstart(board, b1))
                ambiguous_steps = [(b1, i) for i in _continuations(board, b1, ex1)]
    else:
        # 2. an implicit end of a multi-move turn, then the opponent's action
        eb = end_base() if end_base is not None else None
        if eb is not None:
            ex_e, pa_e = _scan(eb, occ, lifted, log=board.log, start=_wstart(board, b0))
            if ex_e and pa and not exact:
                # the opponent's capture after an implicit end, or a capture of theirs under way
                # (its victim lifted first, the capturer lifted and put back): ask
                ask += [(eb, i) for i in ex_e]
            else:
                exact += [(eb, i) for i in ex_e]
            partial += [(eb, i) for i in pa_e]
        # 3. takebacks and replacements (a replacement's exact fit beats a move under way:
        #    the replaced move's capture looks like a piece in hand from the current state)
        if not exact and (own_touched or since0 & b0.last_side):
            b1 = bases(1)
            if b1 is not None:
                l1, p1, t1 = window(board, b1)
                if occ == b1.occupancy and _undone_touched(board, b1, _wstart(board, b0)):
                    if _knock_like(b1):
                        # the last action only placed pieces (a drop): lifting it off again looks
                        # exactly like a knocked piece, so it is not taken back by itself -- drop
                        # it elsewhere (a replacement), put it back, or say takeback.
                        partial.append((b1, -1))
                    elif b0.occupancy & ~occ & _victims(b0) and board.log.last_t + hold_ms > now:
                        # the piece just moved back where it came from -- or its victim set
                        # aside there for a moment: a takeback once the board has been still
                        return Verdict(VerdictStatus.PENDING, partial=(Explanation(1, ()),), lifted=lifted_sq, placed=placed_sq,
                                       fix=fix_between(b0.occupancy, occ, b0.files), deadline=board.log.last_t + hold_ms)
                    else:
                        return _finish([Explanation(1, ())], [], lifted_sq, placed_sq, now, t1, hold_ms, prefs, None)
                if b1.replaceable and own_touched:
                    # a capture in the replacement needs its target lifted since the board last showed
                    # the current position (a piece knocked and put back is no evidence)
                    ex1, pa1 = _scan(b1, occ, l1 & lifted, log=board.log, start=_wstart(board, b1))
                    repl = [(b1, i) for i in _continuations(board, b1, ex1)]
                    partial += [(b1, i) for i in _continuations(board, b1, pa1)]
                    slid = [(b, i) for b, i in repl if _slid_on(b1, i, placed0)]
                    if repl and pa and not slid:
                        # ... or the opponent is taking the piece just moved (the victim lifted
                        # first, the capturer lifted and put back): ask, do not choose. (A piece
                        # set down on the way from its stop to the new target slid on: no doubt.)
                        ask += repl
                    elif slid:
                        exact += slid
                        last_t = t1
                    elif repl:
                        exact += repl
                        last_t = t1
                if not exact and occ == b1.before_last:
                    b2 = bases(2)
                    if b2 is not None and occ == b2.occupancy and _undone_touched(board, b2, _wstart(board, b0)) and not _knock_like(b2):
                        _, _, t2 = window(board, b2)
                        return _finish([Explanation(2, ())], [], lifted_sq, placed_sq, now, t2, hold_ms, prefs, None)

    def expl(base: Base, i: int) -> Explanation:
        if i < 0:
            return Explanation(base.depth, ())
        return Explanation(base.depth, base.prefix + (base.actions[i],))

    partials = [expl(b, i) for b, i in partial]
    if exact and not ambiguous_steps and lifted & placed & occ & b0.victims:
        # an opponent's piece lifted from a capture's target and a piece set down there: the
        # capture, its victim set down on an empty square for a moment, may be what the board
        # shows -- ask, never commit the other reading (the capture is taken once the victim leaves)
        rivals = _rival_captures(b0, exact, occ, lifted, placed, board.log, _wstart(board, b0))
        if rivals:
            return _ask([expl(b, i) for b, i in exact + rivals], partials, lifted_sq, placed_sq, now,
                        board.log.last_t, hold_ms, prefs, fix_between(b0.occupancy, occ, b0.files), defaulted=False)
    options = [expl(b, i) for b, i in ambiguous_steps] + [expl(b, i) for b, i in exact]
    if not options and ask:
        return _ask([expl(b, i) for b, i in ask], partials, lifted_sq, placed_sq, now, board.log.last_t,
                    hold_ms, prefs, fix_between(b0.occupancy, occ, b0.files))
    if not options:
        retaken = _retaken(board, b0, occ)
        if partials and retaken is None:
            return Verdict(VerdictStatus.PENDING, partial=tuple(partials), lifted=lifted_sq, placed=placed_sq,
                           fix=fix_between(b0.occupancy, occ, b0.files))
        if retaken is not None:
            # a capture the rules do not allow: the piece set down on its target, the victim off
            frm, to = retaken
            return Verdict(VerdictStatus.MISMATCH, fix=Fix(moves=((to, frm),), back=(to,)), lifted=lifted_sq,
                           placed=placed_sq, tried=retaken)
        return Verdict(VerdictStatus.MISMATCH, fix=fix_between(b0.occupancy, occ, b0.files), lifted=lifted_sq,
                       placed=placed_sq, tried=_tried(b0.occupancy, occ))
    extendable = bool(partials) or any(_extendable(b, i) for b, i in exact if not b.prefix)
    if any(b is not b0 for b, _ in exact) and board.log.last_t + hold_ms > now:
        # the opponent's move (after an implicit end) or a replacement that lifted a piece the side
        # to move could capture: maybe a victim set aside for a moment. Not even tentative until
        # the board has been still for the quiet time (a tentative move would be adopted by the
        # capture that follows: the victim set aside would become a move).
        if b0.occupancy & ~occ & _victims(b0):
            return Verdict(VerdictStatus.PENDING, partial=tuple(options) + tuple(partials), lifted=lifted_sq,
                           placed=placed_sq, fix=fix_between(b0.occupancy, occ, b0.files),
                           deadline=board.log.last_t + hold_ms)
    if ambiguous_steps:
        extendable = False
    return _finish(options, partials, lifted_sq, placed_sq, now, last_t, hold_ms, prefs,
                   True if extendable else None, steps=bool(ambiguous_steps))


def _tried(base_occ: int, occ: int) -> tuple[int | None, int | None] | None:
    """The one action a mismatching board shows tried: a piece moved from a square to an empty
    one, only lifted, or set down from off the board; None for anything else."""
    emptied = bits(base_occ & ~occ)
    filled = bits(occ & ~base_occ)
    if len(emptied) > 1 or len(filled) > 1 or not (emptied or filled):
        return None
    return (emptied[0] if emptied else None), (filled[0] if filled else None)


def _retaken(board: Board, b0: Base, occ: int) -> tuple[int, int] | None:
    """A capture tried that no legal action explains: one square emptied since the position
    (the mover's), nothing filled, and an occupied square whose piece was lifted and a piece set
    down there again after the mover left -- the target, its victim now off the board (the
    mover's lift and the victim's in either order). (from, to), or None."""
    emptied = b0.occupancy & ~occ
    if not emptied or emptied & (emptied - 1) or occ & ~b0.occupancy:
        return None
    log = board.log
    start = _wstart(board, b0)
    if log.unwatched_since(start):
        return None                 # nobody watched: the order is unknown
    frm = emptied.bit_length() - 1
    first = log.first_lift_since(frm, start)
    if first < 0:
        return None
    lifted, placed = log.touched_since(start)
    best = None
    for sq in bits(lifted & placed & occ & ~emptied):
        last = log.last_place(sq)
        if last > first and (best is None or last > best[0]):
            best = (last, sq)
    return None if best is None else (frm, best[1])


def _rival_captures(b0: Base, exact: list[tuple[Base, int]], occ: int, lifted: int, placed: int,
                    log: EventLog, start: int) -> list[tuple[Base, int]]:
    """Captures of ``b0`` the board may show instead of its exact fits: the capture's target
    (an opponent's piece, not a square of the exact fit) was lifted and a piece landed there
    since the board last showed the position, and the board is the capture's position but for
    pieces set down meanwhile on empty squares, no more of them than the capture has victims
    (the victim set down for a moment before it leaves the board). Only the few actions placing
    on such a target are looked at."""
    own = 0
    for b, i in exact:
        if b is b0:
            lm, pm = b0.masks[i]
            own |= lm | pm
    if not own:
        return []
    targets = lifted & placed & occ & b0.victims & b0.occupancy & ~own
    out: list[tuple[Base, int]] = []
    start_occ = b0.occupancy
    masks = b0.masks
    taken = {i for base, i in exact if base is b0}
    for v in bits(targets):
        for j in b0.placing.get(v, ()):
            if j in taken:
                continue
            lm, pm = masks[j]
            victims = lm & pm
            if not victims >> v & 1 or victims & ~lifted:
                continue
            after = (start_occ & ~lm) | pm
            extra = occ & ~after
            if after & ~occ or not extra or extra & ~placed or extra.bit_count() > victims.bit_count():
                continue
            if _in_order(log, start, b0.sources[j], pm):
                taken.add(j)
                out.append((b0, j))
    return out


def _victims(base: Base) -> int:
    """Squares the side to move could capture on."""
    return base.victims


def _slid_on(b1: Base, index: int, placed: int) -> bool:
    """Was the piece of the replaced action (from s to d) set down again on a square strictly
    between d and the new action's single target c, on the line from s through d (``placed``:
    the squares set down since)? Then it slid on from its stop."""
    if not b1.undone:
        return False
    last = b1.undone[0][0]
    lm, pm = b1.masks[index]
    src = _mask(last.lifts) & ~_mask(last.places)
    dst = _mask(last.places) & ~_mask(last.lifts)
    if src.bit_count() != 1 or dst.bit_count() != 1 or not lm & src or pm.bit_count() != 1:
        return False
    f = b1.files
    (sf, sr), (df, dr), (cf, cr) = (_coords(x.bit_length() - 1, f) for x in (src, dst, pm))
    n = max(abs(cf - sf), abs(cr - sr))
    step = ((cf > sf) - (cf < sf), (cr > sr) - (cr < sr))
    if (cf - sf, cr - sr) != (step[0] * n, step[1] * n):
        return False                # not a line
    k = max(abs(df - sf), abs(dr - sr))
    if (df - sf, dr - sr) != (step[0] * k, step[1] * k) or not 0 < k < n:
        return False                # the stop is not on the way
    return any(placed >> ((sr + j * step[1]) * f + sf + j * step[0]) & 1 for j in range(k + 1, n))


def _ask(options: list[Explanation], partials: list[Explanation], lifted_sq, placed_sq, now: int,
         last_t: int, hold_ms: int, prefs: Preferences, fix: Fix, defaulted: bool = True) -> Verdict:
    """Two readings remain: a complete action, or a move still under way (a piece in hand, a
    capture whose victim was lifted first). Until the board has been still for ``hold_ms``: a
    move under way. Then a prompt. Its default (the one action, or the first of a promotion's
    pieces) is never taken by itself: only when the player chooses, or when the board moves on
    in a way nothing but it explains (the opponent moved on: the action was made). If the
    piece was in hand, setting it down explains the board without it; putting pieces back
    settles it."""
    if prefs.choice is not None:
        picked = [o for o in options if prefs.choice in o.keys()]
        if picked:
            options = picked
            defaulted = defaulted or len(picked) == 1     # chosen before it was asked
    if now - last_t < hold_ms:
        return Verdict(VerdictStatus.PENDING, partial=tuple(options) + tuple(partials), lifted=lifted_sq, placed=placed_sq,
                       fix=fix, deadline=last_t + hold_ms)
    options = _order(options, prefs, False)
    default = 0 if defaulted and (len(options) == 1 or _has_default(options, prefs, False)) else None
    return Verdict(VerdictStatus.PROMPT, options=tuple(options), default=default, partial=tuple(partials),
                   lifted=lifted_sq, placed=placed_sq)


def _continuations(board: Board, b1: Base, indexes: list[int]) -> list[int]:
    """The actions of ``b1`` that may replace the last action A: the piece A set down was
    picked up again since (a slide going on, a drop moved elsewhere), or the new action
    contains A (castling after the rook was moved first; a Chego drop that kills more).
    A piece knocked over next to the one just dropped never turns the drop into a move."""
    if not b1.undone or not indexes:
        return indexes
    last, mark = b1.undone[0]
    lifted, _ = _touched_since(board, mark)
    lp = _mask(last.places)
    if lp & ~lifted == 0:
        return indexes
    ll = _mask(last.lifts)
    out = []
    for i in indexes:
        lm, pm = b1.masks[i]
        a = b1.actions[i]
        if ll & ~lm == 0 and lp & ~pm == 0 and (ll or (a.kind is last.kind is ActionKind.DROP)):
            out.append(i)
    return out


def _knock_like(base: Base) -> bool:
    """Would undoing the taken-back actions need nothing but lifting pieces off?"""
    return all(not a.lifts for a, _ in base.undone)


def _undone_touched(board: Board, base: Base, floor: int = 0) -> bool:
    """A takeback needs the taken-back pieces picked up and the removed ones put back. A piece
    that only arrived (not on a capture square) must have been picked up since the board last
    showed the current position (``floor``): one lifted and put back before is no evidence (a
    knocked piece). A capture undone shows the position again midway (the capturer off, the
    victim back): for its square, and for the pieces put back, the evidence counts since the
    action."""
    for action, index in base.undone:
        if board.log.unwatched_since(index):
            continue                    # nobody watched: the board alone says it
        lifted, placed = _touched_since(board, index)
        lifted_f, _ = _touched_since(board, max(index, floor))
        pm, lm = _mask(action.places), _mask(action.lifts)
        if (pm & ~lm) & ~lifted_f or (pm & lm) & ~lifted or lm & ~placed:
            return False
    return True


def _finish(options, partials, lifted_sq, placed_sq, now, last_t, hold_ms, prefs, extendable,
            steps: bool = False) -> Verdict:
    if prefs.choice is not None and len(options) > 1:
        picked = [o for o in options if prefs.choice in o.keys()]
        if picked:
            options = picked
    partial = tuple(partials)
    if len(options) == 1:
        if extendable and now - last_t < hold_ms:
            return Verdict(VerdictStatus.HOLD, options=tuple(options), deadline=last_t + hold_ms, partial=partial,
                           lifted=lifted_sq, placed=placed_sq)
        return Verdict(VerdictStatus.COMMIT, options=tuple(options), partial=partial, lifted=lifted_sq,
                       placed=placed_sq)
    options = _order(options, prefs, steps)
    default = 0 if _has_default(options, prefs, steps) else None
    return Verdict(VerdictStatus.PROMPT, options=tuple(options), default=default, partial=partial, lifted=lifted_sq,
                   placed=placed_sq)


def _order(options: list[Explanation], prefs: Preferences, steps: bool) -> list[Explanation]:
    if steps:
        return sorted(options, key=lambda o: (len(o.physical), -o.depth))
    def rank(o: Explanation):
        last = o.physical[-1] if o.physical else None
        if last is None:
            return (9, o.label)
        if last.drop or "@" in last.text:
            letter = (last.drop or last.text.split("@")[0]).lower()
            return (prefs.drop.index(letter) if letter in prefs.drop else len(prefs.drop), o.label)
        letter = (last.promotion or last.text[-1]).lower()
        return (prefs.promotion.index(letter) if letter in prefs.promotion else len(prefs.promotion), o.label)
    return sorted(options, key=rank)


def _has_default(options: list[Explanation], prefs: Preferences, steps: bool) -> bool:
    """Promotions and one-long-step-or-two-short ones have a default; a reserve piece has one
    only when the preferences name it (the piece just bought)."""
    if steps:
        return True
    last = options[0].physical[-1] if options[0].physical else None
    if last is None:
        return False
    if last.drop or "@" in last.text:
        return (last.drop or last.text.split("@")[0]).lower() in prefs.drop
    return last.kind is ActionKind.PROMOTION


def fix_between(expected: int, occ: int, files: int) -> Fix:
    """Pair surplus and missing squares, nearest first: 'move e5 -> e4', then what is left."""
    clear = bits(occ & ~expected)
    fill = bits(expected & ~occ)
    pairs = []
    if clear and fill:
        cands = sorted((max(abs(c % files - f % files), abs(c // files - f // files)), c, f)
                       for c in clear for f in fill)
        used_c, used_f = set(), set()
        for _, c, f in cands:
            if c in used_c or f in used_f:
                continue
            used_c.add(c)
            used_f.add(f)
            pairs.append((c, f))
        clear = [c for c in clear if c not in used_c]
        fill = [f for f in fill if f not in used_f]
    return Fix(tuple(sorted(pairs)), tuple(clear), tuple(fill))


@dataclass
class Tentative:
    """A move the board shows exactly that could still change (a hold, a prompt): applied when
    the hold runs out, the player chooses, or the board can no longer be explained without it."""

    verdict: Verdict
    mark: int           # index in the event log where the board showed it
