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
    SHOTS,
    screenshot,
    synced,
    text_of,
    wait,
)

pytestmark = pytest.mark.slow


def clock(browser, side):
    """What the page shows of one clock: its text, whether it is marked running, low, its size."""
    return js(browser, """
        const el = document.querySelector(`#clocks .clock[data-side='${arguments[0]}']`);
        if (!el || document.querySelector('#clocks').hidden) return null;
        const t = el.querySelector('.time'); const cs = getComputedStyle(t);
        return {text: t.textContent, running: el.classList.contains('running'), low: el.classList.contains('low'),
                px: parseFloat(cs.fontSize), colour: cs.color, who: el.querySelector('.who').textContent};""", side)


def tap(browser, css):
    """A mouse click where the element is on the screen (the New game tab is shorter than the
    phone's screen, where a WebDriver click lands beside the button)."""
    x, y = wait(browser, lambda: js(browser, """const e = document.querySelector(arguments[0]);
        if (!e || !e.offsetParent) return null; e.scrollIntoView({block: 'nearest'});
        const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2];""", css), what=css)
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        browser.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                             "clickCount": 1 if kind != "mouseMoved" else 0})


def command(server, token, text):
    status, body = server.post("/api/command", {"text": text}, token=token)
    assert status == 200, body
    return body


def test_the_clocks_show_and_tick_between_snapshots(server, browser, token):
    server.new_game(token, "orthodox", clock="300+3", white="Ann", black="Bob")
    synced(server, browser)
    w = wait(browser, lambda: clock(browser, "white"), what="the clocks")
    assert w["px"] >= 36 and "Ann" in w["who"]
    # as on a DGT clock, no clock runs before the first move: the page was opened, nothing played
    assert not w["running"] and w["text"] == "5:00" and "starts with the first move" in text_of(browser, "#clock-note")
    assert clock(browser, "black")["text"] == "5:00" and not clock(browser, "black")["running"]
    assert server.wait_state()["clocks"]["first_move"] and server.wait_state()["clocks"]["white"] == 300_000
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


def test_a_clock_going_under_twenty_seconds_sounds_once(server, browser, token):
    if js(browser, "return document.querySelector('#btn-alerts').getAttribute('aria-pressed')") != "true":
        click(browser, "#btn-alerts")                               # the sound on
    before = int(js(browser, "return document.body.dataset.lowAlerts || 0"))
    command(server, token, "clock adjust black 0:21")              # Black's clock runs: 21 s left
    synced(server, browser)
    wait(browser, lambda: int(js(browser, "return document.body.dataset.lowAlerts || 0")) == before + 1,
         timeout=15, what="the low-time sound")
    time.sleep(0.5)
    assert int(js(browser, "return document.body.dataset.lowAlerts || 0")) == before + 1      # once, not per tick
    command(server, token, "clock adjust black 0:08")               # already low: no second sound
    synced(server, browser)
    time.sleep(0.5)
    assert int(js(browser, "return document.body.dataset.lowAlerts || 0")) == before + 1


def test_press_mode_has_a_clock_button_for_the_running_side(server, browser, token, paired):
    server.new_game(token, "orthodox", clock="300+3", clock_mode="press")
    synced(server, browser)
    server.move("e2", "e4")
    synced(server, browser)
    wait(browser, lambda: "White has moved" in text_of(browser, "#btn-press"), what="the press button")
    assert not clock(browser, "black")["running"]          # press mode: the move does not start it
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
    tap(browser, "#newform button:not([type='button'])")
    st = wait(None, lambda: (s := server.wait_state())["clocks"] and s["clocks"]["tc"] == "600+5" and s,
               what="a 600+5 game " + text_of(browser, "#toast"))
    assert st["clocks"]["mode"] == "auto"
    wait(browser, lambda: clock(browser, "white") and clock(browser, "white")["text"] in ("10:00", "9:59", "9:58"), what="10:00 shown")
    click(browser, "nav button[data-tab='new']")
    js(browser, "const s = document.querySelector('#nv-clock'); s.value = '-'; s.dispatchEvent(new Event('change'));")
    tap(browser, "#newform button:not([type='button'])")
    wait(None, lambda: server.wait_state()["clocks"] is None, what="a game without a clock")
    wait(browser, lambda: clock(browser, "white") is None, what="the clocks hidden")


def test_the_computer_is_offered_by_levels_named_for_what_they_mean(server, browser, token, paired):
    click(browser, "nav button[data-tab='new']")
    opts = wait(browser, lambda: js(browser, """return [...document.querySelectorAll('#nv-black-who option')]
        .map((o) => [o.value, o.textContent])"""), what="the opponents")
    labels = dict(opts)
    assert labels[""] == "a person"
    assert [v for v, _ in opts][1:4] == ["builtin:1", "builtin:2", "builtin:3"]          # weakest first
    assert labels["builtin:1"] == "level 1: looks one turn ahead"
    assert labels["builtin:2"] == "level 2: looks two turns ahead"
    assert labels["builtin"] == "full strength: uses all its time"
    assert labels["random"].startswith("random moves")
    assert js(browser, """return [...document.querySelectorAll('#nv-black-who optgroup')].map((g) => g.label)""") \
        == ["the computer"]
    js(browser, "const s = document.querySelector('#nv-black-who'); s.value = 'builtin:2'; s.dispatchEvent(new Event('change'));")
    assert js(browser, "return document.querySelector('#nv-black').hidden")          # no name needed
    # the longer names fit the phone's width: nothing to scroll sideways
    assert js(browser, "return document.documentElement.scrollWidth <= innerWidth"), "the form is wider than the screen"
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / "new-game-levels.png"))
    js(browser, "const s = document.querySelector('#nv-clock'); s.value = '-'; s.dispatchEvent(new Event('change'));")
    tap(browser, "#newform button:not([type='button'])")
    st = wait(None, lambda: (s := server.wait_state())["players"]["black"] == "builtin:2" and s,
              what="a game against level 2 " + text_of(browser, "#toast"))
    assert st["players"]["white"] != "builtin:2"
    assert js(browser, "return document.querySelector('#btn-draw').hidden")     # no draw offer but to another board


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


def test_the_screen_is_kept_on_while_a_game_is_on(server, browser, token):
    browser.execute_cdp_cmd("Browser.grantPermissions", {"origin": server.url, "permissions": ["wakeLockScreen"]})
    server.new_game(token, "orthodox", clock="-")
    browser.refresh()
    wait(browser, lambda: js(browser, "return document.body.dataset.wakelock") == "on", what="the wake lock taken")
    command(server, token, "resign black")
    wait(browser, lambda: js(browser, "return document.body.dataset.wakelock") == "off", what="the wake lock released")
    server.new_game(token, "orthodox")
    wait(browser, lambda: js(browser, "return document.body.dataset.wakelock") == "on", what="the wake lock taken again")


def alerts(browser):
    return js(browser, "const b = document.body.dataset; return [Number(b.alerts || 0), b.alertKind || null, "
                       "Number(b.alertsSkipped || 0), (window.__vib || []).length]")


def test_a_sound_and_a_vibration_when_the_board_asks_or_the_computer_moved(server, browser, token, paired):
    js(browser, "navigator.vibrate = (p) => { (window.__vib = window.__vib || []).push(p); return true; }")
    wait(browser, lambda: text_of(browser, "#btn-alerts") == "Sound on", what="sound on by default")
    server.new_game(token, "orthodox", fen="3r2k1/4P3/8/8/8/8/8/4K3 w - - 0 1")
    synced(server, browser)
    n, _, skipped, vib = alerts(browser)
    server.move("e7", "e8")                                         # a promotion: which piece?
    wait(browser, lambda: alerts(browser)[0] == n + 1, what="an alert for the question")
    assert alerts(browser)[1] == "prompt" and alerts(browser)[3] == vib + 1
    synced(server, browser)
    assert alerts(browser)[0] == n + 1                              # once per question
    click(browser, "#btn-alerts")                                   # switched off
    wait(browser, lambda: text_of(browser, "#btn-alerts") == "Sound off", what="sound off")
    server.new_game(token, "orthodox", fen="3r2k1/4P3/8/8/8/8/8/4K3 w - - 0 1")
    server.move("e7", "e8")
    wait(browser, lambda: alerts(browser)[2] == skipped + 1, what="the question seen, no alert")
    assert alerts(browser)[0] == n + 1 and alerts(browser)[3] == vib + 1
    click(browser, "#btn-alerts")
    wait(browser, lambda: text_of(browser, "#btn-alerts") == "Sound on", what="sound on again")
    server.new_game(token, "orthodox", black="random")
    server.move("e2", "e4")
    wait(browser, lambda: alerts(browser)[:2] == [n + 2, "computer"], what="an alert for the computer's move")


def test_the_new_game_form_names_the_variants_by_family(server, browser, token):
    click(browser, "nav button[data-tab='new']")
    opts = wait(browser, lambda: (o := js(browser, """return [...document.querySelectorAll('#nv-variant option')].map((o) =>
        [o.value, o.textContent, o.parentElement.label || null])""")) and len(o) >= 28 and o, what="the variants")
    assert len(opts) == 28
    groups = {g for _, _, g in opts}
    assert {"Chess", "Tomorrow's Chess", "Random Variant Chess", "csipgs", "Cost Progressive", "Chego"} <= groups
    by = {v: (t, g) for v, t, g in opts}
    assert by["tomorrow-3"] == ("Tomorrow's Chess 3: Cannon, Tigers and a Man (12x8)", "Tomorrow's Chess")
    assert by["chego-holes"][1] == "Chego" and by["csipgs-army"][1] == "csipgs"
    assert not [v for v, t, _ in opts if t.split(" (")[0] == v], "variants shown by their file names"
    js(browser, "const s = document.querySelector('#nv-variant'); s.value = 'orthodox'; s.dispatchEvent(new Event('change'));")
    assert not js(browser, "return document.querySelector('#nv-schedule').offsetParent")     # only for random
    js(browser, "const s = document.querySelector('#nv-variant'); s.value = 'random'; s.dispatchEvent(new Event('change'));")
    wait(browser, lambda: js(browser, "return !!document.querySelector('#nv-schedule').offsetParent"), what="the schedule")
    assert js(browser, "return document.querySelector('#nv-variant').getBoundingClientRect().right <= innerWidth")
    assert not js(browser, "return !!document.querySelector('#nv-computer').offsetParent")   # two people: no note
    screenshot(browser, "new-game-form", prompt=False, show="#newform", colour=(0xFF, 0xFF, 0xFF))
    click(browser, "nav button[data-tab='play']")


def test_a_refused_move_says_which_rule_refuses_it(server, browser, token):
    """A Cost Progressive move the turn cannot pay for, and a Chego drop on a square that is not
    neutral: the page says why, beside how to fix the board."""
    server.new_game(token, "cost-progressive")
    server.sim({"t": 0, "lift": "g1"}, {"t": 150, "place": "f3"})
    wait(browser, lambda: "Not allowed: the white knight on g1 cannot go to f3: a knight move costs 3 movement "
                          "points; 1 is left this turn"
         in text_of(browser, "#prompt"), what="the reason for the refused move")
    assert "Fix the board:" in text_of(browser, "#prompt")
    screenshot(browser, "refused-move", prompt=False)
    server.sim({"t": 0, "lift": "f3"}, {"t": 150, "place": "g1"})
    wait(browser, lambda: "Not allowed" not in text_of(browser, "#prompt"), what="the board put right")
    server.new_game(token, "chego", fen="8/8/8/8/3K4/8/8/8[Qk] b - - 0 1")
    server.sim({"t": 0, "place": "d5"})
    wait(browser, lambda: "Not allowed: d5 is not neutral" in text_of(browser, "#prompt"), what="the refused drop")
    server.sim({"t": 0, "lift": "d5"})


def test_the_websocket_reconnects_with_backoff(server, browser):
    wait(browser, lambda: js(browser, "return document.querySelector('#conn').className") == "conn on", what="connected")
    server.stop()
    delays = set()
    end = time.monotonic() + 5
    while time.monotonic() < end:
        delays.add(int(js(browser, "return document.body.dataset.wsDelay || 0")))
        time.sleep(0.1)
    assert {1000, 2000, 4000} <= delays and max(delays) <= 8000, delays
    server.restart()
    wait(browser, lambda: js(browser, "return document.querySelector('#conn').className") == "conn on",
         timeout=20, what="reconnected")
    assert js(browser, "return document.body.dataset.wsAttempts") == "0"
    synced(server, browser)


def test_coordinates_stay_off_the_pieces_at_a_24_px_minimum_font(server, token):
    """Chrome's minimum font size (Settings, Appearance: some phones ship 24 px for large text)
    enlarged the coordinates drawn on the squares over the pieces; they stand beside the board."""
    from selenium.webdriver.chrome.service import Service
    from test_web_page import CHROMEDRIVER, CHROMIUM, PHONE, webdriver
    server.new_game(token, "orthodox", clock="-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--window-size={PHONE['width']},{PHONE['height']}", "--disable-extensions", "--no-first-run"):
        opts.add_argument(a)
    opts.add_experimental_option("prefs", {"webkit": {"webprefs": {"minimum_font_size": 24}}})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
        d.get(server.url + "/")
        wait(d, lambda: piece_on(d, "e1") == "K", what="the board")
        assert js(d, "return parseFloat(getComputedStyle(document.querySelector('#status')).fontSize)") >= 24  # the setting holds
        got = js(d, """
            const g = document.querySelector('#board .fb-grid').getBoundingClientRect();
            const labels = [...document.querySelectorAll('#board [data-coord]')].map((e) => {
              const b = e.getBoundingClientRect(); return [e.textContent, b.x, b.y, b.right, b.bottom]; });
            // what is drawn on the squares themselves (the old coordinates were ::before text)
            const onSquares = [...document.querySelectorAll('#board .sq')].filter((e) =>
              !['none', 'normal', '""'].includes(getComputedStyle(e, '::before').content)).length;
            const next = document.querySelector('#simtools').getBoundingClientRect().top;
            return {grid: [g.x, g.y, g.right, g.bottom], labels, onSquares, vw: innerWidth, next};""")
        assert got["onSquares"] == 0, got
        assert sorted(t for t, *_ in got["labels"]) == sorted(list("12345678") + list("abcdefgh")), got
        gx0, gy0, gx1, gy1 = got["grid"]
        for t, x0, y0, x1, y1 in got["labels"]:
            assert x1 <= gx0 + 1 or y0 >= gy1 - 1, f"{t} covers the squares: {got}"
            assert x0 >= 0 and x1 <= got["vw"], f"{t} is off the screen"
            assert y1 <= got["next"] + 1, f"{t} runs into the buttons under the board: {got}"
        assert gx1 <= got["vw"]
        # nothing widens the page past the phone's 390 px (a long Betza in the piece list did)
        wide = js(d, """return [...document.querySelectorAll('body *')].filter((e) => e.offsetParent !== null
            && e.getBoundingClientRect().right > arguments[0] + 1).map((e) => e.tagName + ' ' + e.textContent.slice(0, 40))""",
                  PHONE["width"])
        assert got["vw"] == PHONE["width"] and not wide, (got["vw"], wide)
        screenshot(d, "coordinates-min-font-24", prompt=False)
    finally:
        d.quit()


def test_a_pairing_made_after_the_page_loaded_shows_when_the_page_comes_back(server, browser, token):
    def looked_at_again():
        js(browser, "document.dispatchEvent(new Event('visibilitychange'))")

    # not paired (an earlier test of this browser may have left the cookie: it goes first)
    browser.delete_cookie("fairyboard_token")
    looked_at_again()
    wait(browser, lambda: text_of(browser, "#pairstate") == "Not paired", what="Not paired")
    # paired in another tab meanwhile: the cookie is there, this page has not asked since
    browser.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})
    looked_at_again()
    wait(browser, lambda: text_of(browser, "#pairstate") == "Paired", what="Paired")
    assert js(browser, "return document.querySelector('#pairbtn').hidden")
    # the token goes (forgotten from another device): the header says so when the page looks again
    browser.delete_cookie("fairyboard_token")
    looked_at_again()
    wait(browser, lambda: text_of(browser, "#pairstate") == "Not paired", what="Not paired again")
    assert not js(browser, "return document.querySelector('#pairbtn').hidden")
    browser.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})     # as the module had it
    looked_at_again()
