"""The Board tab's tools on a real service: `fairyboard serve --web` on a Pico board (its
firmware's logic behind a pty), the selftest and a calibration of named squares run through
the page's API while the service keeps the devices."""

from __future__ import annotations

import json
import re
import select
import signal
import time
import urllib.error
import urllib.request

import pytest
import yaml
from test_cli_hw import pico, spawn  # noqa: F401  (the fixture, and the CLI as a subprocess)

from board_driver.maintenance.calibrate import (
    PROBE_WORDS,
    analyse,
    probe_indexes,
    profile_data,
)
from board_driver.referee.layout import LedOrder
from engine.geometry import Geometry

pytestmark = pytest.mark.slow          # the service with its page, in Chromium, on emulated hardware

G = Geometry(12, 8)
ORDER = LedOrder(12, 8, "serpentine", "a1")       # the pico-serial profile's chain


class Page:
    """The service's page: its URL from the output, JSON requests with a token."""

    def __init__(self, proc):
        self.proc = proc
        self.out = ""
        m = self.until(r"the page is at (http://\S+)")
        self.url = m.group(1).rstrip("/")
        self.token = None

    def until(self, pattern: str, timeout: float = 20.0):
        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while not re.search(pattern, self.out):
            assert time.monotonic() < end, f"never saw {pattern!r}:\n{self.out}"
            if select.select([fd], [], [], 0.2)[0]:
                chunk = self.proc.stdout.read1(4096).decode()
                assert chunk, f"the service ended:\n{self.out}\n{self.proc.stderr.read().decode()}"
                self.out += chunk
        return re.search(pattern, self.out)

    def call(self, method: str, path: str, body=None, token=True):
        data = None if body is None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"} if data is not None else {}
        if token and self.token:
            h["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def wait(self, want, timeout: float = 15.0) -> dict:
        """GET /api/calibrate until ``want(status)``."""
        end = time.monotonic() + timeout
        while True:
            st = self.call("GET", "/api/calibrate")[1]
            if want(st):
                return st
            assert time.monotonic() < end, f"calibration never got there: {st}"
            time.sleep(0.05)


def lit(strip) -> dict[str, tuple]:
    """The squares the LEDs light now, by name (the chain read back through the profile's order)."""
    where = {ORDER.chain_index(p): p for p in range(96)}
    return {G.name(where[i]): c for i, c in enumerate(strip.shown) if c != (0, 0, 0)}


@pytest.fixture
def service(pico, tmp_path):
    # a full calibration found e4 dead: the reed was replaced, e4 and d5 are re-run from the page
    readings = {sq: frozenset({sq}) for sq in range(96)}
    readings[G.parse("e4")] = frozenset()
    data = profile_data(pico.data, analyse(12, 8, readings))
    data["web"] = {"password": "board secret"}
    board = tmp_path / "calibrated.yaml"
    board.write_text(yaml.safe_dump(data, sort_keys=False))
    proc = spawn("serve", "--board", str(board), "--new", "--web", "127.0.0.1:0",
                 env={"FAIRYBOARD_DATA": str(tmp_path / "data")})
    try:
        page = Page(proc)
        page.until(r"New game \S+: orthodox\.")
        page.board = board
        status, body = page.call("POST", "/api/login", {"password": "board secret"})
        assert status == 200, body
        page.token = body["token"]
        yield page
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except Exception:
            proc.kill()


def test_selftest_from_the_page_uses_the_services_devices(pico, service):
    page = service
    pico.closed = {G.parse("c3"), G.parse("k8")}
    time.sleep(1.0)                                               # the game has seen them
    before = pico.strip.shown
    assert page.call("POST", "/api/hardware/selftest", {"seconds": 1}, token=False)[0] == 401
    assert page.call("POST", "/api/hardware/selftest", {"seconds": 99})[0] == 400
    status, found = page.call("POST", "/api/hardware/selftest", {"seconds": 1})
    assert status == 200, found
    assert found["config"]["sensors"] == "serial" and found["config"]["calibrated"] is True
    assert found["sensors"]["closed"] == ["c3", "k8"] and found["sensors"]["frames"] >= 1
    assert found["link"]["state"] == "LinkState.READY" and found["link"]["crc_errors"] == 0
    assert found["leds"][:4] == ["red", "green", "blue", "white"]
    # the profile's calibration found e4 dead: the selftest says so until it is re-calibrated
    assert found["ok"] is False and len(found["problems"]) == 1
    assert found["problems"][0].startswith("calibration: REPAIR: e4: no sensor responds")
    frames = set(pico.strip.history)
    for colour in ((64, 0, 0), (0, 64, 0), (0, 0, 64)):           # brightness 64 of the profile
        assert (colour,) * 96 in frames
    end = time.monotonic() + 2
    while pico.strip.shown != before and time.monotonic() < end:
        time.sleep(0.05)
    assert pico.strip.shown == before                             # the game's LEDs are back
    hw = page.call("GET", "/api/hardware")[1]
    assert hw["selftest"]["sensors"]["closed"] == ["c3", "k8"] and hw["link"]["state"] == "LinkState.READY"
    status, body = page.call("POST", "/api/command", {"text": "help"})
    assert status == 200                                          # the game goes on


def test_calibration_of_two_squares_from_the_page_with_the_leds(pico, service):
    page = service
    pico.closed = set()
    board = page.board
    before = board.read_text()
    idle = page.call("GET", "/api/calibrate")[1]
    assert idle["state"] == "idle" and idle["seq"] == 0
    assert page.call("POST", "/api/calibrate/start", {"squares": ["e4"]}, token=False)[0] == 401
    status, body = page.call("POST", "/api/calibrate/start", {"squares": ["z9"]})
    assert status == 400 and "--square" in body["error"]
    status, body = page.call("POST", "/api/calibrate/start",
                             {"squares": ["e4", "d5"], "settle": 0.1, "timeout": 10})
    assert status == 200, body
    st = page.wait(lambda s: s["question"])
    assert st["state"] == "running" and st["question"].startswith("Take every piece off the board")
    first = st["seq"]           # every change is numbered: the page keeps the newest status
    # the game waits: commands are refused while the board is calibrated
    status, body = page.call("POST", "/api/command", {"text": "help"})
    assert status == 409 and "calibrated" in body["error"]
    assert page.call("POST", "/api/calibrate/start", {})[0] == 409
    page.call("POST", "/api/calibrate/answer", {"text": ""})
    # the LED chain: which squares are lit, answered from what the strip shows
    colours = {"RED": (64, 0, 0), "GREEN": (0, 64, 0), "BLUE": (0, 0, 64), "WHITE": (64, 64, 64)}
    for word in PROBE_WORDS[:len(probe_indexes(12, 8))]:
        page.wait(lambda s: s["question"] and word in s["question"])
        sq = next(q for q, c in lit(pico.strip).items() if c == colours[word])
        assert page.call("POST", "/api/calibrate/answer", {"text": sq})[0] == 200
    st = page.wait(lambda s: s["question"] and "corners" in s["question"])
    assert set(lit(pico.strip)) == {"a1", "l1", "a8", "l8"}
    page.call("POST", "/api/calibrate/answer", {"text": "y"})
    for name in ("e4", "d5"):
        st = page.wait(lambda s: s["lines"][-1]["text"].startswith(f"Put a piece on {name}"))
        assert st["lines"][-1]["text"] == f"Put a piece on {name} (the lit square)." and st["squares"] == [name]
        assert list(lit(pico.strip)) == [name]                     # the board lights the square the page names
        assert page.call("POST", "/api/calibrate/answer", {"text": "x"})[0] == 409   # nothing asked now
        pico.closed = {G.parse(name)}
        page.wait(lambda s: s["lines"][-1]["text"] == f"Lift the piece from {name}.")
        pico.closed = set()
    st = page.wait(lambda s: s["state"] != "running")
    assert st["state"] == "done" and st["ok"] is True, st
    assert st["seq"] > first > 0
    assert st["report"][0].startswith("96 squares checked, 0 problems")   # the kept readings count too
    assert "The board is ready to play." in st["report"]
    assert st["written"] == str(board) and board.read_text() != before
    data = yaml.safe_load(board.read_text())
    assert data["hardware"]["calibration"]["readings"]["e4"] == [G.parse("e4")]
    assert data["hardware"]["calibration"]["problems"] == []
    assert data["web"] == {"password": "board secret"}              # the rest of the profile kept
    assert page.call("POST", "/api/command", {"text": "help"})[0] == 200   # the game again


def test_a_calibration_stopped_from_the_page_writes_nothing(pico, service):
    page = service
    pico.closed = set()
    before = page.board.read_text()
    status, body = page.call("POST", "/api/calibrate/start", {"squares": ["e4"], "leds": False, "settle": 0.1})
    assert status == 200, body
    page.wait(lambda s: s["question"])
    page.call("POST", "/api/calibrate/answer", {"text": ""})
    st = page.wait(lambda s: s["lines"][-1]["text"].startswith("Put a piece on e4"))
    assert st["lines"][-1]["text"] == "Put a piece on e4." and st["squares"] == ["e4"]           # no LEDs: the square is named
    status, body = page.call("POST", "/api/calibrate/stop", {})
    assert status == 200 and body["calibrate"]["state"] == "stopped", body
    assert "Nothing was written" in body["calibrate"]["lines"][-1]["text"]
    assert page.board.read_text() == before
    assert page.call("POST", "/api/command", {"text": "help"})[0] == 200


def test_a_page_connecting_mid_calibration_gets_the_wizard_at_once(pico, service):
    import asyncio

    import aiohttp
    page = service
    pico.closed = set()
    assert page.call("POST", "/api/calibrate/start", {"squares": ["e4"], "leds": False})[0] == 200
    question = page.wait(lambda s: s["question"])["question"]

    async def first_messages():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(page.url.rstrip("/") + "/api/ws") as ws:
                return [json.loads((await ws.receive(timeout=10)).data) for _ in range(2)]
    first, second = asyncio.run(first_messages())
    assert first["type"] == "state"
    assert second["type"] == "calibrate" and second["calibrate"]["state"] == "running"
    assert second["calibrate"]["question"] == question
    assert page.call("POST", "/api/calibrate/stop", {})[0] == 200


def test_a_service_stopping_ends_a_calibration_at_once(pico, service):
    page = service
    pico.closed = set()
    before = page.board.read_text()
    assert page.call("POST", "/api/calibrate/start", {"squares": ["e4"], "leds": False})[0] == 200
    page.wait(lambda s: s["question"])
    page.proc.send_signal(signal.SIGTERM)            # what systemd sends: nobody answers the wizard
    assert page.proc.wait(10) == 0
    assert page.board.read_text() == before


def test_the_board_tab_shows_the_square_to_fill_and_takes_the_answers(pico, service):
    d = _chromium()
    page = service
    pico.closed = set()

    def text(css):
        return d.execute_script("const e = document.querySelector(arguments[0]); "
                                "return e && e.offsetParent !== null ? e.textContent : '';", css)

    def until(fn, what, timeout=20.0):
        end = time.monotonic() + timeout
        while not fn():
            assert time.monotonic() < end, f"{what}: not on the page"
            time.sleep(0.05)

    def click(css):
        until(lambda: d.execute_script("const e = document.querySelector(arguments[0]); "
                                       "return e && e.offsetParent !== null", css), css)
        d.find_element("css selector", css).click()
    try:
        d.get(page.url + "/")
        d.add_cookie({"name": "fairyboard_token", "value": page.token, "path": "/"})
        d.get(page.url + "/")
        click("nav button[data-tab='hardware']")
        until(lambda: text("#hwinfo") and "serial" in text("#hwinfo"), "the board's devices")
        d.find_element("css selector", "#calib-squares").send_keys("e4")
        click("#calib-leds")                                  # name the square only
        click("#calib-form button[type='submit']")
        started = lambda: page.call("GET", "/api/calibrate")[1].get("state") == "running"
        for _ in range(50):                                   # a click lost to a redraw is made again
            if started():
                break
            time.sleep(0.1)
        else:
            click("#calib-form button[type='submit']")
        until(lambda: text("#calib-question").startswith("Take every piece off the board"), "the first question")
        click("#calib-answer button[data-answer='']")        # Enter
        until(lambda: text("#calib-fill") == "Put a piece on e4", "the square to fill")
        marked = d.execute_script("return [...document.querySelectorAll('#calib-grid td.fill')].map(e => e.title)")
        assert marked == ["e4"]
        assert text("#calib-answer") == ""                    # nothing is asked: the board is watched
        pico.closed = {G.parse("e4")}
        until(lambda: "Lift the piece from e4." in text("#calib-lines"), "lift")
        pico.closed = set()
        until(lambda: text("#calib-state") == "Calibration finished.", "the end")
        assert "The board is ready to play." in text("#calib-lines")
        assert text("#calib-form")                            # another may be started
    finally:
        d.quit()


def _chromium():
    """A phone-sized headless Chromium (the distribution's), or a skip."""
    import os
    import shutil
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not (os.path.exists(chromium) and os.path.exists(chromedriver)):
        pytest.skip("needs the distribution's chromium and chromedriver")
    from selenium.webdriver.chrome.service import Service
    os.environ.setdefault("SE_OFFLINE", "true")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=390,844"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(chromedriver), options=opts)


@pytest.mark.slow
def test_a_lost_link_is_said_on_the_game_tab_at_once_and_its_return_too(pico, service):
    from pathlib import Path
    page = service
    d = _chromium()

    def text(css):
        return d.execute_script("const e = document.querySelector(arguments[0]); "
                                "return e && e.offsetParent !== null ? e.textContent : '';", css)

    def until(fn, what, timeout=30.0):
        end = time.monotonic() + timeout
        while not fn():
            assert time.monotonic() < end, f"{what}: not on the page"
            time.sleep(0.05)
    try:
        d.get(page.url + "/")
        until(lambda: "to play" in text("#status"), "the game")
        # the pieces are not on the board yet: counted, not listed one by one over the screen
        assert "32 pieces are off their squares" in text("#status") and "from a1" not in text("#status")
        assert text("#link") == ""                                     # the board answers: nothing said
        assert page.call("GET", "/api/state")[1]["link"]["up"] is True
        pico.cable.unplug()                                            # the USB cable pulled
        until(lambda: "The board is not answering; moves made now are read when it is back." in text("#link"),
              "the lost link")
        st = page.call("GET", "/api/state")[1]
        assert st["link"]["state"] == "disconnected" and st["link"]["up"] is False, st["link"]
        shots = Path(__file__).resolve().parents[2] / "build" / "screenshots" / "web"
        shots.mkdir(parents=True, exist_ok=True)
        d.save_screenshot(str(shots / "link-lost.png"))
        pico.cable.plug("ttyFAIRY0")                                   # and put back
        pico.cable.host_connected = True
        until(lambda: "The board is back" in text("#link"), "the link back")
        assert page.call("GET", "/api/state")[1]["link"]["up"] is True
    finally:
        d.quit()
