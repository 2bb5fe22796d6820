"""The hardware commands through the real CLI, as subprocesses: the service files an install
writes pass systemd's own check, and calibrate, selftest and serve talk to a Pico board (its
firmware's logic running in this process) over a real pty."""

from __future__ import annotations

import configparser
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from board_driver.config import configs_dir
from board_driver.maintenance.calibrate import analyse, profile_data
from engine.geometry import Geometry

ROOT = Path(__file__).resolve().parents[2]
FAIRYBOARD = str(Path(sys.executable).with_name("fairyboard"))
G = Geometry(12, 8)


def cli(*args, env=None, input=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "board_driver.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, input=input, timeout=timeout, cwd=ROOT)


# --- install-service ------------------------------------------------------------------------------

UNIT_KEYS = {
    "Unit": {"Description", "Documentation", "After", "Wants", "Requires"},
    "Service": {"Type", "User", "Group", "SupplementaryGroups", "Environment", "EnvironmentFile", "ExecStart",
                "WorkingDirectory", "StateDirectory", "StateDirectoryMode", "ConfigurationDirectory", "KillMode",
                "KillSignal", "TimeoutStopSec", "LimitNOFILE", "Restart", "RestartSec", "StandardOutput", "StandardError",
                "SyslogIdentifier", "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp"},
    "Install": {"WantedBy"},
}


def check_unit(path: Path) -> dict:
    """What systemd-analyze verify checks, for a machine without it: sections and keys known,
    values of the right form, the executable there."""
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str
    parser.read(path)
    assert set(parser.sections()) == set(UNIT_KEYS), parser.sections()
    for section, keys in UNIT_KEYS.items():
        unknown = set(parser[section]) - keys
        assert not unknown, f"[{section}] unknown keys {unknown}"
    svc = parser["Service"]
    exe = svc["ExecStart"].split()[0]
    assert os.path.isabs(exe) and os.access(exe, os.X_OK), exe
    assert svc["Type"] in ("simple", "exec", "notify")
    assert svc["KillSignal"] == "SIGTERM" and svc["KillMode"] in ("mixed", "control-group", "process")
    assert 5 <= int(svc["TimeoutStopSec"]) <= 90
    # the open files, the page's connections included (docs/web.md, *Connections*): a limit
    # set, and room in it for the page's connections besides the game's files
    assert int(svc["LimitNOFILE"]) >= 512, svc.get("LimitNOFILE")
    assert svc["Restart"] in ("on-failure", "always")
    assert svc["StandardOutput"] == "journal" and svc["StandardError"] == "journal"
    for key in ("WorkingDirectory",):
        assert os.path.isabs(svc[key])
    assert svc["EnvironmentFile"].lstrip("-").startswith("/etc/fairyboard/")
    assert parser["Install"]["WantedBy"] == "multi-user.target"
    return dict(svc)


UDEV_KEY = re.compile(r'^(SUBSYSTEM|KERNEL|ACTION|ATTRS\{\w+\}|ENV\{\w+\}|SYMLINK|MODE|GROUP|OWNER|TAG)'
                      r'(==|!=|\+=|:=|=)"[^"]*"$')


def check_udev(path: Path) -> list[str]:
    """Every rule line is comma-separated KEY op "value" pairs with known keys; returns the rules."""
    rules = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for part in (p.strip() for p in line.split(",")):
            assert UDEV_KEY.match(part), f"{path.name}:{n}: {part!r}"
        rules.append(line)
    return rules


def systemd_verify(path: Path):
    if shutil.which("systemd-analyze") is None:
        return None
    r = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60)
    return r


def test_install_service_under_a_root_passes_systemd_verify(tmp_path):
    r = cli("install-service", "--root", str(tmp_path), "--user", "pi", "--bin", FAIRYBOARD)
    assert r.returncode == 0, r.stderr
    unit = tmp_path / "etc/systemd/system/fairyboard.service"
    rules = tmp_path / "etc/udev/rules.d/99-fairyboard.rules"
    board = tmp_path / "etc/fairyboard/board.yaml"
    assert unit.exists() and rules.exists() and board.exists()
    assert "then run: systemctl enable --now fairyboard.service" in r.stdout
    svc = check_unit(unit)
    assert svc["User"] == "pi" and svc["ExecStart"] == f"{FAIRYBOARD} serve $FAIRYBOARD_ARGS"
    assert "FAIRYBOARD_DATA=/var/lib/fairyboard" in unit.read_text()
    assert any('SYMLINK+="fairyboard"' in rule for rule in check_udev(rules))
    v = systemd_verify(unit)
    if v is not None:                                  # systemd's own check, where it exists
        assert v.returncode == 0 and v.stderr.strip() == "", v.stderr
    # the installed profile is the board the service will load
    r = cli("selftest", "--board", str(board), "--seconds", "0", "--no-leds", "--json")
    assert "RPi.GPIO" in r.stderr                      # gpio-12x8 on a machine that is not a Pi


def test_systemd_verify_catches_what_the_equivalent_check_catches(tmp_path):
    cli("install-service", "--root", str(tmp_path), "--user", "pi", "--bin", FAIRYBOARD)
    unit = tmp_path / "etc/systemd/system/fairyboard.service"
    bad = tmp_path / "fairyboard.service"
    bad.write_text(unit.read_text().replace("TimeoutStopSec=", "TimeoutStopSex="))
    with pytest.raises(AssertionError, match="TimeoutStopSex"):
        check_unit(bad)
    v = systemd_verify(bad)
    if v is not None:
        assert "TimeoutStopSex" in v.stderr
    # the unit in the repository names the default install path, which is not here
    with pytest.raises(AssertionError, match="/opt/fairyboard"):
        check_unit(ROOT / "hardware/systemd/fairyboard.service")


@pytest.mark.slow
def test_install_keeps_a_calibrated_profile_and_dry_run_writes_nothing(tmp_path):
    assert cli("install-service", "--root", str(tmp_path), "--board", "pico-serial", "--bin", FAIRYBOARD,
               "--user", "pi").returncode == 0
    board = tmp_path / "etc/fairyboard/board.yaml"
    assert yaml.safe_load(board.read_text())["name"] == "pico-serial"
    board.write_text(board.read_text() + "# calibrated\n")
    r = cli("install-service", "--root", str(tmp_path), "--bin", FAIRYBOARD, "--user", "pi")
    assert r.returncode == 0 and f"keep   {board}" in r.stdout
    assert board.read_text().endswith("# calibrated\n")
    dry = tmp_path / "dry"
    r = cli("install-service", "--root", str(dry), "--dry-run", "--bin", FAIRYBOARD)
    assert r.returncode == 0 and "would write" in r.stdout and not dry.exists()
    r = cli("install-service", "--root", str(tmp_path / "x"), "--bin", "/nonexistent/fairyboard")
    assert r.returncode == 2 and "--bin /nonexistent/fairyboard: no such file" in r.stderr


def test_the_repository_service_files_are_well_formed():
    assert check_udev(ROOT / "hardware/udev/99-fairyboard.rules")
    text = (ROOT / "hardware/systemd/fairyboard.service").read_text()
    assert "ExecStart=/opt/fairyboard/.venv/bin/fairyboard serve" in text
    assert "KillSignal=SIGTERM" in text and "TimeoutStopSec=" in text


# --- a Pico board over a pty, for the commands that talk to it -------------------------------------

@pytest.fixture
def pico(tmp_path):
    """The firmware's logic on fake pins, running in a thread behind a pty; and a profile for it."""
    from bridge_fakes import RealTicks, VirtualBoard
    vb = VirtualBoard(tmp_path, ticks=RealTicks())
    vb.cable.host_connected = True          # the CLI opens the pty itself, not through this process
    stop = threading.Event()
    runner = threading.Thread(target=vb.run_forever, args=(stop,), daemon=True)
    runner.start()
    data = yaml.safe_load((configs_dir() / "boards" / "pico-serial.yaml").read_text())
    data["hardware"]["sensors"]["ports"] = [str(vb.cable.path)]
    profile = tmp_path / "board.yaml"
    profile.write_text(yaml.safe_dump(data, sort_keys=False))
    vb.profile = profile
    vb.data = data
    yield vb
    stop.set()
    runner.join()
    vb.close()


class Expect:
    """Reads a child's output as it comes, until a pattern shows up (bounded by a deadline)."""

    def __init__(self, proc):
        self.proc, self.buf = proc, ""
        self.fd = proc.stdout.fileno()

    def until(self, pattern: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while not rx.search(self.buf):
            left = deadline - time.monotonic()
            ready = select.select([self.fd], [], [], max(0.0, min(left, 0.2)))[0]
            chunk = os.read(self.fd, 4096) if ready else b""
            self.buf += chunk.decode()
            if left <= 0 or (ready and not chunk):
                err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
                raise AssertionError(f"never saw {pattern!r}; output so far:\n{self.buf}\nstderr: {err}")
        m = rx.search(self.buf)
        out, self.buf = self.buf[:m.end()], self.buf[m.end():]
        return out

    def send(self, line: str) -> None:
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()


def spawn(*args, env=None):
    return subprocess.Popen([sys.executable, "-m", "board_driver.cli", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, **(env or {})})


@pytest.mark.slow
def test_selftest_reports_closed_sensors_leds_and_link_counters(pico):
    pico.closed = {G.parse("c3"), G.parse("k8")}
    r = cli("selftest", "--board", str(pico.profile), "--seconds", "1.5", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    found = json.loads(r.stdout)
    assert found["config"]["sensors"] == "serial" and found["config"]["led_order"] == "serpentine from a1"
    assert found["sensors"]["closed"] == ["c3", "k8"] and found["sensors"]["frames"] >= 1
    assert found["link"]["state"] == "LinkState.READY" and found["link"]["crc_errors"] == 0
    assert found["leds"][:4] == ["red", "green", "blue", "white"]
    frames = set(pico.strip.history)                   # what the LEDs showed, brightness 64 of 255
    for colour in ((64, 0, 0), (0, 64, 0), (0, 0, 64)):
        assert (colour,) * 96 in frames
    # all white at 64 would draw 96 x (1 + 3 x 64 x 20 / 255) = 1542 mA: scaled into 1500 mA
    white = [f[0][0] for f in frames if len(set(f)) == 1 and f[0][0] == f[0][1] == f[0][2] > 0]
    assert white and all(55 <= v < 64 for v in white)
    corners = next(f for f in frames if sum(c != (0, 0, 0) for c in f) == 4)
    assert (corners[0], corners[11], corners[95], corners[84]) == ((64, 0, 0), (0, 64, 0), (0, 0, 64), (64, 64, 64))
    assert pico.strip.shown == ((0, 0, 0),) * 96        # left dark
    r = cli("doctor", "--board", str(pico.profile), "--seconds", "0.5", "--no-leds")
    assert r.returncode == 0 and "closed now: c3, k8" in r.stdout and "selftest: all fine" in r.stdout


@pytest.mark.slow
def test_selftest_names_a_flickering_sensor(pico):
    stop = threading.Event()

    def flicker():
        while not stop.is_set():
            pico.closed = {G.parse("f5")} if not pico.closed else set()
            stop.wait(0.1)
    t = threading.Thread(target=flicker, daemon=True)
    t.start()
    try:
        r = cli("selftest", "--board", str(pico.profile), "--seconds", "1.5", "--no-leds")
    finally:
        stop.set()
        t.join()
    assert r.returncode == 1 and "PROBLEM: sensors: flickering f5" in r.stdout


@pytest.mark.slow
def test_calibrate_one_square_after_a_repair_through_the_cli(pico, tmp_path):
    # a full calibration found e4 dead; the reed switch was replaced; re-run e4 only
    readings = {sq: frozenset({sq}) for sq in range(96)}
    readings[G.parse("e4")] = frozenset()
    cal = analyse(12, 8, readings)
    board = tmp_path / "calibrated.yaml"
    board.write_text(yaml.safe_dump(profile_data(pico.data, cal), sort_keys=False))
    proc = spawn("calibrate", "--board", str(board), "--square", "e4", "--no-leds", "--settle", "0.1",
                 "--timeout", "10")
    io = Expect(proc)
    try:
        io.until(r"Take every piece off the board, then press Enter\. ")
        io.send("")
        io.until(r"Put a piece on e4\.\n")
        pico.closed = {G.parse("e4")}
        io.until(r"Lift the piece from e4\.\n")
        pico.closed = set()
        out = io.until(r"Written to .*\n")
        assert proc.wait(10) == 0, proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "The board is ready to play." in out
    data = yaml.safe_load(board.read_text())
    assert data["hardware"]["calibration"]["readings"]["e4"] == [G.parse("e4")]
    assert data["hardware"]["calibration"]["problems"] == []


def test_calibrate_refuses_the_simulator_and_bad_squares(tmp_path):
    r = cli("calibrate", "--board", "sim")
    assert r.returncode == 2 and "the simulated board needs no calibration" in r.stderr
    r = cli("calibrate", "--board", "pico-serial", "--square", "z9", "--out", str(tmp_path / "o.yaml"))
    assert r.returncode == 2 and "--square" in r.stderr


def start_position_sensors():
    from board_driver.config import load_variant
    from board_driver.referee.layout import Layout
    from board_driver.settings import load_profile
    from engine.game import new_game
    v = load_variant("orthodox")
    layout = Layout.place(load_profile("pico-serial"), v.geometry)
    return layout, set(layout.closed_sensors(new_game(v).occupancy()))


@pytest.mark.slow
def test_serve_plays_on_the_board_and_stops_cleanly_on_sigterm(pico, tmp_path):
    layout, closed = start_position_sensors()
    pico.closed = set(closed)
    data = tmp_path / "data"
    proc = spawn("serve", "--board", str(pico.profile), "--new", env={"FAIRYBOARD_DATA": str(data)})
    io = Expect(proc)
    try:
        io.until(r"New game \S+: orthodox\.")
        e2, e4 = (layout.sensor_of(G8.parse(s)) for s in ("e2", "e4"))
        pico.closed = (closed - {e2}) | {e4}              # the pawn moved
        io.until(r"White: e4")
        proc.send_signal(signal.SIGTERM)
        rest = io.until(r"stopped; the game is saved\.")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "SIGTERM" in rest
    games = list((data / "games").glob("*.jsonl"))
    assert len(games) == 1
    records = [json.loads(line) for line in games[0].read_text().splitlines()]
    assert [r["action"] for r in records if r["type"] == "push"] == ["e2e4"]
    # the LEDs went dark on the way out: the last frame may still be in the pty when serve has
    # ended, and the firmware's thread shows it once it reads it
    deadline = time.monotonic() + 20
    while pico.strip.shown != ((0, 0, 0),) * 96 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pico.strip.shown == ((0, 0, 0),) * 96


G8 = Geometry(8, 8)


def test_install_service_refuses_a_user_that_does_not_exist(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/passwd").write_text("root:x:0:0::/root:/bin/sh\npi:x:1000:1000::/home/pi:/bin/bash\n")
    r = cli("install-service", "--root", str(tmp_path), "--user", "bob", "--bin", FAIRYBOARD)
    assert r.returncode == 2 and "--user bob: no such user on this system" in r.stderr
    assert not (tmp_path / "etc/systemd").exists()
    r = cli("install-service", "--root", str(tmp_path), "--user", "fairyboard", "--bin", FAIRYBOARD)
    assert r.returncode == 2 and "--create-user" in r.stderr
    r = cli("install-service", "--root", str(tmp_path), "--user", "fairyboard", "--create-user", "--bin", FAIRYBOARD)
    assert r.returncode == 0 and "then run: useradd --system" in r.stdout
    unit = (tmp_path / "etc/systemd/system/fairyboard.service").read_text()
    assert f"Documentation=file://{ROOT / 'docs' / 'hardware.md'}" in unit     # the real checkout
    assert cli("install-service", "--root", str(tmp_path), "--user", "pi", "--bin", FAIRYBOARD).returncode == 0


def test_install_service_refuses_pwm_leds_for_a_user(tmp_path):
    board = tmp_path / "pwm.yaml"
    data = yaml.safe_load((ROOT / "board_driver/configs/boards/gpio-12x8.yaml").read_text())
    data["hardware"]["leds"]["driver"] = "ws281x"
    data["hardware"]["leds"]["pin"] = 18
    data["hardware"]["sensors"]["columns"][10] = 10          # file k moves off GPIO 18 (WIRING.md)
    board.write_text(yaml.safe_dump(data))
    r = cli("install-service", "--root", str(tmp_path / "r"), "--user", "pi", "--board", str(board), "--bin", FAIRYBOARD)
    assert r.returncode == 2 and "need root" in r.stderr and "dtparam=audio=off" in r.stderr
    r = cli("install-service", "--root", str(tmp_path / "r"), "--user", "root", "--board", str(board), "--bin", FAIRYBOARD)
    assert r.returncode == 0, r.stderr

