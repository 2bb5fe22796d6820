"""The game session: the one owner of the driver's mutable state.

Sensor frames come in (:meth:`Session.on_frame`), time passes (:meth:`Session.tick`),
console or button commands come in (:meth:`Session.command`); the session debounces, asks
the reconciler what the board means, applies actions to the engine, journals them (fsync
before anything is shown), answers prompts, and keeps the LED frame (:attr:`Session.leds`)
and the player-facing notices up to date. Nothing in here sleeps, reads a clock or touches
a device: the runner passes the time in and moves frames between devices and the session.

A move that is exact but could still change (a hold, or a prompt such as a promotion) is
*tentative*: it is applied when the hold runs out, when the player chooses, or as soon as
the board can no longer be explained without it (the opponent has started their move) --
then with its default, if it has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from engine.errors import EngineError, IllegalMoveError
from engine.game import Action, new_game

from .config import load_variant
from .debounce import Debouncer, SquareEvent
from .devices import LedFrame, RawFrame
from .errors import BoardDriverError
from .journal import GameStore, Journal, JournalError, read_records
from .layout import BoardProfile, Layout
from .leds import SceneState, render_scene
from .reconcile import Base, Board, Explanation, Fix, Preferences, Verdict, _fix, reconcile
from .settings import Settings

COLOR = ("white", "black")
# Promotion defaults, best first: the queen, then the strongest pieces of the catalog.
PROMOTION_ORDER = ("q", "z", "c", "j", "i", "a", "y", "r", "t", "o", "f", "u", "l", "g", "b", "n", "h", "m")
ANCIENT = -10 ** 9     # the time of board events restored from a journal: long past

HELP = """\
Board:    lift e2 | place e4 | e2-e4 (lift e2, place e4; an occupied e4 is lifted first)
Commands: choose X    answer a prompt (promotion piece, reserve piece, an option number)
          pass        pass (games that allow it)
          end         end a multi-move turn
          buy X       buy a piece (csipgs)        design N=BETZA / invent ... (csipgs)
          setup ARMY  record an army (Army csipgs: royal-WF@e1,BR@d1,...), then set it up
          takeback    take back the last action, then restore the board as the LEDs show
          resign      the side to move resigns (resign white|black)
          new [VARIANT]  start a new game
          help        this text"""


_WORDS = {"choose", "takeback", "undo", "resign", "help", "?", "pass", "end", "buy", "design", "invent",
          "setup", "new"}


class CommandError(BoardDriverError, ValueError):
    """A console command cannot be carried out now."""


@dataclass
class _Tentative:
    verdict: Verdict
    mark: int           # index in the event log where the board showed it


class Session:
    """One game on one board: debouncer, reconciler, engine, journal and LED scene together."""

    def __init__(self, game, *, variant_name: str, layout: Layout, settings: Settings,
                 journal: Journal | None = None, game_id: str | None = None,
                 store: GameStore | None = None, occupancy: int | None = None, now: int = 0,
                 players: dict[str, str] | None = None, san_notices: bool = True):
        self.game = game
        self.san_notices = san_notices      # name moves in notices as Nf3 (costs an engine push)
        self.variant_name = variant_name
        self.layout = layout
        self.settings = settings
        self.journal = journal
        self.game_id = game_id
        self.store = store
        self.players = players or {"white": "White", "black": "Black"}
        self.now = now
        occ = game.occupancy() if occupancy is None else occupancy
        self.debouncer = Debouncer(settings.debounce_ms, occ)
        self.occupancy = occ
        self.events: list[SquareEvent] = []
        self.occ_after: list[int] = []
        self.marks: list[int] = [0] * len(game.history)   # per history entry: event index where its window starts
        self.choice: str | None = None
        self.tentative: _Tentative | None = None
        self.recover = False                # after a takeback command or a new game: wait for the board
        self.verdict = Verdict("settled")
        self.notices: list[str] = []
        self._mover = 0                     # the side that made the action being announced
        self._bases: dict = {}
        self._scene: SceneState | None = None
        self._last_status: tuple | None = None
        self.leds: LedFrame = LedFrame.dark(layout.physical_size)
        self.led_layers: tuple[str | None, ...] = (None,) * layout.physical_size

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def start(cls, store: GameStore, variant_name: str, *, profile: BoardProfile, settings: Settings,
              occupancy: int | None = None, fen: str | None = None, players: dict[str, str] | None = None,
              date: datetime | None = None, now: int = 0) -> Session:
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

    @classmethod
    def open(cls, store: GameStore, *, profile: BoardProfile, settings: Settings, variant: str | None = None,
             new: bool = False, fen: str | None = None, occupancy: int | None = None,
             players: dict[str, str] | None = None, now: int = 0) -> tuple[Session, bool]:
        """The game to play on a board: the unfinished game in progress (when ``variant`` is None
        or the same, and neither ``new`` nor ``fen`` is given), else a new one (orthodox when no
        variant is named). Returns the session and whether it was resumed."""
        gid = store.current()
        if gid is not None:
            rec = store.load(gid)
            if not rec.finished:
                if not new and not fen and (variant is None or variant == rec.variant):
                    return cls.resume(store, gid, profile=profile, settings=settings, now=now), True
                j = store.open(gid)          # another game is started: this one is abandoned
                j.write({"type": "result", "result": "*", "reason": "abandoned"}, sync=True)
                j.close()
        return cls.start(store, variant or "orthodox", profile=profile, settings=settings, occupancy=occupancy,
                         fen=fen, players=players, now=now), False

    @classmethod
    def resume(cls, store: GameStore, game_id: str, *, profile: BoardProfile, settings: Settings,
               now: int = 0) -> Session:
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
                    s.marks = [0] * len(s.marks)
            except (KeyError, ValueError, EngineError) as exc:
                raise JournalError(f"{path}: line {n}: cannot replay {r!r}: {exc}") from None
        s.occupancy = occ
        s.debouncer.reset(occ)
        journal.write({"type": "resume"}, sync=False)
        s._update(now)
        return s

    # -- inputs -----------------------------------------------------------------------------------
    def on_frame(self, frame: RawFrame) -> None:
        """A raw sensor frame (closed sensor indexes) seen at ``frame.t``."""
        self.now = max(self.now, frame.t)
        occ = self.layout.occupancy(frame.closed)
        self._step(self.debouncer.feed(frame.t, occ))

    def tick(self, now: int) -> None:
        """Time has passed: debounced changes and held moves may be due."""
        self.now = max(self.now, now)
        self._step(self.debouncer.advance(self.now))

    def _step(self, events: list[SquareEvent]) -> None:
        for e in events:
            self._on_event(e)
        d = self.verdict.deadline
        if d is not None and d <= self.now:
            self._update(self.now)
        elif events:
            self._render()

    def next_deadline(self) -> int | None:
        """When :meth:`tick` has something to do, or None."""
        ds = [d for d in (self.debouncer.deadline(), self.verdict.deadline) if d is not None]
        return min(ds) if ds else None

    def _on_event(self, e: SquareEvent) -> None:
        if e.placed:
            self.occupancy |= 1 << e.square
        else:
            self.occupancy &= ~(1 << e.square)
        self.events.append(e)
        self.occ_after.append(self.occupancy)
        if self.journal is not None:
            self.journal.write({"type": "event", "t": e.t, "sq": self.game.geometry.name(e.square),
                                "placed": e.placed, "occ": format(self.occupancy, "x")}, sync=False)
        self._update(e.t, render_leds=False)

    # -- bases (engine snapshots) -------------------------------------------------------------------
    def _base(self, k: int) -> Base | None:
        if k in self._bases:
            return self._bases[k]
        g = self.game
        h = g.history
        if k > 0:
            out = self.outcome()
            if out is not None and out.reason == "resignation":
                self._bases[k] = None
                return None
        i = len(h)
        undone = []
        silent_after = False
        for step in range(k):
            j = i
            while j > 0 and h[j - 1].silent:
                j -= 1
            if j == 0:
                self._bases[k] = None
                return None
            if step == 0 and j != i:
                silent_after = True
            j -= 1
            undone.append((h[j], self.marks[j]))
            i = j
        popped = list(h[i:])
        for _ in popped:
            g.pop()
        try:
            occ, actions, turn = g.occupancy(), tuple(g.legal_actions()), g.turn
        finally:
            for a in popped:
                g.push(a)
        start = self.marks[i - 1] if i > 0 else 0
        last_side, last_to_move, last_drop = -1, False, False
        if k == 0:
            last = next((a for a in reversed(h) if not a.silent), None)
            if last is None:
                last_side = 0
            else:
                last_drop = last.kind == "drop"
                pm = g.piece_map()
                color = next((pm[sq][1] for sq in last.places if sq in pm), None)
                if color is not None:
                    last_side = 0
                    for sq, (_, c) in pm.items():
                        if c == color:
                            last_side |= 1 << sq
                    last_to_move = color == g.turn
        # the occupancy before the physical action preceding this state (no engine call needed:
        # an action's lifts and places undo it)
        before_last = -1
        j = i
        while j > 0 and h[j - 1].silent:
            j -= 1
        if j > 0:
            prev = h[j - 1]
            before_last = occ
            for sq in prev.places:
                before_last &= ~(1 << sq)
            for sq in prev.lifts:
                before_last |= 1 << sq
        base = Base(k, occ, actions, g.geometry.files, start, (), tuple(undone),
                    replaceable=(k == 1 and not silent_after), same_turn=(turn == g.turn),
                    last_side=last_side, last_to_move=last_to_move, last_drop=last_drop,
                    before_last=before_last)
        self._bases[k] = base
        return base

    def prepare(self) -> None:
        """Work ahead while nothing happens on the board: the states a takeback or a replacement
        would be explained from, so that the next frame is answered at once."""
        if self.outcome() is None:
            self._base(1)
            self._end_base()

    def outcome(self):
        """The game's outcome (cached until the game changes)."""
        if "outcome" not in self._bases:
            self._bases["outcome"] = self.game.outcome()
        return self._bases["outcome"]

    def _invalidate(self) -> None:
        self._bases.clear()
        self._scene = None

    def _end_base(self) -> Base | None:
        if "end" in self._bases:
            return self._bases["end"]
        b0 = self._base(0)
        end = next((a for a in b0.actions if a.kind == "end" and a.silent), None)
        base = None
        if end is not None:
            g = self.game
            g.push(end)
            try:
                base = Base(0, g.occupancy(), tuple(g.legal_actions()), g.geometry.files, b0.start, (end,))
            finally:
                g.pop()
        self._bases["end"] = base
        return base

    def _bought(self, legal) -> tuple[str, ...]:
        """The letter of the piece bought last, when it may be dropped now (the default of a
        'which reserve piece?' prompt, and the purchase LEDs)."""
        h = self.game.history
        for idx in range(len(h) - 1, max(-1, len(h) - 8), -1):
            a = h[idx]
            if a.kind == "buy" and a.piece:
                letter = a.piece
                if len(letter) != 1 or not letter.isalpha():
                    pieces = self.game.describe().get("pieces", {}) if hasattr(self.game, "describe") else {}
                    letter = next((k for k, d in pieces.items() if d == a.piece), letter)
                letter = letter.lower()
                if any(x.kind == "drop" and x.piece.lower() == letter for x in legal):
                    return (letter,)
                return ()
        return ()

    def _prefs(self) -> Preferences:
        b0 = self._base(0)
        legal = b0.actions
        if legal and all(a.silent for a in legal):
            eb = self._end_base()
            legal = eb.actions if eb is not None else legal
        return Preferences(promotion=PROMOTION_ORDER, drop=self._bought(legal), choice=self.choice)

    def _verdict(self, now: int) -> Verdict:
        b0 = self._base(0)
        board = Board(self.occupancy, self.events, self.occ_after)
        if self.recover:
            if self.occupancy == b0.occupancy:
                self.recover = False
                self.notices.append("The board matches the game again: play on.")
                return Verdict("settled")
            return Verdict("mismatch", fix=_fix(b0.occupancy, self.occupancy, b0.files))
        return reconcile(self._base, board, now, hold_ms=self.settings.hold_ms, prefs=self._prefs(),
                         end_base=self._end_base)

    # -- applying explanations ------------------------------------------------------------------------
    def _push_mem(self, expl: Explanation, start: int) -> list[tuple[Action, int]]:
        g = self.game
        popped: list[tuple[Action, int]] = []
        for _ in range(expl.depth):
            while g.history and g.history[-1].silent:
                popped.append((g.pop(), self.marks.pop()))
            popped.append((g.pop(), self.marks.pop()))
        for a in expl.actions:
            g.push(a)
            self.marks.append(start)
        self._invalidate()
        return popped

    def _undo_mem(self, expl: Explanation, popped: list[tuple[Action, int]]) -> None:
        g = self.game
        for _ in expl.actions:
            g.pop()
            self.marks.pop()
        for a, m in reversed(popped):
            g.push(a)
            self.marks.append(m)
        self._invalidate()

    def _journal_apply(self, expl: Explanation, popped: list[tuple[Action, int]], start: int,
                       why: str, sans: list[str] | None = None) -> None:
        g = self.game
        if self.journal is not None:
            ply = len(g.history) - len(expl.actions) + len(popped)
            for a, _ in popped:
                ply -= 1
                self.journal.write({"type": "pop", "ply": ply, "action": a.text, "why": why}, sync=False)
            for i, a in enumerate(expl.actions):
                self.journal.write({"type": "push", "ply": ply + i + 1, "action": a.text, "w": start}, sync=False)
            self._journal_result()
            self.journal.sync()
        self.choice = None
        self.tentative = None
        self._announce(expl, popped, sans)

    def _journal_result(self) -> None:
        out = self.outcome()
        if out is not None and self.journal is not None:
            self.journal.write({"type": "result", "result": out.result, "reason": out.reason}, sync=False)

    def _commit(self, expl: Explanation, start: int) -> None:
        sans = self._sans(expl)
        self._mover = self.game.turn
        popped = self._push_mem(expl, start)
        self._journal_apply(expl, popped, start, "replaced" if expl.actions else "takeback", sans)

    def _sans(self, expl: Explanation) -> list[str]:
        """Readable names of the actions, computed in the position they are played from."""
        if expl.depth or not self.san_notices:
            return [a.text for a in expl.actions]
        g = self.game
        out = []
        pushed = 0
        try:
            for a in expl.actions:
                out.append(g.san(a) if not a.silent else a.text)
                g.push(a)
                pushed += 1
        except EngineError:
            pass
        finally:
            for _ in range(pushed):
                g.pop()
        return out

    def _announce(self, expl: Explanation, popped, sans: list[str] | None) -> None:
        phys_popped = [a for a, _ in popped if not a.silent]
        if not expl.actions:
            self.notices.append("Taken back: " + ", ".join(a.text for a in reversed(phys_popped)) + ".")
        else:
            names = sans or [a.text for a in expl.actions]
            if phys_popped:
                self.notices.append(f"{phys_popped[-1].text} replaced by {' '.join(a.text for a in expl.actions)}.")
            else:
                side = COLOR[self._mover].capitalize() if expl.depth == 0 else ""
                self.notices.append(f"{side}: {' '.join(names)}" if side else " ".join(names))
        out = self.outcome()
        if out is not None:
            self.notices.append(f"Game over: {out.result} ({out.reason}).")

    # -- the update step ----------------------------------------------------------------------------
    def _update(self, now: int, render_leds: bool = True) -> None:
        v = self._verdict(now)
        t = self.tentative
        shown = None
        if v.status == "mismatch" and t is not None and not self.recover:
            # Can the board be explained once the tentative move is applied (the opponent has
            # moved on)? Adopt it only if that explains the board exactly; if it merely makes
            # a move under way possible (or a piece was knocked), keep waiting.
            chosen = t.verdict.chosen
            if chosen is not None:
                sans = self._sans(chosen)
                mover = self.game.turn
                popped = self._push_mem(chosen, t.mark)
                v2 = self._verdict(now)
                if v2.status in ("commit", "hold", "prompt", "settled"):
                    self._mover = mover
                    self._journal_apply(chosen, popped, t.mark, "replaced", sans)
                    v = v2
                else:
                    self._undo_mem(chosen, popped)
                    if v2.status == "pending":
                        shown = v2
        for _ in range(4):
            if v.status != "commit":
                break
            self._commit(v.options[0], len(self.events))
            v = self._verdict(now)
        if v.status in ("hold", "prompt"):
            self.tentative = _Tentative(v, len(self.events))
        elif v.status == "settled":
            self.tentative = None
        self.verdict = shown if shown is not None else v
        self._notice_verdict(v)
        if render_leds:
            self._render()

    def _notice_verdict(self, v: Verdict) -> None:
        key = (v.status, tuple(o.label for o in v.options), v.fix, self.recover)
        if key == self._last_status:
            return
        self._last_status = key
        if v.status == "prompt":
            self.notices.append(self.prompt_text(v))
        elif v.status == "mismatch" and self.outcome() is None:
            self.notices.append(("Set the board: " if self.recover else "The board does not match: ") + self.fix_text(v.fix) + ".")

    # -- commands -------------------------------------------------------------------------------------
    def command(self, text: str, now: int | None = None) -> list[str]:
        """Carry out a console command; returns the replies (notices follow via :meth:`drain_notices`)."""
        if now is not None:
            self.now = max(self.now, now)
        words = text.strip().split()
        if not words:
            return []
        cmd, args = words[0], words[1:]
        if cmd.lower() in _WORDS:
            cmd = cmd.lower()
        handler = {
            "choose": self._cmd_choose, "takeback": self._cmd_takeback, "undo": self._cmd_takeback,
            "resign": self._cmd_resign, "help": self._cmd_help, "?": self._cmd_help,
            "pass": self._cmd_silent, "end": self._cmd_silent, "buy": self._cmd_silent,
            "design": self._cmd_silent, "invent": self._cmd_silent, "setup": self._cmd_silent,
            "new": self._cmd_new,
        }.get(cmd)
        if handler is None:
            head = cmd.split(":")[0].lower()
            if head in ("buy", "design", "invent", "pass", "end", "setup"):
                handler = self._cmd_silent
            else:
                raise CommandError(f"unknown command {cmd!r}; type help for the commands")
        replies = handler(cmd, args)
        self._update(self.now)
        return replies

    def _cmd_help(self, cmd, args) -> list[str]:
        return HELP.splitlines()

    def _cmd_choose(self, cmd, args) -> list[str]:
        t = self.tentative
        v = self.verdict
        prompt = v if v.status == "prompt" else (t.verdict if t is not None and t.verdict.status == "prompt" else None)
        key = " ".join(args).lower()
        if prompt is not None:
            opts = list(prompt.options)
            if not key:
                if prompt.default is None:
                    raise CommandError("this prompt has no default: choose one of " + self._option_list(prompt))
                pick = opts[prompt.default]
            elif key.isdigit() and 1 <= int(key) <= len(opts):
                pick = opts[int(key) - 1]
            else:
                key = self._piece_key(key)
                picks = [o for o in opts if key in o.keys()]
                if len(picks) != 1:
                    raise CommandError(f"{' '.join(args)!r} is not one of the options: {self._option_list(prompt)}")
                pick = picks[0]
            mark = t.mark if t is not None and t.verdict is prompt else len(self.events)
            self._commit(pick, mark)
            return [f"Chosen: {pick.label}."]
        if not key:
            raise CommandError("there is no prompt to answer")
        self.choice = self._piece_key(key)
        return [f"Noted: {self.choice} for the next choice (promotion or reserve piece)."]

    def _piece_key(self, key: str) -> str:
        """Piece names become letters: ``queen`` -> ``q``."""
        if len(key) > 1 and key.isalpha() and "@" not in key:
            try:
                return self.game.variant.pieces[self.game.variant.piece_index(key)].letter
            except (EngineError, ValueError, IndexError):
                return key
        return key

    def _option_list(self, v: Verdict) -> str:
        return ", ".join(f"{i + 1}) {o.label}" + (" [default]" if i == v.default else "")
                         for i, o in enumerate(v.options))

    def _ready_for_silent(self, cmd: str) -> None:
        v = self.verdict
        if self.recover or v.status == "mismatch":
            raise CommandError(f"{cmd}: first make the board match the game (" + self.fix_text(v.fix) + ")")
        if v.status == "pending":
            raise CommandError(f"{cmd}: a move is under way on the board: finish it or put the pieces back first")
        if v.status in ("hold", "prompt"):
            chosen = v.chosen
            if chosen is None:
                raise CommandError(f"{cmd}: first answer the prompt: " + self._option_list(v))
            self._commit(chosen, len(self.events))

    def _cmd_silent(self, cmd, args) -> list[str]:
        """pass, end, buy, design, invent, setup: actions the board cannot see."""
        g = self.game
        head = cmd.split(":")[0]
        text = " ".join(args) if head == "setup" else " ".join([cmd] + args)
        out = self.outcome()
        if out is not None:
            raise CommandError(f"{head}: the game is over ({out.result}, {out.reason})")
        try:
            action = g.parse(text)
        except IllegalMoveError as exc:
            if not any(a.kind == head for a in self._base(0).actions) and self._why_not(head):
                raise CommandError(f"{head}: not possible now in {self.variant_name}{self._why_not(head)}") from None
            raise CommandError(str(exc)) from None
        if head == "setup":
            if action.kind != "setup":
                raise CommandError(f"setup: {text!r} is not an army set-up")
            self._ready_for_silent(head)
            self._commit(Explanation(0, (action,)), len(self.events))
            if self.occupancy != g.occupancy():
                self.recover = True
            return ["Army recorded: put the pieces on the squares the LEDs show."]
        if not action.silent:
            raise CommandError(f"{text!r} moves pieces: make that move on the board")
        self._ready_for_silent(head)
        self._commit(Explanation(0, (action,)), len(self.events))
        return []

    def _why_not(self, cmd: str) -> str:
        fam = self.game.family
        if cmd == "end":
            return " (only a multi-move turn ends with end)" if fam != "cost-progressive" else \
                " (no multi-move turn is under way)"
        if cmd in ("buy", "design", "invent", "setup"):
            return " (purchases, designs and armies are csipgs rules)" if fam != "csipgs" else ""
        if cmd == "pass":
            return " (passing is not allowed in this game)"
        return ""

    def _cmd_takeback(self, cmd, args) -> list[str]:
        g = self.game
        out = self.outcome()
        if out is not None and out.reason == "resignation":
            g.unresign()                        # take back the resignation, not a move
            if self.journal is not None:
                self.journal.write({"type": "reopen"}, sync=True)
            self._invalidate()
            return ["The resignation is taken back: play on."]
        if not g.history:
            raise CommandError("takeback: no action to take back")
        popped = []
        while g.history:
            a = g.pop()
            popped.append(a)
            self.marks.pop()
            if a.kind != "end":
                break
        if self.journal is not None:
            ply = len(g.history) + len(popped)
            for a in popped:
                ply -= 1
                self.journal.write({"type": "pop", "ply": ply, "action": a.text, "why": "takeback"}, sync=False)
            self.journal.sync()
        self._invalidate()
        self.tentative = None
        self.choice = None
        if self.occupancy != g.occupancy():
            self.recover = True
        return ["Taken back: " + ", ".join(a.text for a in popped) + "."
                + (" Put the pieces back as the LEDs show." if self.recover else "")]

    def _cmd_resign(self, cmd, args) -> list[str]:
        g = self.game
        if g.outcome() is not None:
            raise CommandError("resign: the game is already over")
        if args:
            if args[0].lower() not in COLOR:
                raise CommandError(f"resign: {args[0]!r}: say resign, resign white or resign black")
            color = COLOR.index(args[0].lower())
        else:
            color = g.turn
        g.resign(color)
        self._invalidate()                      # the cached outcome is stale: the result must reach the journal
        if self.journal is not None:
            self.journal.write({"type": "resign", "color": COLOR[color]}, sync=False)
            self._journal_result()
            self.journal.sync()
        self._invalidate()
        out = g.outcome()
        return [f"{COLOR[color].capitalize()} resigns: {out.result}."]

    def _cmd_new(self, cmd, args) -> list[str]:
        raise NewGameRequest(args[0] if args else self.variant_name)

    # -- views ------------------------------------------------------------------------------------------
    def scene_state(self) -> SceneState:
        if self._scene is not None:
            return self._scene
        g = self.game
        v = g.variant
        h = g.history
        last = next((a for a in reversed(h) if not a.silent), None)
        out = self.outcome()
        pm = g.piece_map()
        royals = []
        for sq, (letter, color) in pm.items():
            try:
                if v.pieces[v.piece_index(letter)].royal:
                    royals.append((sq, color))
            except (EngineError, ValueError):
                pass
        legal = self._base(0).actions if out is None else ()
        if legal and all(a.silent for a in legal):
            # a design phase (or a multi-move turn that can only end): show what the next
            # player may drop
            eb = self._end_base()
            if eb is not None:
                legal = eb.actions
        drops = frozenset(sq for a in legal if a.kind == "drop" for sq in a.places)
        bought = self._bought(legal)
        purchase = frozenset(sq for a in legal if a.kind == "drop" and a.piece.lower() in bought
                             for sq in a.places) if bought else frozenset()
        desc = g.describe() if hasattr(g, "describe") else {}
        territory = None
        if out is not None and isinstance(desc.get("territory"), dict):
            terr = desc["territory"]
            geo = g.geometry
            territory = (frozenset(geo.parse(n) for n in terr.get("white", [])),
                         frozenset(geo.parse(n) for n in terr.get("black", [])))
        points = _points_left(desc)
        self._scene = SceneState(g.occupancy(), frozenset(last.lifts | last.places) if last else frozenset(),
                                 tuple(g.checked_royals()), drops, purchase, out, tuple(sorted(royals)),
                                 territory, points)
        return self._scene

    def _render(self) -> None:
        v = self.verdict
        recover = v.fix if self.recover else None
        shown = None if self.recover else v
        if self.outcome() is not None and v.status in ("mismatch", "pending"):
            shown = None
        prompt_sq = frozenset()
        t = self.tentative
        if t is not None and v.status != "prompt" and t.verdict.status == "prompt" and t.verdict.default is None:
            prompt_sq = frozenset(sq for o in t.verdict.options for a in o.actions for sq in a.places)
        self.leds, self.led_layers = render_scene(self.layout, self.settings.palette, self.scene_state(),
                                                  shown, recover, prompt_sq)

    def drain_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    def name(self, sq: int) -> str:
        return self.game.geometry.name(sq)

    def piece_name(self, sq: int, base_pm: dict | None = None) -> str | None:
        pm = base_pm if base_pm is not None else self.game.piece_map()
        if sq not in pm:
            return None
        letter, color = pm[sq]
        try:
            name = self.game.variant.pieces[self.game.variant.piece_index(letter)].name
        except (EngineError, ValueError):
            name = letter
        return f"{COLOR[color]} {name.replace('-', ' ')}"

    def fix_text(self, fix: Fix | None) -> str:
        if fix is None:
            return "nothing to fix"
        pm = self.game.piece_map()
        parts = []
        for a, b in fix.moves:
            who = self.piece_name(b, pm) or "the piece"
            parts.append(f"move the piece on {self.name(a)} to {self.name(b)} ({who})")
        for sq in fix.clear:
            parts.append(f"clear {self.name(sq)}")
        for sq in fix.fill:
            parts.append(f"put the {self.piece_name(sq, pm) or 'piece'} back on {self.name(sq)}")
        return "; ".join(parts) or "nothing to fix"

    def prompt_text(self, v: Verdict) -> str:
        opts = v.options
        last = opts[0].physical[-1] if opts[0].physical else None
        if last is not None and last.kind == "promotion":
            sq = self.name(next(iter(last.places)))
            head = f"Promotion on {sq}: which piece?"
        elif last is not None and "@" in last.text:
            head = f"Which piece was dropped on {last.text.split('@')[1]}?"
        elif len({o.depth for o in opts}) > 1:
            head = "One move or two? The piece was set down and moved on:"
        else:
            head = "Which action did you mean?"
        dflt = "" if v.default is None else f" (default {opts[v.default].label}: any next move takes it)"
        return f"{head} choose {self._option_list(v)}{dflt}"

    def pending(self) -> dict | None:
        """The open prompt, mismatch or move under way, as JSON-ready data; None when settled."""
        v = self.verdict
        name = self.name
        t = self.tentative
        if self.recover or (v.status == "mismatch" and self.game.outcome() is None):
            fix = v.fix or Fix()
            return {"type": "mismatch", "text": self.fix_text(fix),
                    "moves": [[name(a), name(b)] for a, b in fix.moves],
                    "clear": [name(s) for s in fix.clear], "fill": [name(s) for s in fix.fill],
                    "prompt": self._prompt_json(t.verdict) if t is not None and t.verdict.status == "prompt" else None}
        if v.status == "prompt":
            return self._prompt_json(v)
        if v.status == "hold":
            return {"type": "hold", "move": v.options[0].label, "until": v.deadline}
        if v.status == "pending" and self.game.outcome() is None:
            return {"type": "move", "text": "a move is under way",
                    "lifted": [name(s) for s in sorted(v.lifted)], "placed": [name(s) for s in sorted(v.placed)],
                    "candidates": sorted({e.label for e in v.partial})}
        return None

    def _prompt_json(self, v: Verdict) -> dict:
        return {"type": "prompt", "text": self.prompt_text(v), "options": [o.label for o in v.options],
                "default": None if v.default is None else v.options[v.default].label}

    def report(self) -> dict:
        g = self.game
        out = g.outcome()
        return {
            "variant": self.variant_name, "game": self.game_id,
            "moves": [a.text for a in g.history], "fen": g.fen(),
            "turn": COLOR[g.turn], "result": out.result if out else None,
            "reason": out.reason if out else None, "pending": self.pending(),
            "journal": str(self.journal.path) if self.journal is not None else None,
        }

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()


class NewGameRequest(Exception):
    """Raised by the ``new`` command: the runner replaces the session (it owns the devices)."""

    def __init__(self, variant: str):
        super().__init__(variant)
        self.variant = variant


def _points_left(desc: dict) -> int | None:
    for key in ("points_left", "movement_points_left", "left"):
        v = desc.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None
