"""Commands for the real board: ``calibrate``, ``selftest`` (``doctor``), ``serve`` and
``install-service``.

``serve`` is what the systemd unit runs: the board's devices from the profile, the game in
progress resumed (or a new one), buttons as commands, notices to stdout (the journal under
systemd), until SIGTERM or SIGINT; then the game's journal is closed (every committed action
was already on disk with fsync), the LEDs go dark and the devices are released.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from board_driver.errors import BoardDriverError, ConfigError
from board_driver.maintenance.install import ENV_FILE, HARDWARE_DIR, UDEV_NAME, UNIT_NAME, render_unit, user_exists

if TYPE_CHECKING:       # pragma: no cover
    from board_driver.referee.runner import LoopCommand
    from board_driver.web.context import BoardTools



def register(sub) -> None:
    p = sub.add_parser(
        "calibrate", help="walk through the board: map sensors to squares, check the LED order",
        description="Lights (or names) each square in turn and asks for a piece there, records which "
                    "sensor responds, finds dead, stuck, doubled and swapped sensors, checks the LED "
                    "chain's order with test patterns, and writes the calibrated board profile.")
    p.add_argument("--board", help="board profile: a name in configs/boards or a file "
                                   "(default: $FAIRYBOARD_BOARD, else /etc/fairyboard/board.yaml)")
    p.add_argument("--out", help="where to write the calibrated profile (default: the --board file "
                                 "when it is a file, else $FAIRYBOARD_CONFIG_DIR/board.yaml)")
    p.add_argument("--square", action="append", default=[], metavar="SQ",
                   help="re-run these squares only (repeatable), keeping the other readings")
    p.add_argument("--no-leds", action="store_true", help="do not use or check the LEDs: name the squares")
    p.add_argument("--diodes", action="store_true",
                   help="after the walk, the three-piece rectangle test around every square: finds missing or "
                        "shorted diodes, which one piece at a time cannot show (three pieces per square)")
    p.add_argument("--diode", action="append", default=[], metavar="SQ",
                   help="the rectangle test around these squares only (repeatable)")
    p.add_argument("--settle", type=float, default=0.3, help="seconds a reading must hold (default 0.3)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a piece (default 30)")
    p.set_defaults(handler=cmd_calibrate)

    for name in ("selftest", "doctor"):
        p = sub.add_parser(
            name, help="check the board: config, sensors, LEDs, link counters",
            description="Checks the board profile, opens the devices, watches the sensors for a while "
                        "(closed and flickering sensors), shows LED test patterns and prints the link's "
                        "counters. Exit code 0: all fine; 1: problems found (a profile that does not "
                        "validate is the first); 2: a device cannot be opened, or a bad argument.")
        p.add_argument("--board", help="board profile (as for calibrate)")
        p.add_argument("--seconds", type=float, default=2.0, help="how long to watch the sensors (default 2)")
        p.add_argument("--no-leds", action="store_true", help="skip the LED test patterns")
        p.add_argument("--json", action="store_true", help="print the findings as one JSON object")
        p.set_defaults(handler=cmd_selftest)

    p = sub.add_parser(
        "serve", help="run the board: the game on the real board until stopped (what the service runs)",
        description="Opens the board's devices, resumes the game in progress (or starts one), and "
                    "referees it: sensors in, LEDs and notices out, buttons as commands. Stops cleanly "
                    "on SIGTERM or SIGINT.")
    p.add_argument("--board", help="board profile (as for calibrate)")
    p.add_argument("--variant", help="variant of a new game (default: the game in progress, else orthodox)")
    p.add_argument("--new", action="store_true", help="start a new game even if one is in progress")
    p.add_argument("--resume", metavar="ID", help="continue the game ID (an unfinished or abandoned one)")
    from board_driver.cli.play_cmds import add_pgn_args
    add_pgn_args(p)
    p.add_argument("--white", help="white player's name (kept in the game record and the PGN), or an engine "
                                   "spec: computer, builtin[:LEVEL] (LEVEL 1 to 20), random, fsf[:SKILL] (SKILL -20 to 20), "
                                   "uci:COMMAND; remote:BOARD, the player on another board (docs/remote.md)")
    p.add_argument("--black", help="black player's name, or an engine spec (--black computer)")
    from board_driver.cli.play_cmds import add_clock_args, add_move_time_arg
    add_move_time_arg(p)
    add_clock_args(p)
    p.add_argument("--web", metavar="HOST:PORT", help="serve the board's page here (docs/web.md; default: the "
                                                     "board profile's web.listen, else no page)")
    p.add_argument("--events", metavar="FILE",
                   help="on the simulated board (--board sim): play this JSON-lines event script on the served "
                        "game at its times (t: milliseconds since the service started)")
    p.set_defaults(handler=cmd_serve)

    p = sub.add_parser(
        "install-service", help="install the systemd unit, the udev rule and /etc/fairyboard on a Pi",
        description="Writes /etc/systemd/system/fairyboard.service, /etc/udev/rules.d/99-fairyboard.rules, "
                    "/etc/fairyboard/board.yaml (a copy of --board, kept if present) and "
                    "/etc/fairyboard/fairyboard.env, byte-compiles the installed packages (faster start-up), "
                    "then reloads systemd and udev and enables the service. "
                    "--root DIR writes under DIR instead and runs nothing; --dry-run only prints.")
    p.add_argument("--root", default="/", help="install under this directory (default /)")
    p.add_argument("--dry-run", action="store_true", help="print what would be done, change nothing")
    p.add_argument("--user", default=None, help="user the service runs as (default: $SUDO_USER, else fairyboard)")
    p.add_argument("--board", default="gpio-12x8", help="profile to copy to /etc/fairyboard/board.yaml "
                                                        "(default gpio-12x8; pico-serial for the Pico board)")
    p.add_argument("--bin", default=None, help="the fairyboard executable the unit runs "
                                              "(default: the one next to this Python)")
    p.add_argument("--no-start", action="store_true", help="enable the service but do not start it now")
    p.add_argument("--create-user", action="store_true",
                   help="create the service user if it does not exist (a system user in groups dialout, gpio, spi)")
    p.set_defaults(handler=cmd_install_service)


# --- calibrate ----------------------------------------------------------------------------------

class ConsolePrompter:
    """The wizard's voice on a terminal: print, and read a line for each question."""

    def __init__(self, out=None, inp=None) -> None:
        self.out = out or sys.stdout
        self.inp = inp or sys.stdin

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def ask(self, text: str) -> str:
        print(f"{text} ", end="", file=self.out, flush=True)
        line = self.inp.readline()
        if not line:
            from board_driver.maintenance.calibrate import CalibrationAborted
            raise CalibrationAborted("no more input: calibration stopped")
        return line.rstrip("\n")


def cmd_calibrate(args) -> int:
    from board_driver.hardware.backends import load_board, open_hardware
    from board_driver.maintenance.calibrate import ChainLeds, Wizard, calibration_plan, write_calibration

    board = load_board(args.board)
    out, squares, previous, rectangles = calibration_plan(board, args.out, args.square, args.diode, args.diodes)
    p = board.profile
    hw = open_hardware(board)
    try:
        leds = None if args.no_leds or not isinstance(hw.leds, ChainLeds) else hw.leds
        ui = ConsolePrompter()
        wizard = Wizard(hw.source, ui, files=p.files, ranks=p.ranks, leds=leds,
                        led_order=p.led_order, settle=args.settle, square_timeout=args.timeout)
        cal = wizard.run(squares, previous=previous, check_leds=leds is not None, rectangles=rectangles)
    finally:
        hw.close()
    write_calibration(board, cal, out)
    for line in cal.report():
        print(line)
    print(f"Written to {out}.")
    return 0 if cal.ok else 1


# --- selftest -----------------------------------------------------------------------------------

def cmd_selftest(args) -> int:
    from board_driver.hardware.backends import load_board, open_hardware
    from board_driver.maintenance.selftest import (
        config_findings,
        device_findings,
        report_lines,
    )

    try:
        board = load_board(args.board)
    except ConfigError as exc:             # a broken profile is the selftest's first finding
        if args.json:
            print(json.dumps({"problems": [f"config: {exc}"]}))
        else:
            print(f"PROBLEM: config: {exc}")
            print("selftest: 1 problem(s)")
        return 1
    findings = config_findings(board)
    hw = open_hardware(board)
    try:
        device_findings(findings, board.profile, source=hw.source,
                        leds=None if args.no_leds else hw.leds, serial=hw.serial, seconds=args.seconds,
                        sensor_backend=board.hardware.sensor_backend)
    finally:
        hw.close()
    if args.json:
        print(json.dumps(findings))
    else:
        for line in report_lines(findings):
            print(line)
    return 1 if findings["problems"] else 0


# --- serve --------------------------------------------------------------------------------------

class NullLeds:
    """An LED sink for a board without LEDs."""

    def __init__(self, count: int) -> None:
        self.led_count = count

    def show(self, frame) -> None:
        pass

    def close(self) -> None:
        pass


def cmd_serve(args) -> int:
    """The service: the board's devices, the game host, the page and the club's broker when the
    profile or the command line asks for them, until SIGTERM or SIGINT."""
    import logging

    from board_driver.club.broker import broker_of
    from board_driver.club.publisher import check_board, start_for_board
    from board_driver.hardware.backends import load_board, open_hardware
    from board_driver.host.game_host import GameHost, GameRequest, HardwareSeat, SimSeat
    from board_driver.host.link import WatchedSource, setup_logging
    from board_driver.journal import GameStore, data_dir
    from board_driver.referee.runner import LoopQueue
    from board_driver.settings import load_settings
    from board_driver.web.bridge import Notices
    from board_driver.web.board_io import OverlaySink
    from board_driver.web.service import WebConfig, WebFront, hardware_info, monotonic_ms, scripted

    setup_logging()
    log = logging.getLogger("board_driver.host")
    board = load_board(args.board)
    check_board(board)
    settings = load_settings()
    store = GameStore(data_dir())
    if args.resume is not None:
        store.path(args.resume)                     # a clear error for anything that is not a game id
    web_cfg = WebConfig.from_dict(board.data.get("web"), str(board.path))     # checked before any device opens
    sim = board.hardware.sensor_backend == "sim"
    if args.events is not None and not sim:
        raise BoardDriverError("--events plays on the simulated board only (--board sim)")
    lock = store.lock("fairyboard serve")           # one process per data folder
    stop = threading.Event()
    commands = LoopQueue()                          # a command wakes the idle loop where it waits (runner.py)

    def on_signal(signum, frame) -> None:
        print(f"fairyboard: {signal.Signals(signum).name}: stopping after this frame", flush=True)
        stop.set()
        commands.wake()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def say(line: str) -> None:
        print(line, flush=True)

    host = club = front = hw = None
    listen = args.web or web_cfg.listen             # the board's page (docs/web.md)
    try:
        seat: SimSeat | HardwareSeat
        tools: BoardTools | None = None                 # the page's Board tab
        source: WatchedSource | None = None
        if sim:
            sim_seat = seat = SimSeat(store, monotonic_ms)
            if listen:
                from board_driver.web.tools import SimTools
                tools = SimTools(board.profile, lambda: sim_seat.board)
        else:
            hw = open_hardware(board)
            if hw.buttons is not None:
                hw.buttons.start(commands.put)
            source = WatchedSource(hw.source, log)
            leds = hw.leds if hw.leds is not None else NullLeds(board.profile.size)
            sink = OverlaySink(leds) if listen else leds      # the page's pairing squares on top of the game's
            seat = HardwareSeat(source, sink, board.profile)
            if listen:
                from board_driver.web.tools import HardwareTools
                tools = HardwareTools(board, hw, source, sink, stopping=stop.is_set)
        _console(commands)
        club = start_for_board(board, store.root, hw=hw, log=say)   # the profile's broker: publish the games live
        notices = Notices() if listen else None     # the page's notices: every line the host says goes there too
        host = GameHost(store, settings=settings, profile=board.profile, seat=seat, clock=monotonic_ms,
                        say=notices.speaker(say) if notices is not None else say,
                        note=lambda line: log.warning("%s", line), fsf_path=_fsf_path(board), background=True,
                        broker=broker_of(board.data, str(board.path)), stopping=stop.is_set)
        wrap = on_update = None
        if listen:
            front = WebFront(listen, store=store, commands=commands, sim=sim,
                             password=web_cfg.password, say=say, hardware=lambda: hardware_info(board, hw),
                             hosts=web_cfg.hosts, notices=notices, tools=tools,
                             link=host.link,                  # the link's state in every snapshot
                             remote=host.invitations,         # boards online, invitations
                             limits=web_cfg.limits)           # connections and timeouts (docs/web.md)
            wrap, on_update = front.wrap, front.bridge.on_update
            front.start_remote(announce=club is None)
        if source is not None:
            deadline = time.monotonic() + 5
            while source.last is None and time.monotonic() < deadline and not stop.is_set():
                source.read(0.2)                        # the board's first frame: the seat reads it
        host.open(GameRequest.from_args(args))
        host.run(commands=commands, stop=stop.is_set, on_update=on_update,
                 wrap=scripted(wrap or (lambda session, source, sink: (source, sink)), args.events, commands,
                               host, say))
    finally:
        if front is not None:
            front.stop()
        if host is not None:
            host.close()
        if club is not None:
            club.close()
        if hw is not None:
            hw.close()
        lock.release()
    say("fairyboard: stopped; the game is saved.")
    return 0


def _fsf_path(board) -> str | None:
    """The Fairy-Stockfish binary the board profile names (``engines: {fsf: PATH}``), if any."""
    from board_driver.opponents.players import fsf_path_from_profile
    return fsf_path_from_profile(getattr(board, "data", None) or {}, str(getattr(board, "path", "") or "<board>"))


def _console(commands: "queue.Queue[LoopCommand]") -> None:
    """Commands typed on the service's standard input (a terminal, or a pipe) go to the game like
    a button's; under systemd stdin is /dev/null and this ends at once."""
    def read() -> None:
        try:
            for line in sys.stdin:
                if line.strip():
                    commands.put(line.strip())
        except (OSError, ValueError):
            pass
    if sys.stdin is not None and not sys.stdin.closed:
        threading.Thread(target=read, name="serve-console", daemon=True).start()


# --- install-service ----------------------------------------------------------------------------


def cmd_install_service(args) -> int:
    from board_driver.hardware.backends import load_board

    root = Path(args.root)
    real = root.resolve() == Path("/")
    user = args.user or os.environ.get("SUDO_USER") or "fairyboard"
    exe = args.bin or str(Path(sys.executable).with_name("fairyboard"))
    if not Path(exe).exists():
        raise BoardDriverError(f"--bin {exe}: no such file (install fairyboard in this Python's environment, "
                               f"or give --bin)")
    template = (HARDWARE_DIR / "systemd" / UNIT_NAME).read_text(encoding="utf-8")
    rules = (HARDWARE_DIR / "udev" / UDEV_NAME).read_text(encoding="utf-8")
    board = load_board(args.board)                       # validate before copying
    if board.path is None:
        raise BoardDriverError(f"--board {args.board}: the built-in simulated board has no profile file to install")
    profile_src = board.path
    leds = board.hardware.leds
    if getattr(leds, "driver", None) == "ws281x" and user != "root":
        raise BoardDriverError(
            f"{board.path}: LEDs on PWM/PCM (driver: ws281x) need root (rpi_ws281x maps the hardware "
            f"directly) and the Pi's audio off (dtparam=audio=off in /boot/firmware/config.txt): install "
            f"with --user root, or use driver: spi, which needs neither")
    exists = user_exists(user, root)
    create_user = None
    if exists is False:
        if not args.create_user:
            hint = (" -- or add --create-user to create it" if user == "fairyboard" else
                    f" (create it with `sudo useradd --system --groups dialout,gpio,spi {user}`, "
                    f"or give --user with an existing user, e.g. your own)")
            raise BoardDriverError(f"--user {user}: no such user on this system{hint}")
        create_user = ["useradd", "--system", "--user-group", "--no-create-home",
                       "--groups", "dialout,gpio,spi", "--shell", "/usr/sbin/nologin", user]
    docs = Path(__file__).resolve().parents[2] / "docs" / "hardware.md"   # in a checkout, not in a wheel

    def at(path: str) -> Path:
        return root / path.lstrip("/")
    plan: list[tuple[Path, str, bool]] = [            # (path, content, keep an existing file)
        (at(f"/etc/systemd/system/{UNIT_NAME}"),
         render_unit(template, user=user, exe=exe, docs=docs if docs.exists() else None), False),
        (at(f"/etc/udev/rules.d/{UDEV_NAME}"), rules, False),
        (at("/etc/fairyboard/board.yaml"), profile_src.read_text(encoding="utf-8"), True),
        (at("/etc/fairyboard/fairyboard.env"), ENV_FILE, True),
    ]
    # Byte-compile the installed packages (a wheel install usually has, an editable or copied
    # one may not): the service and every command then start without compiling anything.
    packages = [str(Path(importlib.import_module(name).__file__ or name).parent)
                for name in ("engine", "firmware_bridge", "board_driver")]
    commands = [[sys.executable, "-m", "compileall", "-q", *packages],
                ["systemctl", "daemon-reload"], ["udevadm", "control", "--reload-rules"],
                ["udevadm", "trigger", "--subsystem-match=tty"],
                ["systemctl", "enable", UNIT_NAME] if args.no_start else ["systemctl", "enable", "--now", UNIT_NAME]]
    if create_user is not None:
        commands.insert(0, create_user)
    if real and not args.dry_run and hasattr(os, "geteuid") and os.geteuid() != 0:
        raise BoardDriverError("install-service writes to /etc: run it with sudo (or give --root DIR or --dry-run)")
    for path, content, keep in plan:
        if keep and path.exists():
            print(f"keep   {path} (already there)")
            continue
        print(f"{'would write' if args.dry_run else 'write'}  {path}")
        if not args.dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(content, encoding="utf-8")
            os.replace(tmp, path)
    print(f"board profile: {board.profile.name} ({board.hardware.sensor_backend} sensors, "
          f"{board.hardware.led_backend} LEDs); the service runs as {user}")
    if not real or args.dry_run:
        for c in commands:
            print(("would run " if real else "then run: ") + " ".join(c))
        return 0
    for c in commands:
        if shutil.which(c[0]) is None:
            raise BoardDriverError(f"{c[0]} not found: is this a systemd system?")
        print("run   " + " ".join(c), flush=True)
        subprocess.run(c, check=True)
    print("Installed. Follow the log with: journalctl -u fairyboard -f")
    return 0
