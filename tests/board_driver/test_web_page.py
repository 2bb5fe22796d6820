"""The page in a real headless Chromium (the distribution's, through its chromedriver), driven as a
player at a phone would, while the simulated board is played through the API.

One browser and one server for the module; the tests run in order (pairing first: the browser
keeps its cookie). Phone-sized screenshots go to build/screenshots/web/ (or
$FAIRYBOARD_SCREENSHOTS); each is checked for the board's squares and the prompt's colours.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from webtools import colours_in, read_png

pytestmark = pytest.mark.slow          # every test drives a real Chromium

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SHOTS = Path(os.environ.get("FAIRYBOARD_SCREENSHOTS") or Path(__file__).resolve().parents[2] / "build" / "screenshots" / "web")
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
LIGHT, DARK = (0xEC, 0xD9, 0xB9), (0xAE, 0x8A, 0x68)       # the board's squares (style.css)
PROMPT_BG = (0xF1, 0xE6, 0xFF)

webdriver = pytest.importorskip("selenium.webdriver")
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("needs the distribution's chromium and chromedriver (scripts/system-deps installs them)",
                allow_module_level=True)


def open_browser(url, *args: str, phone: dict = PHONE):
    """A headless Chromium of phone size on ``url`` (``args``: more Chromium flags)."""
    from selenium.webdriver.chrome.service import Service
    os.environ.setdefault("SE_OFFLINE", "true")          # never let Selenium fetch a browser
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--window-size={phone['width']},{phone['height']}", "--disable-extensions", "--no-first-run", *args):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", phone)
    d.set_script_timeout(10)
    d.get(url + "/")
    return d


@pytest.fixture(scope="module")
def browser(server):
    d = open_browser(server.url)
    yield d
    d.quit()


def wait(browser, fn, timeout=20.0, what="the page"):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = fn()
            if last:
                return last
        except Exception as exc:             # the DOM is being redrawn: try again
            last = exc
        time.sleep(0.05)
    raise AssertionError(f"{what}: not seen in {timeout} s (last: {last!r})")


def js(browser, script, *args):
    return browser.execute_script(script, *args)


def synced(server, browser):
    """Wait until the page shows the server's latest snapshot (nothing more will move the layout)."""
    version = server.wait_state()["version"]
    wait(browser, lambda: int(js(browser, "return document.body.dataset.version || 0")) >= version, what="the page in step")


def piece_on(browser, sq):
    return js(browser, "const e = document.querySelector(`#board [data-square='${arguments[0]}']`); return e ? e.dataset.piece : null;", sq)


def click_square(browser, sq):
    """A mouse click on the middle of a square, where the square is at this moment."""
    x, y = js(browser, "const e = document.querySelector(`#board [data-square='${arguments[0]}']`);"
                       "e.scrollIntoView({block: 'nearest'}); const b = e.getBoundingClientRect();"
                       "return [b.x + b.width / 2, b.y + b.height / 2];", sq)
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        browser.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                             "clickCount": 1 if kind != "mouseMoved" else 0})


def tap_piece(browser, sq):
    """Tap a piece and wait until the board shows it selected; a tap lost to a redraw on a
    loaded machine (nothing selected yet, nothing sent) is made again."""
    for _ in range(3):
        click_square(browser, sq)
        try:
            return wait(browser, lambda: js(browser, "return !!document.querySelector('#board square.selected')"),
                        timeout=3.0, what=f"{sq} selected")
        except AssertionError:
            continue
    raise AssertionError(f"tapping {sq} never selected it")


def click(browser, css):
    el = wait(browser, lambda: [e for e in browser.find_elements("css selector", css) if e.is_displayed()], what=css)[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
    el.click()


def drag(browser, a, b):
    """Press on square ``a``, move the mouse in steps to ``b``, release (a drag and drop)."""
    where = ("const e = document.querySelector(`#board [data-square='${arguments[0]}']`);"
             "const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2];")
    (x0, y0), (x1, y1) = js(browser, where, a), js(browser, where, b)
    cdp = browser.execute_cdp_cmd
    cdp("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0, "y": y0})
    cdp("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y0, "button": "left", "clickCount": 1})
    for i in range(1, 9):
        cdp("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0 + (x1 - x0) * i / 8, "y": y0 + (y1 - y0) * i / 8,
                                         "button": "left", "buttons": 1})
    # the board takes a press as a drag in its next animation frame (before that, a release is a
    # click); a hand's drag spans frames, so let the page draw two before the release, which
    # a busy machine may otherwise deliver in the same frame as the moves
    browser.execute_async_script("requestAnimationFrame(() => requestAnimationFrame(arguments[0]))")
    cdp("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y1, "button": "left", "clickCount": 1})


def text_of(browser, css):
    return js(browser, "const e = document.querySelector(arguments[0]); return e && !e.hidden ? e.textContent : '';", css)


def screenshot(browser, name, *, prompt: bool, show: str | None = None, colour=None):
    """A phone-sized screenshot; asserts that the board (and the prompt) are visible in it. With
    ``show``, that element is scrolled into view instead and must show ``colour``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    if show:
        js(browser, "document.querySelector(arguments[0]).scrollIntoView({block: 'end'})", show)
    else:
        js(browser, "window.scrollTo(0, 0)")
    time.sleep(0.2)
    browser.save_screenshot(str(path))
    png = read_png(path)
    scale = PHONE["deviceScaleFactor"]
    assert png[0] == PHONE["width"] * scale, png[0]
    rects = js(browser, """
        const r = (s) => { const e = document.querySelector(s); if (!e || e.hidden) return null;
                           const b = e.getBoundingClientRect(); return [b.x, b.y, b.width, b.height]; };
        return {board: r('#board'), prompt: r('#prompt'), shown: arguments[0] ? r(arguments[0]) : null,
                vh: innerHeight};""", show)
    if show:
        s = rects["shown"]
        assert s and s[1] >= 0 and s[1] + s[3] <= rects["vh"] + 1, f"{show} is not on the screen: {rects}"
        assert colour in colours_in(png, [v * scale for v in s], step=2), f"{show} is not in the screenshot"
        return path
    board = rects["board"]
    assert board and board[1] + board[3] <= rects["vh"], f"the board is not all on the screen: {rects}"
    seen = colours_in(png, [v * scale for v in board])
    assert LIGHT in seen and DARK in seen, "the board's squares are not in the screenshot"
    if prompt:
        p = rects["prompt"]
        assert p and p[1] + p[3] <= rects["vh"], f"the prompt is not on the screen: {rects}"
        assert PROMPT_BG in colours_in(png, [v * scale for v in p], step=2), "the prompt is not in the screenshot"
    return path


def test_pairing_is_refused_then_granted_on_the_page(server, browser):
    wait(browser, lambda: piece_on(browser, "e1") == "K", what="the board")
    assert text_of(browser, "#pairstate") == "Not paired"
    click(browser, "#btn-resign")
    click(browser, "#resignbox button.resignside[data-side='white']")
    toast = wait(browser, lambda: text_of(browser, "#toast"), what="the refusal")
    assert "Pair this phone" in toast
    assert server.wait_state()["result"] is None                     # nothing happened to the game
    assert js(browser, "return !document.querySelector('#pairpanel').hidden")    # the refusal offers pairing
    click(browser, "#pairbtn")
    square = wait(browser, lambda: js(browser, "return document.querySelector('#pairtext').dataset.square"))
    assert square in server.wait_state()["occupied"]
    server.sim({"t": 0, "lift": square}, {"t": 150, "place": square})
    wait(browser, lambda: text_of(browser, "#pairstate") == "Paired", what="Paired")


def test_a_game_played_through_sim_shows_on_the_page(server, browser, token):
    server.new_game(token, "tomorrow-1")
    wait(browser, lambda: piece_on(browser, "l1") == "R" and piece_on(browser, "g1") == "K", what="the 12x8 board")
    for a, b in (("e2", "e4"), ("e7", "e5"), ("c1", "b4")):       # a camel's leap
        server.move(a, b)
    wait(browser, lambda: piece_on(browser, "b4") == "L" and piece_on(browser, "c1") == "", what="the camel on b4")
    assert text_of(browser, "#moves") == "1. e4 e5 2. Lb4"            # by name and number, not e2e4
    # a lifted piece: the page shows its targets and says what is in hand
    server.sim({"t": 0, "lift": "d8"})
    wait(browser, lambda: "In hand: black knight from d8" in text_of(browser, "#status"), what="the piece in hand")
    leds = js(browser, "return [...document.querySelectorAll('#board [data-led=target]')].map(e => e.dataset.square).sort()")
    assert set(leds) == {sq for sq, l in server.wait_state()["leds"].items() if l["layer"] == "target"} and leds
    assert "the piece in hand may go here" in text_of(browser, "#ledlegend")
    server.sim({"t": 0, "place": "d8"})
    wait(browser, lambda: "In hand" not in text_of(browser, "#status") and piece_on(browser, "d8") == "n")
    # a move made on the page: tap the piece, tap its square (the simulated board's lift + place)
    synced(server, browser)
    tap_piece(browser, "k7")
    click_square(browser, "k6")
    wait(browser, lambda: server.wait_state()["moves"][-1:] == ["k7k6"], what="k7k6 made on the page")
    wait(browser, lambda: piece_on(browser, "k6") == "p")
    # and one dragged: the knight from d1 to c3 (lift d1, place c3)
    synced(server, browser)
    drag(browser, "d1", "c3")
    wait(browser, lambda: server.wait_state()["moves"][-1:] == ["d1c3"], what="d1c3 dragged on the page")
    wait(browser, lambda: piece_on(browser, "c3") == "N" and piece_on(browser, "d1") == "")
    legend = text_of(browser, "#legend")
    assert "camel" in legend and "giraffe" in legend
    drawn = js(browser, "return [...document.querySelectorAll('#legend .mini')].map(e => getComputedStyle(e).backgroundImage)")
    assert len(drawn) == 8 and all(d.startswith('url("data:image/svg+xml') for d in drawn), drawn   # every piece drawn
    screenshot(browser, "game-12x8", prompt=False)


def test_a_promotion_is_answered_by_a_click(server, browser, token):
    server.new_game(token, "orthodox", fen="8/4P1k1/8/8/8/8/8/4K3 w - - 0 1")
    wait(browser, lambda: piece_on(browser, "e7") == "P")
    server.move("e7", "e8")
    wait(browser, lambda: "Promotion on e8" in text_of(browser, "#prompt"), what="the promotion prompt")
    screenshot(browser, "promotion-prompt", prompt=True)
    assert piece_on(browser, "e8") == "P"              # the pawn set down, waiting for its new name
    click(browser, "#prompt button[data-label='e7e8n']")
    wait(browser, lambda: server.wait_state()["moves"] == ["e7e8n"], what="e7e8n")
    wait(browser, lambda: piece_on(browser, "e8") == "N" and text_of(browser, "#prompt") == "")


def test_a_csipgs_purchase_and_drop_made_on_the_page(server, browser, token):
    server.new_game(token, "csipgs-power-standard")     # 4 zorkmids a turn; a purchase is the action
    wait(browser, lambda: "csipgs" in text_of(browser, "#family"), what="the csipgs panel")
    buttons = wait(browser, lambda: js(browser, "return [...document.querySelectorAll('.buybtn')].map(b => b.dataset.design)"),
                   what="the purchases on offer")
    assert "N" in buttons and "BR" not in buttons                  # 4 zorkmids: no queen (9)
    screenshot(browser, "csipgs-buy", prompt=False)
    click(browser, ".buybtn[data-design='N']")
    st = wait(browser, lambda: (s := server.wait_state())["view"]["reserve"]["white"] and s)
    assert st["view"]["reserve"]["white"] == {"N": 1} and st["view"]["treasury"]["white"] == "1"
    assert st["view"]["phase"] == "design"
    click(browser, "#btn-end")                                   # no design change this turn
    wait(browser, lambda: server.wait_state()["turn"] == "black", what="black's turn")
    server.move("e8", "e7")
    assert server.post("/api/command", {"text": "end"}, token=token)[0] == 200
    click(browser, ".dropbtn[data-design='N']")
    click_square(browser, "d2")                                  # next to the king on e1
    st = wait(browser, lambda: (s := server.wait_state())["moves"][-1:] == ["N@d2"] and s, what="the drop N@d2")
    assert st["pieces"]["d2"] == "N" and st["view"]["reserve"]["white"] == {}
    wait(browser, lambda: piece_on(browser, "d2") == "N")


def test_a_design_is_priced_while_it_is_typed(server, browser, token):
    st = server.wait_state()
    assert st["family"] == "csipgs"
    box = wait(browser, lambda: browser.find_element("css selector", "#betza"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.click()
    for ch in "fcFfmW":
        box.send_keys(ch)
        time.sleep(0.03)
    wait(browser, lambda: js(browser, "return document.querySelector('#cost').dataset.price") == "2", what="the price")
    cost = text_of(browser, "#cost")
    assert "1.08" in cost and "fcF" in cost and "price 2 zorkmids" in cost
    box.send_keys("!")
    wait(browser, lambda: "bad" in js(browser, "return document.querySelector('#cost').className"), what="the refusal")
    box.send_keys("\b")
    wait(browser, lambda: js(browser, "return document.querySelector('#cost').dataset.price") == "2")
    screenshot(browser, "csipgs-design", prompt=False, show="#cost", colour=(0xF6, 0xF6, 0xF2))


def test_a_saved_game_is_stepped_through(server, browser):
    games = server.get("/api/games")[1]["games"]
    promo = next(g for g in games if g["variant"] == "orthodox" and g["actions"] == 1)
    click(browser, "nav button[data-tab='games']")
    click(browser, f"#gamelist button[data-game='{promo['id']}']")
    on = "const e = document.querySelector(`#viewboard [data-square='${arguments[0]}']`); return e && e.dataset.piece;"
    wait(browser, lambda: js(browser, on, "e8") == "N", what="the last position")
    assert "e8=N" in text_of(browser, "#viewpos")
    click(browser, "#view-prev")
    wait(browser, lambda: js(browser, on, "e7") == "P" and js(browser, on, "e8") == "", what="the start")
    assert js(browser, "return document.querySelector(arguments[0]).getAttribute('href')",
              f"#gamelist a[href$='{promo['id']}/pgn']") == f"/api/games/{promo['id']}/pgn"
    click(browser, "nav button[data-tab='play']")


def test_the_board_tab_runs_the_selftest_and_says_why_there_is_no_calibration(server, browser):
    click(browser, "nav button[data-tab='hardware']")
    click(browser, "#btn-selftest")
    wait(browser, lambda: "all fine" in text_of(browser, "#selftest"), what="the selftest's findings")
    assert "closed now: " in text_of(browser, "#selftest")
    assert "the simulated board needs no calibration" in text_of(browser, "#calib-refused")
    assert js(browser, "return document.querySelector('#calib-form').hidden")
    click(browser, "nav button[data-tab='play']")


# -- LED colours on the screen (docs/web.md, "The LED colours on the page") ------------------------

def _luminance(rgb):
    lin = [(c / 255 / 12.92) if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b):
    """WCAG 2 contrast ratio of two RGB colours."""
    x, y = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (x + 0.05) / (y + 0.05)


def css_rgb(text):
    """(r, g, b) of a computed colour (rgb(...) / rgba(...))."""
    import re
    m = re.match(r"rgba?\((\d+),\s*(\d+),\s*(\d+)", text)
    assert m, text
    return tuple(int(v) for v in m.groups())


def rendered_leds(browser):
    """Every lit square as drawn: its layer, the LED's raw colour and the marker's computed colour."""
    return js(browser, """return [...document.querySelectorAll('#board .sq.lit')].map(e => ({
        square: e.dataset.square, layer: e.dataset.led, raw: e.dataset.ledColor,
        shown: getComputedStyle(e, '::after').borderTopColor,
        width: parseFloat(getComputedStyle(e, '::after').borderTopWidth)}))""")


def square_colours(browser):
    return [css_rgb(js(browser, f"return getComputedStyle(document.querySelector('#board .sq.{k}:not(.lit):not(.hole)')).backgroundColor"))
            for k in ("light", "dark")]


def test_led_colours_are_display_colours_with_3_to_1_contrast(server, browser, token):
    # every layer's display colour, as the page's style sheet defines it, against both squares
    light, dark = square_colours(browser)
    palette = js(browser, """const cs = getComputedStyle(document.documentElement); const out = {};
        for (const s of document.styleSheets) for (const r of s.cssRules) if (r.style)
          for (const p of r.style) if (p.startsWith('--led-')) out[p] = cs.getPropertyValue(p).trim();
        return out;""")
    assert len(palette) >= 20, palette
    for name, value in palette.items():
        probe = js(browser, "const d = document.createElement('i'); d.style.color = arguments[0]; document.body.append(d);"
                            "const c = getComputedStyle(d).color; d.remove(); return c;", value)
        rgb = css_rgb(probe)
        assert contrast(rgb, light) >= 3 and contrast(rgb, dark) >= 3, (name, value, contrast(rgb, light), contrast(rgb, dark))
    # and as drawn: the last move, the targets and a capture of a piece in hand, a square to clear
    server.new_game(token, "orthodox", fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    wait(browser, lambda: piece_on(browser, "d5") == "p", what="the position")
    server.move("e1", "d1")
    server.move("e8", "e7")
    seen = []
    for events, want in ((({"t": 0, "lift": "e4"},), {"last move", "capture", "target"}),   # a piece in hand
                         (({"t": 0, "place": "a3"},), {"clear"})):                        # set down where it may not go
        server.sim(*events)
        wait(browser, lambda: want <= {l["layer"] for l in rendered_leds(browser)}, what=f"the layers {want}")
        synced(server, browser)
        raw = {sq: l["color"] for sq, l in server.wait_state()["leds"].items()}
        for led in rendered_leds(browser):
            rgb = css_rgb(led["shown"])
            assert led["raw"] == raw[led["square"]]                           # the snapshot's LED colour kept
            assert contrast(rgb, light) >= 3 and contrast(rgb, dark) >= 3, (led, contrast(rgb, light), contrast(rgb, dark))
            assert led["width"] >= 3, led
            seen.append(led)
        if "capture" in want:
            screenshot(browser, "led-colours", prompt=False)
    last = next(led for led in seen if led["layer"] == "last move")
    assert last["raw"] == "#3c2d00" and css_rgb(last["shown"]) != (0x3C, 0x2D, 0x00)
    # the LED legend's swatch is the colour drawn on the board
    swatch = js(browser, "return getComputedStyle(document.querySelector(\"#ledlegend li[data-layer='clear'] .swatch\")).backgroundColor")
    assert css_rgb(swatch) == css_rgb(next(led for led in seen if led["layer"] == "clear")["shown"])
    server.sim({"t": 0, "lift": "a3"}, {"t": 150, "place": "e4"})
