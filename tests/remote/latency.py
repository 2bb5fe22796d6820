"""The delays of a remote game, from the lines tests/remote/side.py writes with ``--latency``:
per board and ply, ``event`` (the completing board event, the piece set down, on the mover's
board), ``previewed`` (the mover's board sent its preview), ``sent`` (its record), ``led`` (the
first LED frame showing the move on the other board; ``preview``: it was the preview's) and
``heard`` (the record arrived on the other board's link) and ``taken`` (the other board took
the record in: from then on it accepts the move; a player in the middle of carrying out the
preview then, the piece in the hand, has it taken once it is set down)."""

from __future__ import annotations

import json
from pathlib import Path


def pct(xs: list[float], q: float) -> float | None:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1) if xs else None


def samples(path: Path) -> dict[str, list[float]]:
    """Milliseconds, per figure: ``event_to_led`` (what the other player sees first),
    ``event_to_preview_led`` (the moves previewed), ``event_to_taken`` (the record accepted on the
    other board), ``sent_to_heard`` (the record's way through the broker: sent on one board,
    heard on the other)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    by: dict[str, dict] = {}
    for r in rows:
        for k in ("event", "sent", "previewed"):
            if k in r:
                by.setdefault(k, {})[(r["board"], r["seq"])] = r[k]
    out: dict[str, list[float]] = {"event_to_led": [], "event_to_preview_led": [], "event_to_taken": [],
                                   "sent_to_heard": []}
    other = {"b1": "b2", "b2": "b1"}
    for r in rows:
        if "led" in r:
            ev = by.get("event", {}).get((other[r["board"]], r["seq"]))
            if ev is not None:
                out["event_to_led"].append((r["led"] - ev) * 1000)
                if r.get("preview"):
                    out["event_to_preview_led"].append((r["led"] - ev) * 1000)
        if "taken" in r:
            ev = by.get("event", {}).get((other[r["board"]], r["seq"]))
            if ev is not None:
                out["event_to_taken"].append((r["taken"] - ev) * 1000)
        if "heard" in r:
            sent = by.get("sent", {}).get((other[r["board"]], r["seq"]))
            if sent is not None:
                out["sent_to_heard"].append((r["heard"] - sent) * 1000)
    return out


def figures(path: Path) -> dict:
    s = samples(path)
    out: dict = {"n": len(s["event_to_led"]), "previewed": len(s["event_to_preview_led"])}
    for k, xs in s.items():
        out[f"{k}_p50"], out[f"{k}_p99"] = pct(xs, .5), pct(xs, .99)
    return out
