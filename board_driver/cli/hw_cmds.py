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
from datetime import datetime
from pathlib import Path

from board_driver.errors import BoardDriverError, ConfigError

# The systemd unit and udev rule ship in the package (links to hardware/systemd and hardware/udev).
HARDWARE_DIR = Path(__file__).resolve().parents[1] / "service_files"
UNIT_NAME = "fairyboard.service"
UDEV_NAME = "99-fairyboard.rules"


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
                        "counters. Exit code 0: all fine; 1: problems found; 2: the profile or a device "
                        "cannot be used.")
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
    p.add_argument("--white", help="white player's name (kept in the game record and the PGN), or an engine "
                                   "spec: computer, builtin[:LEVEL], random, fsf[:SKILL], uci:COMMAND")
    p.add_argument("--black", help="black player's name, or an engine spec (--black computer)")
    p.add_argument("--move-time", type=float, default=1.0, metavar="S",
                   help="seconds the computer thinks a move (default 1)")
    p.add_argument("--web", metavar="HOST:PORT", help="serve the board's page here (docs/web.md; default: the "
                                                     "board profile's web.listen, else no page)")
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


def config_dir() -> Path:
    return Path(os.environ.get("FAIRYBOARD_CONFIG_DIR") or "/etc/fairyboard")


def calibration_plan(board, out: str | None, square_names=(), diode_names=(), diodes: bool = False):
    """Where a calibration of ``board`` writes (``out``, else the board's own file, never a
    shipped profile) and what it walks: (out, squares or None for all, previous readings,
    rectangle squares). Refuses the simulated board and bad squares with a clear message."""
    from board_driver.config import configs_dir, read_yaml
    from board_driver.maintenance.calibrate import previous_readings
    from engine.geometry import Geometry

    if board.hardware.sensor_backend == "sim":
        raise BoardDriverError(f"{board.path}: the simulated board needs no calibration "
                               f"(give --board gpio-12x8, pico-serial or your board's file)")
    if out:
        out = Path(out)
    elif board.path.resolve().parent == (configs_dir() / "boards").resolve():
        out = config_dir() / "board.yaml"          # never overwrite a shipped profile
    else:
        out = board.path
    geo = Geometry(board.profile.files, board.profile.ranks)
    squares = None
    previous = None
    try:
        rectangles = list(range(geo.size)) if diodes else [geo.parse(s) for s in diode_names]
    except ValueError as exc:
        raise ConfigError(f"--diode: {exc}") from None
    if square_names:
        try:
            squares = [geo.parse(s) for s in square_names]
        except ValueError as exc:
            raise ConfigError(f"--square: {exc}") from None
        source_data = board.data
        if out.exists() and out != board.path:
            source_data = read_yaml(out)
        previous, _ = previous_readings(source_data, str(out), geo.files, geo.ranks)
        if len(previous) < geo.size - len(squares):
            raise BoardDriverError(f"--square needs a full calibration first: {out} has readings for "
                                   f"{len(previous)} of {geo.size} squares")
    elif rectangles:
        # the rectangle test on a calibrated board: no walk, the readings in the file are used
        source_data = read_yaml(out) if out.exists() else board.data
        kept, _ = previous_readings(source_data, str(out), geo.files, geo.ranks)
        if len(kept) == geo.size:
            squares, previous = [], kept
    return out, squares, previous, rectangles


def write_calibration(board, cal, out: Path) -> None:
    """The calibrated profile written to ``out`` (the profile the calibration started from)."""
    from board_driver.maintenance.calibrate import profile_data, write_profile
    data = profile_data(board.data, cal, when=datetime.now().isoformat(timespec="seconds"))
    write_profile(out, data, cal)


def cmd_calibrate(args) -> int:
    from board_driver.hardware.backends import load_board, open_hardware
    from board_driver.maintenance.calibrate import Wizard

    board = load_board(args.board)
    out, squares, previous, rectangles = calibration_plan(board, args.out, args.square, args.diode, args.diodes)
    p = board.profile
    hw = open_hardware(board)
    try:
        leds = None if args.no_leds else hw.leds
        if leds is not None and not hasattr(leds, "show_chain"):
            leds = None
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
    import logging

    from board_driver.cli.play_cmds import dice_lines
    from board_driver.club.publisher import check_board, start_for_board
    from board_driver.hardware.backends import load_board, open_hardware
    from board_driver.host.lifecycle import LifecycleError, open_game, replace_game
    from board_driver.host.link import WatchedSource, setup_logging
    from board_driver.journal import GameStore, data_dir
    from board_driver.opponents.computer import attach
    from board_driver.referee.layout import Layout
    from board_driver.referee.runner import run_realtime
    from board_driver.referee.session import NewGameRequest
    from board_driver.settings import load_settings

    setup_logging()
    log = logging.getLogger("board_driver.host.link")
    board = load_board(args.board)
    check_board(board)
    settings = load_settings()
    store = GameStore(data_dir())
    if args.resume is not None:
        store.path(args.resume)                     # a clear error for anything that is not a game id
    lock = store.lock("fairyboard serve")           # one process per data folder
    stop = threading.Event()

    def on_signal(signum, frame) -> None:
        print(f"fairyboard: {signal.Signals(signum).name}: stopping after this frame", flush=True)
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def clock_ms() -> int:
        return int(time.monotonic() * 1000)

    def say(line: str) -> None:
        print(line, flush=True)

    def placed(closed):
        """The game squares the board shows, for a new game of a variant."""
        return lambda variant: Layout.place(board.profile, variant.geometry).occupancy(closed)

    from board_driver.web.service import WebConfig
    web_cfg = WebConfig.from_dict(board.data.get("web"), str(board.path))     # checked before any device opens
    session = club = web = None
    on_update = None
    hw = None
    try:
        hw = open_hardware(board)
        commands: queue.Queue[str] = queue.Queue()
        if hw.buttons is not None:
            hw.buttons.start(commands.put)
        _console(commands)
        sink = hw.leds if hw.leds is not None else NullLeds(board.profile.size)
        source = WatchedSource(hw.source, log)
        club = start_for_board(board, store.root, hw=hw, log=say)   # the profile's broker: publish the games live
        loop_source = source
        if args.web or web_cfg.listen:                        # the board's page (docs/web.md)
            from board_driver.web.bridge import OverlaySink, WebSource
            from board_driver.web.service import hardware_info, start_web
            bridge, web = start_web(args.web or web_cfg.listen, store=store, commands=commands, sim=False,
                                    password=web_cfg.password, data_root=store.root, say=say,
                                    hardware=lambda: hardware_info(board, hw))
            sink, loop_source, on_update = OverlaySink(sink), WebSource(source, bridge, wakeable=False), bridge.on_update
            from board_driver.web.tools import HardwareTools
            web.tools = HardwareTools(board, hw, source, sink, stopping=stop.is_set)   # the Board tab's tools
            say = (lambda line, _say=say: (_say(line), bridge.notice(line)))
        first = None
        deadline = time.monotonic() + 5
        while first is None and time.monotonic() < deadline and not stop.is_set():
            first = source.read(0.2)
        closed = first.closed if first is not None else frozenset()
        players = {k: v for k, v in (("white", args.white), ("black", args.black)) if v} or None
        if players and (args.new or args.variant):
            from board_driver.config import load_variant
            from board_driver.opponents.computer import check_players
            check_players(players, load_variant(args.variant or "orthodox"))   # before a game is created
        opening = open_game(store, profile=board.profile, settings=settings, variant=args.variant,
                            new=args.new, resume=args.resume, players=players, occupancy=placed(closed),
                            now=clock_ms())
        for note in store.problems + opening.notes:
            log.warning("%s", note)
        session = opening.session
        attach(session, seconds=args.move_time, fsf_path=_fsf_path(board), background=True)
        if opening.resumed:
            say(f"Resumed game {session.game_id} ({session.variant_name}), "
                f"{len(session.game.history)} actions so far.")
        else:
            say(f"New game {session.game_id}: {session.variant_name}.")
        for line in dice_lines(session.variant_name):
            say(line)
        if first is not None:
            session.read_board(first)               # what changed while the service was down
        while True:
            if web is not None:
                bridge.attach(session, sink=sink)
                # the page sees the game at once, even if a tool (a calibration started the
                # moment the game opened) holds the loop before its first step
                bridge.on_update(session)
            try:
                run_realtime(session, loop_source, sink, clock_ms, commands=commands, stop=stop.is_set, on_notice=say,
                             on_update=on_update)
                break
            except NewGameRequest as req:
                last = source.last.closed if source.last is not None else closed
                try:
                    opening = replace_game(session, store, req.variant, profile=board.profile, settings=settings,
                                           occupancy=placed(last), players=getattr(req, "players", None),
                                           now=clock_ms())
                except LifecycleError as exc:
                    say(f"error: {exc}")            # a bad button or console command: the game goes on
                    continue
                for note in opening.notes:
                    log.warning("%s", note)
                session = opening.session
                attach(session, seconds=args.move_time, fsf_path=_fsf_path(board), background=True)
                say(f"New game {session.game_id}: {session.variant_name}.")
                for line in dice_lines(session.variant_name):
                    say(line)
    finally:
        if web is not None:
            web.stop()
        if session is not None:
            session.close()
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


def _console(commands: "queue.Queue[str]") -> None:
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

def render_unit(template: str, *, user: str, exe: str, docs: Path | None = None) -> str:
    """The unit file with the service's user, the fairyboard executable and (when this is a
    checkout with its docs) the guide's real path filled in."""
    out = []
    for line in template.splitlines():
        if line.startswith("Documentation=") and docs is not None:
            line = f"Documentation=file://{docs}"
        elif line.startswith("User="):
            line = f"User={user}"
        elif line.startswith("Group="):
            line = f"Group={user}"
        elif line.startswith("ExecStart="):
            rest = line.split(None, 1)[1] if " " in line else ""
            line = f"ExecStart={exe} {rest}".rstrip()
        out.append(line)
    return "\n".join(out) + "\n"


def user_exists(user: str, root: Path) -> bool | None:
    """Whether ``user`` exists on the system under ``root`` (None: cannot tell)."""
    if root.resolve() == Path("/"):
        import pwd
        try:
            pwd.getpwnam(user)
            return True
        except KeyError:
            return False
    passwd = root / "etc" / "passwd"
    if not passwd.exists():
        return None
    return any(line.split(":", 1)[0] == user for line in passwd.read_text(encoding="utf-8").splitlines())


ENV_FILE = """\
# Environment of the fairyboard service (read by /etc/systemd/system/fairyboard.service).
# Extra arguments for `fairyboard serve`, e.g. --variant tomorrow-1
FAIRYBOARD_ARGS=
"""


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
    packages = [str(Path(importlib.import_module(name).__file__).parent)
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
