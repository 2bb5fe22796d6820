"""The page in headless Chromium for what a player reads at the board while playing: the chess
clocks, the moves in SAN, the saved games, the New game form, the board's coordinates.

One server (play --web) and one phone-sized browser for the module; the tests run in order.
Screenshots go where test_web_page.py writes its own.
"""

from __future__ import annotations

import time

import pytest
from test_web_page import (  # noqa: F401  (browser is a fixture, used by name)
    browser,
    click,
    js,
    piece_on,
    screenshot,
    synced,
    text_of,
    wait,
)
from webtools import Server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("play") / "data", "--variant", "orthodox", "--new")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def token(server):
    return server.pair()


@pytest.fixture(scope="module")
def paired(browser, token):
    browser.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})
    return browser


def clock(browser, side):
    """What the page shows of one clock: its text, whether it is marked running, low, its size."""
    return js(browser, """
        const el = document.querySelector(`#clocks .clock[data-side='${arguments[0]}']`);
        if (!el || document.querySelector('#clocks').hidden) return null;
        const t = el.querySelector('.time'); const cs = getComputedStyle(t);
        return {text: t.textContent, running: el.classList.contains('running'), low: el.classList.contains('low'),
                px: parseFloat(cs.fontSize), colour: cs.color, who: el.querySelector('.who').textContent};""", side)


def command(server, token, text):
    status, body = server.post("/api/command", {"text": text}, token=token)
    assert status == 200, body
    return body


def test_the_clocks_show_and_tick_between_snapshots(server, browser, token):
    server.new_game(token, "orthodox", clock="300+3", white="Ann", black="Bob")
    synced(server, browser)
    w = wait(browser, lambda: clock(browser, "white"), what="the clocks")
    assert w["running"] and w["px"] >= 36 and "Ann" in w["who"]
    assert clock(browser, "black")["text"] == "5:00" and not clock(browser, "black")["running"]
    server.move("e2", "e4")
    synced(server, browser)
    wait(browser, lambda: clock(browser, "black")["running"] and not clock(browser, "white")["running"], what="Black's clock running")
    version = server.wait_state()["version"]
    first = clock(browser, "black")["text"]
    wait(browser, lambda: clock(browser, "black")["text"] not in (first, "5:00"), timeout=4, what="Black's clock ticking")
    assert server.wait_state()["version"] == version       # counted on the page, not pushed
    assert clock(browser, "white")["text"] == "5:02" or clock(browser, "white")["text"].startswith("5:0")


def test_under_ten_seconds_the_clock_shows_tenths_in_the_low_time_colour(server, browser, token):
    command(server, token, "clock adjust black 0:08")
    synced(server, browser)
    b = wait(browser, lambda: (c := clock(browser, "black"))["text"].startswith("0:07.") and c, what="tenths")
    assert b["low"] and b["running"]
    w = clock(browser, "white")
    assert not w["low"] and w["colour"] != b["colour"]
    screenshot(browser, "clocks-low-time", prompt=False)


def test_press_mode_has_a_clock_button_for_the_running_side(server, browser, token, paired):
    server.new_game(token, "orthodox", clock="300+3", clock_mode="press")
    synced(server, browser)
    wait(browser, lambda: "White has moved" in text_of(browser, "#btn-press"), what="the press button")
    server.move("e2", "e4")
    synced(server, browser)
    assert clock(browser, "white")["running"]              # press mode: the move does not switch it
    click(browser, "#btn-press")
    wait(browser, lambda: server.wait_state()["clocks"]["running"] == "black", what="the clock pressed")
    wait(browser, lambda: clock(browser, "black")["running"], what="Black's clock running on the page")
    # a press names the side it stops: one for the side not running is refused
    status, body = server.post("/api/command", {"text": "press white"}, token=token)
    assert status == 400 and "not running" in body["error"]
    assert server.wait_state()["clocks"]["running"] == "black"
    screenshot(browser, "clocks-press", prompt=False)


def test_the_new_game_form_offers_the_time_controls(server, browser, token, paired):
    click(browser, "nav button[data-tab='new']")
    values = wait(browser, lambda: js(browser, "return [...document.querySelectorAll('#nv-clock option')].map((o) => o.value)"))
    for tc in ("-", "300+3", "900+10", "5400+30", "40/5400+30:1800+30", "custom"):
        assert tc in values
    js(browser, "const s = document.querySelector('#nv-clock'); s.value = 'custom'; s.dispatchEvent(new Event('change'));")
    wait(browser, lambda: js(browser, "return !document.querySelector('#nv-clock-custom-row').hidden"), what="the custom field")
    field = browser.find_element("css selector", "#nv-clock-custom")
    field.clear()
    field.send_keys("600+5")
    js(browser, "document.querySelector('#nv-clock-mode').value = 'auto'")
    click(browser, "#newform button:not([type='button'])")
    st = wait(None, lambda: (s := server.wait_state())["clocks"] and s["clocks"]["tc"] == "600+5" and s, what="a 600+5 game")
    assert st["clocks"]["mode"] == "auto"
    wait(browser, lambda: clock(browser, "white") and clock(browser, "white")["text"] in ("10:00", "9:59", "9:58"), what="10:00 shown")
    click(browser, "nav button[data-tab='new']")
    js(browser, "const s = document.querySelector('#nv-clock'); s.value = '-'; s.dispatchEvent(new Event('change'));")
    click(browser, "#newform button:not([type='button'])")
    wait(None, lambda: server.wait_state()["clocks"] is None, what="a game without a clock")
    wait(browser, lambda: clock(browser, "white") is None, what="the clocks hidden")


def test_moves_are_named_in_san_with_move_numbers(server, browser, token):
    server.new_game(token, "tomorrow-3", white="Ann", black="Bob")
    for a, b in (("e2", "e4"), ("e7", "e5")):
        server.move(a, b)
    assert server.wait_state()["san"] == ["e4", "e5"]
    server.new_game(token, "orthodox", clock="-")
    for a, b in (("e2", "e4"), ("e7", "e5"), ("g1", "f3")):
        server.move(a, b)
    st = server.wait_state()
    assert st["moves"] == ["e2e4", "e7e5", "g1f3"] and st["san"] == ["e4", "e5", "Nf3"]
    assert st["movetext"] == "1. e4 e5 2. Nf3"
    synced(server, browser)
    wait(browser, lambda: text_of(browser, "#moves") == "1. e4 e5 2. Nf3", what="the moves in SAN")


def viewer_pieces(browser):
    """Every piece the saved-game viewer draws: (square's piece letter, its image)."""
    return js(browser, """return [...document.querySelectorAll('#viewboard piece')].map((p) =>
        [p.className, getComputedStyle(p).backgroundImage]);""")


def test_a_saved_game_is_drawn_with_its_own_pieces_its_moves_and_the_last_move(server, browser, token):
    click(browser, "nav button[data-tab='games']")
    wait(browser, lambda: js(browser, "return !!document.querySelector('#gamelist button[data-game]')"), what="the list")
    detail = None
    for g in reversed(server.get("/api/games")[1]["games"]):
        if g.get("variant") == "tomorrow-3":
            detail = server.get(f"/api/games/{g['id']}")[1]
            break
    assert detail and [p["label"] for p in detail["positions"]] == [None, "1. e4", "1... e5"]
    assert detail["movetext"] == "1. e4 e5" and {"tiger", "cannon", "man"} <= {c["name"].lower() for c in detail["catalog"]}
    click(browser, f"#gamelist button[data-game='{detail['id']}']")
    wait(browser, lambda: text_of(browser, "#viewpos") == "1... e5", what="the last position, numbered")
    pieces = wait(browser, lambda: len(viewer_pieces(browser)) == 48 and viewer_pieces(browser), what="48 pieces")
    blank = [c for c, img in pieces if not img or img == "none"]
    assert not blank, f"pieces drawn without an image: {blank[:6]}"
    lit = js(browser, "return [...document.querySelectorAll('#viewboard [data-led=\"last move\"]')].map((e) => e.dataset.square).sort()")
    assert lit == ["e5", "e7"]
    labels = js(browser, "return [...document.querySelectorAll('#viewmoves button')].map((b) => b.textContent)")
    assert labels == ["1. e4", "1... e5"]
    click(browser, "#viewmoves button[data-index='1']")
    wait(browser, lambda: text_of(browser, "#viewpos") == "1. e4", what="the first move")
    lit = js(browser, "return [...document.querySelectorAll('#viewboard [data-led=\"last move\"]')].map((e) => e.dataset.square).sort()")
    assert lit == ["e2", "e4"]
    js(browser, "document.querySelector('#viewer').scrollIntoView()")
    screenshot(browser, "saved-game-viewer", prompt=False, show="#viewmoves", colour=(0x2E, 0x6B, 0x4F))
    click(browser, "nav button[data-tab='play']")
