"""The computer's side of a game on the board.

A side whose player is an engine spec (``computer``, ``builtin``, ``builtin:LEVEL``, ``random``,
``fsf``, ``fsf:SKILL``, ``uci:COMMAND``: see :mod:`.players`) is played by a
:class:`Computer`. When that side is to move, the session asks it for a plan (the actions of
its whole turn). Silent actions at the head of the plan (a purchase, a design, a pass, the end
of a turn) are applied and announced at once; the next physical action is shown on the LEDs
and in words, and the reconciler accepts only that action for the computer's side (anything
else on the board is a mismatch with the usual guidance). When the player has carried it
out, the next action of the plan is shown, until the turn is over.

The thinking happens in the session's loop: the built-in engine answers within the time
given (``seconds``, default 1), a UCI engine is given the same.
"""

from __future__ import annotations

from engine.game import Action
from engine.moves import CASTLE, DROP

from .players import Player, PlayerError, make_player, parse_spec
from .reconcile import Explanation
from .texts import COLOR


class Computer:
    """The engine players of a game's computer sides, and the plan of the turn under way."""

    def __init__(self, players: dict[int, Player], *, seconds: float = 1.0):
        self.players = dict(players)        # side (0 white, 1 black) -> Player
        self.seconds = seconds
        self.plan: list[Action] = []
        self._at: int | None = None         # history length the plan continues from
        self.errors: list[str] = []

    @classmethod
    def for_players(cls, names: dict[str, str], variant, *, seconds: float = 1.0,
                    fsf_path: str | None = None) -> Computer | None:
        """A Computer for the sides whose player name is an engine spec (None when neither is)."""
        players = {}
        try:
            for side, key in enumerate(COLOR):
                name = (names or {}).get(key) or ""
                if looks_like_spec(name):
                    players[side] = make_player(parse_spec(name), variant, fsf_path=fsf_path)
        except PlayerError:
            for p in players.values():
                p.close()
            raise
        return cls(players, seconds=seconds) if players else None

    def plays(self, side: int) -> bool:
        return side in self.players

    def close(self) -> None:
        for p in self.players.values():
            p.close()

    # -- the session's hook --------------------------------------------------------------------
    def step(self, session) -> bool:
        """After the board is explained: plan the computer's turn when it is to move, apply its
        silent actions and tell the reconciler which action to accept. True when the game
        changed (the session then explains the board again)."""
        g = session.game
        bases = session.bases
        if session.recover or session.outcome() is not None or g.turn not in self.players \
                or session.tentative is not None:
            self._forget(bases)
            return False
        n = len(g.history)
        if self.plan and self._at is not None and n == self._at + 1 and g.history[-1] == self.plan[0]:
            self.plan.pop(0)                # the player carried out the shown action
            self._at = n
        if not self.plan or self._at != n:
            self._think(session)
        changed = False
        while self.plan and self.plan[0].silent and g.turn in self.players and session.outcome() is None:
            a = self.plan.pop(0)
            if a not in g.legal_actions() and a.kind not in ("design", "invent", "setup"):
                self.plan = []
                break
            session.notices.append(f"Computer ({COLOR[g.turn]}): {describe_silent(a)}.")
            session._commit(Explanation(0, (a,)), len(session.events))
            changed = True
            self._at = len(g.history)
        if changed and (g.turn not in self.players or session.outcome() is not None):
            self._forget(bases)
            return True
        nxt = self.plan[0] if self.plan else None
        if nxt is not None and nxt.kind == "setup":
            # an army set-up is recorded at once; the player then sets the pieces up
            self.plan.pop(0)
            session.notices.append(f"Computer ({COLOR[g.turn]}) sets up its army: {nxt.text}.")
            session._commit(Explanation(0, (nxt,)), len(session.events))
            self._at = len(g.history)
            if session.occupancy != g.occupancy():
                session.recover = True
            self._forget(bases)
            return True
        if bases.only != nxt:
            bases.only = nxt
            session._invalidate()
            changed = True
            if nxt is not None:
                session.notices.append(describe_move(session, nxt, self._step_label()))
        return changed

    def _step_label(self) -> str:
        physical = [a for a in self.plan if not a.silent]
        return f" (then {len(physical) - 1} more)" if len(physical) > 1 else ""

    def _forget(self, bases) -> None:
        self.plan = []
        self._at = None
        if bases.only is not None:
            bases.only = None
            bases.invalidate()

    def _think(self, session) -> None:
        g = session.game
        player = self.players[g.turn]
        try:
            plan = list(player.turn(g, self.seconds))
        except (PlayerError, ValueError) as exc:
            msg = f"Computer ({COLOR[g.turn]}) cannot move: {exc}"
            self.errors.append(msg)
            session.notices.append(msg)
            plan = []
        self.plan = plan
        self._at = len(g.history)

    def hint(self):
        """The action the LEDs should show the player to carry out, or None."""
        return self.plan[0] if self.plan and not self.plan[0].silent else None


def movers(action: Action) -> frozenset[int]:
    """The squares of the pieces the action moves (not its victims)."""
    m = action.code
    if m < 0:
        return frozenset(sq for sq in action.lifts if sq not in action.places) if action.kind != "drop" else frozenset()
    flag = m >> 24
    if flag == DROP:
        return frozenset()
    out = {m & 0xFF}
    if flag == CASTLE:
        out.add(((m >> 16) & 0xFF) - 1)
    return frozenset(out)


def victims(action: Action) -> frozenset[int]:
    return frozenset(action.lifts) - movers(action)


def describe_silent(a: Action) -> str:
    k = a.kind
    if k == "buy":
        return f"buys {a.detail[0] if a.detail else a.text[4:]}"
    if k == "design":
        return f"changes a design: {a.text}"
    if k == "pass":
        return "passes"
    if k == "end":
        return "ends its turn"
    if k == "invent":
        return f"invents: {a.text}"
    return a.text


def describe_move(session, a: Action, more: str = "") -> str:
    """What the player is to do on the board for the computer, in words."""
    g = session.game
    name = session.name
    side = COLOR[g.turn]
    try:
        san = g.san(a) if session.san_notices else a.text
    except Exception:
        san = a.text
    parts = []
    mv = sorted(movers(a))
    vic = sorted(victims(a))
    for sq in vic:
        parts.append(f"take the {session.piece_name(sq) or 'piece'} off {name(sq)}")
    if a.kind == "castle" and len(mv) == 2:
        king = a.code & 0xFF
        rook = next(s for s in mv if s != king)
        kto = (a.code >> 8) & 0xFF
        rto = next(iter(set(a.places) - {kto}))
        parts.append(f"move the king from {name(king)} to {name(kto)} and the rook from {name(rook)} to {name(rto)}")
    elif a.kind == "drop":
        to = next(iter(a.places))
        parts.append(f"put a {side} {_piece_title(g, a.piece)} from the reserve on {name(to)}")
    elif mv:
        frm = mv[0]
        to = sorted(a.places)[-1] if a.places else frm
        if a.code >= 0 and a.code >> 24 != DROP:
            to = (a.code >> 8) & 0xFF
        who = session.piece_name(frm) or "the piece"
        parts.append(f"move the {who.split(' ', 1)[-1]} from {name(frm)} to {name(to)}")
        if a.kind == "promotion":
            extra = (a.code >> 16) & 0xFF
            parts[-1] += f" and make it a {g.variant.pieces[extra - 1].name}" if extra and hasattr(g, "variant") else ""
    text = "; ".join(parts) if parts else a.text
    return f"Computer ({side}) plays {san}{more}: {text}."


def _piece_title(game, letter: str) -> str:
    try:
        pv = game.position.variant
        return next(p.name for p in pv.pieces if p.letter == letter.lower()).replace("-", " ")
    except Exception:
        return letter.upper()


def looks_like_spec(name: str) -> bool:
    """A player's name written as an engine spec (``builtin:99`` too, which is then refused
    rather than taken for a person)."""
    head = (name or "").split(":", 1)[0].strip().lower()
    return head in ("builtin", "random", "fsf", "uci", "computer") and (head == name.strip().lower() or ":" in name)


def check_players(names: dict, variant) -> None:
    """PlayerError when a player's engine spec is wrong or cannot play ``variant`` (before a
    game is created for it)."""
    from .players import can_play
    for key in COLOR:
        name = (names or {}).get(key) or ""
        if looks_like_spec(name):
            spec = parse_spec(name)
            why = can_play(spec, variant)
            if why is not None:
                raise PlayerError(f"--{key} {name}: {why}")


def attach(session, *, seconds: float = 1.0, fsf_path: str | None = None) -> Computer | None:
    """Give the session a Computer for the sides its players name by an engine spec (the
    names are kept in the game record, so a resumed game plays on against the computer)."""
    variant = getattr(session.game, "variant", None)
    computer = Computer.for_players(session.players, variant, seconds=seconds, fsf_path=fsf_path)
    if computer is not None:
        session.attach_computer(computer)
    return computer


def carry_out(session, step) -> bool:
    """Do the computer's shown action as a player would, through ``step(kind, square)`` (kind
    ``lift`` or ``place``): victims off, its pieces lifted, then set down on their squares.
    True when there was one. For demonstrations with the computer on both sides."""
    c = session.computer
    a = c.hint() if c is not None else None
    if a is None:
        return False
    name = session.name
    for sq in sorted(victims(a)):
        step("lift", name(sq))
    for sq in sorted(movers(a)):
        step("lift", name(sq))
    for sq in sorted(a.places):
        step("place", name(sq))
    return True
