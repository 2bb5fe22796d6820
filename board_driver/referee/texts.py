"""The text a player reads: piece and square names, how to fix the board, prompts, notices
of what was played, and the JSON forms of the open prompt or mismatch (``pending``).

Pure functions of the game and the reconciler's values; nothing here changes state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fractions import Fraction

from board_driver.referee.reconcile import Explanation, Fix, Verdict
from board_driver.referee.reconcile import VerdictStatus as VS
from engine.contract import ActionKind
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.contract import Game

COLOR = ("white", "black")


def piece_name(game: Game, sq: int, pm: dict | None = None) -> str | None:
    """``white knight`` for the piece on ``sq`` (of ``pm``, default the game's), or None."""
    pm = pm if pm is not None else game.piece_map()
    if sq not in pm:
        return None
    letter, color = pm[sq]
    try:
        name = game.variant.pieces[game.variant.piece_index(letter)].name
    except (EngineError, ValueError):
        name = letter
    return f"{COLOR[color]} {name.replace('-', ' ')}"


def fix_text(game: Game, fix: Fix | None) -> str:
    """What to do to make the board match the game: move, clear and refill squares."""
    if fix is None:
        return "nothing to fix"
    name = game.geometry.name
    pm = game.piece_map()
    parts = []
    for a, b in fix.moves:
        who = piece_name(game, b, pm) or "the piece"
        parts.append(f"move the piece on {name(a)} to {name(b)} ({who})")
    for sq in fix.clear:
        parts.append(f"clear {name(sq)}")
    for sq in fix.fill:
        parts.append(f"put the {piece_name(game, sq, pm) or 'piece'} back on {name(sq)}")
    for sq in fix.back:
        parts.append(f"then put the {piece_name(game, sq, pm) or 'piece'} back on {name(sq)}")
    return "; ".join(parts) or "nothing to fix"


def option_list(v: Verdict) -> str:
    """``1) e7e8q [default], 2) e7e8n ...``"""
    return ", ".join(f"{i + 1}) {o.label}" + (" [default]" if i == v.default else "")
                     for i, o in enumerate(v.options))


def prompt_text(game: Game, v: Verdict) -> str:
    """The question a prompt asks, with its options and default."""
    opts = v.options
    last = opts[0].physical[-1] if opts[0].physical else None
    if last is not None and last.kind == ActionKind.PROMOTION:
        sq = game.geometry.name(next(iter(last.places)))
        head = f"Promotion on {sq}: which piece?"
    elif last is not None and (last.drop or "@" in last.text):
        head = f"Which piece was dropped on {last.text.split('@')[1]}?"
    elif len({o.depth for o in opts}) > 1:
        head = "One move or two? The piece was set down and moved on:"
    else:
        head = "Which action did you mean?"
    dflt = "" if v.default is None else f" (default {opts[v.default].label}: any next move takes it)"
    return f"{head} choose {option_list(v)}{dflt}"


def prompt_json(game: Game, v: Verdict) -> dict:
    return {"type": "prompt", "text": prompt_text(game, v), "options": [o.label for o in v.options],
            "default": None if v.default is None else v.options[v.default].label}


def refusal(game: Game, v: Verdict) -> str:
    """Why the board's change is no legal action, naming the piece, the squares and the rule
    the family says it breaks ('' when it cannot say): the action the board shows tried
    (``v.tried``: a piece moved, only lifted, or set down from off the board), else the
    squares emptied and filled (a castling)."""
    try:
        if v.tried is not None:
            frm, to = v.tried
            if frm is None:
                return game.why_drop_refused(to) if to is not None else ""
            return game.why_move_refused(frm, to)
        return game.why_refused(v.lifted, v.placed)
    except (AttributeError, EngineError, ValueError, IndexError):
        return ""


def pending_json(game: Game, verdict: Verdict, tentative: Verdict | None, recover: bool) -> dict | None:
    """The open prompt, mismatch or move under way, as JSON-ready data; None when settled.
    ``tentative`` is the verdict of a move waiting to be applied (a prompt), if any."""
    v = verdict
    name = game.geometry.name
    if recover or (v.status == VS.MISMATCH and game.outcome() is None):
        fix = v.fix or Fix()
        return {"type": "mismatch", "text": fix_text(game, fix), "why": "" if recover else refusal(game, v),
                "moves": [[name(a), name(b)] for a, b in fix.moves],
                "clear": [name(s) for s in fix.clear], "fill": [name(s) for s in fix.fill],
                "back": [name(s) for s in fix.back],
                "prompt": prompt_json(game, tentative) if tentative is not None and tentative.status == VS.PROMPT else None}
    if v.status == VS.PROMPT:
        return prompt_json(game, v)
    if v.status == VS.HOLD:
        return {"type": "hold", "move": v.options[0].label, "until": v.deadline}
    if v.status == VS.PENDING and game.outcome() is None:
        return {"type": "move", "text": "a move is under way",
                "lifted": [name(s) for s in sorted(v.lifted)], "placed": [name(s) for s in sorted(v.placed)],
                "candidates": sorted({e.label for e in v.partial})}
    return None


def taken_back_text(game: Game, popped) -> str:
    """``12... Nxe5 (put the white pawn back on e5)``: the actions taken back (``popped``, the
    last first; ``game`` stands where they started), each by its move number and SAN, with the
    pieces it captured that go back on the board."""
    g = game.copy()
    name = g.geometry.name
    parts = []
    for a in reversed(list(popped)):
        try:
            number = int(g.fen().split()[5])
        except (IndexError, ValueError):
            number = 0
        mover = g.turn
        try:
            san = g.san(a) if not a.silent else a.text
        except (EngineError, ValueError):
            san = a.text
        before = g.piece_map()
        try:
            g.push(a)
        except (EngineError, ValueError):
            parts.append(san)
            continue
        after = g.piece_map()
        back = [f"the {piece_name(game, sq, before)} back on {name(sq)}" for sq, (_, color) in sorted(before.items())
                if color != mover and after.get(sq) != before[sq]]
        label = f"{number}{'.' if mover == 0 else '...'} {san}" if number else san
        parts.append(label + (f" (put {' and '.join(back)})" if back else ""))
    return ", ".join(parts)


def announce(expl: Explanation, popped_actions, mover: int, sans: list[str] | None, outcome,
             game: Game | None = None) -> list[str]:
    """The notices of an applied explanation: the move (as ``White: Nf3``), a takeback or a
    replacement, and the result when it ended the game. ``popped_actions``: the actions
    taken back to apply it, last first; ``game`` (after a takeback: where they started) names
    them in SAN with what goes back on the board."""
    notices = []
    phys_popped = [a for a in popped_actions if not a.silent]
    if not expl.actions:
        words = taken_back_text(game, popped_actions) if game is not None else \
            ", ".join(a.text for a in reversed(phys_popped))
        notices.append("Taken back: " + words + ".")
    else:
        names = sans or [a.text for a in expl.actions]
        if phys_popped:
            notices.append(f"{phys_popped[-1].text} replaced by {' '.join(a.text for a in expl.actions)}.")
        else:
            side = COLOR[mover].capitalize() if expl.depth == 0 else ""
            notices.append(f"{side}: {' '.join(names)}" if side else " ".join(names))
    if outcome is not None:
        notices.append(f"Game over: {outcome.result} ({outcome.reason}).")
    return notices


def verdict_notice(game: Game, v: Verdict, recover: bool, outcome) -> str | None:
    """The notice a new verdict deserves: a prompt's question, or how to fix the board."""
    if v.status == VS.PROMPT:
        return prompt_text(game, v)
    if v.status == VS.MISMATCH and outcome is None:
        why = "" if recover else refusal(game, v)
        return (f"Not allowed: {why}. " if why else "") + \
            ("Set the board: " if recover else "The board does not match: ") + fix_text(game, v.fix) + "."
    return None


def _amount(x: Fraction) -> str:
    """3, 2.5, 1/3: a treasury as a player writes it."""
    if x.denominator == 1:
        return str(x.numerator)
    if 10 ** 6 % x.denominator == 0 or (x * 1000).denominator == 1:
        return f"{float(x):g}"
    return str(x)


def _hand_words(hand, names) -> str:
    if not hand:
        return "nothing"
    parts = []
    for letter, n in hand.items():
        name = names.get(letter, letter).replace("-", " ")
        parts.append(f"{name} ({letter.upper()}) unlimited" if n is None else f"{n} x {name} ({letter.upper()})")
    return ", ".join(parts)


def state_lines(game: Game) -> list[str]:
    """The family's state in words, from the typed view: the csipgs phase, treasuries and
    reserves, the Chego hands, points and passes, the movement points left in a turn."""
    st = game.board_state()
    lines = []
    if st.phase is not None:
        lines.append(f"Phase: {COLOR[st.turn]}'s {st.phase} phase.")
    if st.treasuries is not None:
        lines.append(f"Treasuries: White {_amount(st.treasuries[0])}, Black {_amount(st.treasuries[1])} zorkmids.")
    if st.family in ("csipgs", "chego") or any(st.hands):
        word = st.hand_word.capitalize()
        for c in (0, 1):
            lines.append(f"{word} of {COLOR[c].capitalize()}: {_hand_words(st.hands[c], st.piece_names)}.")
    if st.points is not None:
        lines.append(f"Points if the game ended now: White {st.points[0]}, Black {st.points[1]}."
                     + (f" Passes in a row: {st.passes}." if st.passes else ""))
    if st.points_left is not None and st.outcome is None:
        lines.append(f"Movement points left this turn: {st.points_left} of {st.turn_budget}.")
    return lines


def state_json(game: Game) -> dict:
    """The typed view as JSON (``--json``'s ``state``): square names, amounts as decimal
    strings; only the fields the family has."""
    st = game.board_state()
    name = game.geometry.name
    out: dict = {"turn": COLOR[st.turn], "move_number": st.move_number,
                 "drop_squares": [name(s) for s in sorted(st.drop_squares)],
                 "checked": [name(s) for s in st.checked]}
    if st.phase is not None:
        out["phase"] = st.phase
    if st.treasuries is not None:
        out["treasuries"] = {COLOR[c]: _amount(st.treasuries[c]) for c in (0, 1)}
    if st.family in ("csipgs", "chego") or any(st.hands):
        out[st.hand_word + "s"] = {COLOR[c]: {k.upper(): v for k, v in st.hands[c].items()} for c in (0, 1)}
    if st.points is not None:
        out["points"] = {COLOR[c]: st.points[c] for c in (0, 1)}
        out["passes"] = st.passes
    if st.points_left is not None:
        out["points_left"] = st.points_left
        out["turn_budget"] = st.turn_budget
    if st.bought is not None:
        out["bought"] = st.bought.upper()
    return out


def dice_lines(variant_name: str) -> list[str]:
    """For a Random Variant Chess game (``random-A-B-C``): which array the dice chose and why."""
    if not variant_name.startswith("random-"):
        return []
    from engine import random_variant
    try:
        rv = random_variant.select(variant_name[len("random-"):])
    except (ValueError, EngineError):
        return []

    def title(name: str) -> str:
        return " ".join(w.capitalize() for w in name.split("-"))
    dice = "-".join(map(str, rv.dice))
    out = [f"The dice: {dice}. They select Tomorrow's Chess {rv.base}'s array, by the rule: {rv.description}.",
           "Back rank (file a to l): " + ", ".join(title(n) for n in rv.back_rank) + "."]
    stand = [f"{title(q)} as {title(p)}" for p, q in zip(rv.physical, rv.back_rank) if p != q]
    if stand:
        out.append("Stand-ins on the board: " + ", ".join(stand) + ".")
    return out


def catalog(game: Game, view: dict) -> list[dict]:
    """The pieces of this game, for the legend: letter, name, Betza, royal."""
    out = []
    seen = set()
    for p in game.variant.pieces:
        out.append({"letter": p.letter, "name": p.name.replace("-", " "), "betza": getattr(p, "betza", ""),
                    "royal": bool(getattr(p, "royal", False))})
        seen.add(p.letter.lower())
    pieces = view.get("pieces")
    designed = pieces if isinstance(pieces, dict) else {}
    for letter, design in designed.items():
        if isinstance(design, str) and str(letter).lower() not in seen:
            out.append({"letter": str(letter), "name": f"design {design}", "betza": design,
                        "royal": design.startswith("royal-")})
            seen.add(str(letter).lower())
    return out
