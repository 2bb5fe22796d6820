"""The selftest's findings: one function for ``fairyboard selftest`` and the page's
``POST /api/hardware/selftest`` (the service runs it on its own open devices).

:func:`config_findings` describes the profile; :func:`device_findings` watches the sensors
for a while (closed and flickering sensors), shows the LED test patterns (every frame through
the sink, so within the profile's brightness and current budget) and reads the link's counters.
Both add what is wrong to ``findings["problems"]``.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from board_driver.devices import DARK, STEADY, LedImage
from engine.geometry import Geometry

LINK_PROBLEMS = ("crc_errors", "framing_errors", "message_errors", "occupancy_lost", "board_errors",
                 "heartbeat_timeouts", "leds_refused")
COLOURS = (("red", (255, 0, 0)), ("green", (0, 255, 0)), ("blue", (0, 0, 255)), ("white", (255, 255, 255)))


def config_findings(board) -> dict[str, Any]:
    """The profile's part: ``{"problems": [...], "config": {...}}``."""
    hw_cfg = board.hardware
    p = board.profile
    findings: dict[str, Any] = {"problems": []}
    findings["config"] = {
        "file": str(board.path), "board": p.name, "size": f"{p.files}x{p.ranks}",
        "sensors": hw_cfg.sensor_backend, "leds": hw_cfg.led_backend,
        "led_order": f"{p.led_order.order} from {p.led_order.first}",
        "calibrated": bool(p.sensor_map) or "calibration" in (board.data.get("hardware") or {}),
        "buttons": [b.pin for b in hw_cfg.buttons.buttons] if hw_cfg.buttons else [],
    }
    cal = (board.data.get("hardware") or {}).get("calibration") or {}
    for text in cal.get("problems") or []:
        if str(text).startswith("REPAIR"):
            findings["problems"].append(f"calibration: {text}")
    return findings


def link_health(serial) -> dict[str, Any] | None:
    """The serial link's counters as JSON values (None: no serial link)."""
    if serial is None:
        return None
    h = serial.health()
    return {k: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v))
            for k, v in ((name, getattr(h, name)) for name in h.__dataclass_fields__)}


def device_findings(findings: dict[str, Any], profile, *, source, leds=None, serial=None, seconds: float = 2.0,
                    sensor_backend: str = "sim", clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep, closed_now=None) -> dict[str, Any]:
    """Watch ``source`` for ``seconds``, show the LED patterns on ``leds`` (None: skipped), read
    the link's counters; ``findings`` gains "sensors", "leds", "link" and its problems.
    ``closed_now`` (a set of sensors) stands for a source that speaks only when something moves."""
    problems = findings.setdefault("problems", [])
    p = profile
    frames = 0
    changes: dict[int, int] = {}
    closed = frozenset(closed_now or ())
    end = clock() + seconds
    first = None
    while source is not None and clock() < end:
        f = source.read(min(0.1, max(0.0, end - clock())))
        if f is None:
            continue
        frames += 1
        if first is None:
            first = closed = f.closed
        for s in f.closed ^ closed:
            changes[s] = changes.get(s, 0) + 1
        closed = f.closed
    geo = Geometry(p.files, p.ranks)
    smap = p.sensor_map or tuple(range(p.size))

    def sname(s: int) -> str:
        return geo.name(smap[s]) if 0 <= s < len(smap) else f"sensor {s}"
    flicker = sorted(s for s, n in changes.items() if n >= 4)
    findings["sensors"] = {"frames": frames, "seconds": seconds, "closed": [sname(s) for s in sorted(closed)],
                           "flickering": [sname(s) for s in flicker]}
    if frames == 0 and sensor_backend != "sim":      # the simulator speaks only when moved
        problems.append(f"sensors: no frame in {seconds} s")
    if flicker:
        problems.append("sensors: flickering " + ", ".join(sname(s) for s in flicker))
    if leds is not None:
        n = p.size
        shown = []
        for name, c in COLOURS:
            leds.show(LedImage((c,) * n, (STEADY,) * n))
            shown.append(name)
            sleep(0.4)
        corners = {0: (255, 0, 0), p.files - 1: (0, 255, 0), n - p.files: (0, 0, 255), n - 1: (255, 255, 255)}
        leds.show(LedImage(tuple(corners.get(i, DARK) for i in range(n)), (STEADY,) * n))
        shown.append("corners a1 red, " + f"{geo.name(p.files - 1)} green, {geo.name(n - p.files)} blue, "
                     f"{geo.name(n - 1)} white")
        sleep(0.8)
        leds.show(LedImage.dark(n))
        findings["leds"] = shown
    link = link_health(serial)
    if link is not None and serial is not None:
        findings["link"] = link
        h = serial.health()
        for name in LINK_PROBLEMS:
            if getattr(h, name, 0):
                problems.append(f"link: {name} = {getattr(h, name)}")
    return findings


def report_lines(findings: dict[str, Any]) -> list[str]:
    """The findings as the CLI prints them."""
    lines = []
    c = findings["config"]
    lines.append(f"config: {c['file']}: board {c['board']} {c['size']}, sensors {c['sensors']}, LEDs {c['leds']} "
                 f"({c['led_order']}), {'calibrated' if c['calibrated'] else 'NOT calibrated'}"
                 + (f", buttons on GPIO {', '.join(map(str, c['buttons']))}" if c["buttons"] else ""))
    s = findings["sensors"]
    lines.append(f"sensors: {s['frames']} frames in {s['seconds']} s; closed now: {', '.join(s['closed']) or 'none'}"
                 + (f"; flickering: {', '.join(s['flickering'])}" if s["flickering"] else ""))
    if "leds" in findings:
        lines.append("LEDs: shown " + "; ".join(findings["leds"]) + " (look: every LED should have lit)")
    if findings.get("link"):
        lines.append("link: " + ", ".join(f"{k} {v}" for k, v in findings["link"].items()))
    problems = findings["problems"]
    lines += [f"PROBLEM: {prob}" for prob in problems]
    lines.append("selftest: " + ("all fine" if not problems else f"{len(problems)} problem(s)"))
    return lines
