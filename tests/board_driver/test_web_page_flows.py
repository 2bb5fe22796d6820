"""The page in headless Chromium through the flows a player hits first, each of which once
showed a stale board or acted wrongly: a server restarted under an open page, moves of every
kind made on the simulated board by tap and by drag, resigning.

One server (play --web on a port kept across its restarts) and one phone-sized browser for the
module; the tests run in order. Screenshots go where test_web_page.py writes its own.
"""

from __future__ import annotations

import pytest
from test_web_page import (  # noqa: F401  (browser is a fixture, used by name)
    browser,
    click,
    click_square,
    drag,
    js,
    open_browser,
    piece_on,
    screenshot,
    synced,
    tap_piece,
    text_of,
    wait,
)
from webtools import colours_in, read_png

pytestmark = pytest.mark.slow


def test_the_page_follows_a_server_restarted_under_it(server, browser, token):
    wait(browser, lambda: piece_on(browser, "e1") == "K", what="the board")
    for a, b in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "b5"), ("a7", "a6")):
        server.move(a, b)
    synced(server, browser)
    before = server.wait_state()
    run = before["run"]
    assert before["version"] > 10
    server.restart()                                      # resumes the same game, counting from 1
    after = server.wait_state()
    assert after["game"] == before["game"] and after["run"] != run and after["version"] < before["version"]
    server.move("b5", "c6", capture=True)                # a move made after the restart shows at once
    wait(browser, lambda: piece_on(browser, "c6") == "B" and piece_on(browser, "b5") == "", what="Bxc6")
    wait(browser, lambda: js(browser, "return document.querySelector('#conn').className") == "conn on")
    assert js(browser, "return document.body.dataset.run") == after["run"]
    assert "b5c6" in text_of(browser, "#moves") or "Bxc6" in text_of(browser, "#moves")
    screenshot(browser, "restart-followed", prompt=False)


def move_on_page(server, browser, a, b, how):
    """Move the piece on ``a`` to ``b`` on the page: tap and tap, or drag and drop."""
    synced(server, browser)
    if how == "tap":
        tap_piece(browser, a)
        click_square(browser, b)
    else:
        drag(browser, a, b)


def moves_are(server, want):
    return wait(None, lambda: (s := server.wait_state())["moves"] == want and s, what=f"moves {want}")


@pytest.mark.parametrize("how", ["tap", "drag"])
def test_a_capture_made_on_the_page_completes(server, browser, token, how):
    server.new_game(token, "orthodox", fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    wait(browser, lambda: piece_on(browser, "d5") == "p", what="the position")
    move_on_page(server, browser, "e4", "d5", how)
    st = moves_are(server, ["e4d5"])
    assert st["pending"] is None and st["pieces"]["d5"] == "P"
    wait(browser, lambda: piece_on(browser, "d5") == "P" and piece_on(browser, "e4") == "", what="exd5")
    screenshot(browser, f"capture-{how}", prompt=False)


@pytest.mark.parametrize("how", ["tap", "drag"])
def test_castling_made_on_the_page_moves_the_rook_too(server, browser, token, how):
    server.new_game(token, "orthodox", fen="r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    wait(browser, lambda: piece_on(browser, "h1") == "R", what="the position")
    move_on_page(server, browser, "e1", "g1", how)
    moves_are(server, ["e1g1"])
    move_on_page(server, browser, "e8", "c8", how)
    st = moves_are(server, ["e1g1", "e8c8"])
    assert st["pending"] is None and st["pieces"]["f1"] == "R" and st["pieces"]["d8"] == "r"
    wait(browser, lambda: piece_on(browser, "d8") == "r" and piece_on(browser, "a8") == "", what="O-O-O")


@pytest.mark.parametrize("how", ["tap", "drag"])
def test_en_passant_made_on_the_page_takes_the_pawn_off(server, browser, token, how):
    server.new_game(token, "orthodox", fen="4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    wait(browser, lambda: piece_on(browser, "e5") == "P", what="the position")
    move_on_page(server, browser, "e5", "d6", how)
    st = moves_are(server, ["e5d6"])
    assert st["pending"] is None and "d5" not in st["pieces"] and "d5" not in st["occupied"]
    wait(browser, lambda: piece_on(browser, "d6") == "P" and piece_on(browser, "d5") == "", what="exd6 e.p.")


@pytest.mark.parametrize("how", ["tap", "drag"])
def test_a_promotion_made_on_the_page_asks_for_the_piece(server, browser, token, paired, how):
    server.new_game(token, "orthodox", fen="3r2k1/4P3/8/8/8/8/8/4K3 w - - 0 1")
    wait(browser, lambda: piece_on(browser, "e7") == "P", what="the position")
    move_on_page(server, browser, "e7", "d8", how)                  # a capture that promotes
    wait(browser, lambda: "Promotion on d8" in text_of(browser, "#prompt"), what="the promotion prompt")
    click(browser, "#prompt button[data-label='e7d8n']")
    st = moves_are(server, ["e7d8n"])
    assert st["pending"] is None and st["pieces"]["d8"] == "N"
    wait(browser, lambda: piece_on(browser, "d8") == "N")


def test_a_chego_drop_and_its_removals_made_on_the_page(server, browser, token):
    import random

    from board_driver.config import load_variant
    from engine.game import new_game

    def kills_alone(g, a):
        same = [b for b in g.legal_actions() if b.places == a.places and b.lifts == a.lifts]
        others = [b for b in g.legal_actions() if b.places == a.places and b.lifts != a.lifts]
        return a.lifts and len(same) == 1 and not others
    v = load_variant("chego")
    found = None
    for seed in range(40):
        rng, g, moves = random.Random(seed), new_game(v), []
        for _ in range(40):
            legal = [a for a in g.legal_actions() if a.kind == "drop"]
            hit = [a for a in legal if kills_alone(g, a)]
            if hit:
                found = moves, hit[0], g
                break
            if not legal:
                break
            a = rng.choice(legal)
            moves.append(a)
            g.push(a)
        if found:
            break
    moves, drop, g = found
    name = g.geometry.name
    server.new_game(token, "chego")
    for a in moves:                                   # the game up to there, through the API
        events = [{"t": 0, "place": name(next(iter(a.places)))}]
        events += [{"t": 100 * (i + 1), "lift": name(k)} for i, k in enumerate(sorted(a.lifts))]
        st = server.sim(*events)["state"]
        if st["pending"] and st["pending"]["type"] == "prompt":
            assert server.post("/api/command", {"text": "choose " + a.text.split("@")[0]}, token=token)[0] == 200
    moves_are(server, [a.text for a in moves])
    synced(server, browser)
    click(browser, "#placebtn")                       # the drop: from the hand, tap the square
    click_square(browser, name(next(iter(drop.places))))
    victims = sorted(name(k) for k in drop.lifts)
    wait(browser, lambda: all(js(browser, "return document.querySelector(`#board [data-square='${arguments[0]}']`)"
                                          ".dataset.led", sq) == "remove" for sq in victims), what="the victims lit")
    screenshot(browser, "chego-remove", prompt=False)
    for sq in victims:                                # each taken off by a tap
        synced(server, browser)
        click_square(browser, sq)
    st = moves_are(server, [a.text for a in moves] + [drop.text])
    assert st["pending"] is None and not set(victims) & set(st["occupied"])


@pytest.mark.parametrize("how", ["tap", "drag"])
def test_the_computers_capture_carried_out_on_the_page(server, browser, token, how):
    """The computer's capture is lit (its victim to lift off): a tap on the mover and then on the
    victim, or a drag, carries it out; with the victim lifted first (as on a real board) the drag
    onto its empty square completes it too."""
    server.new_game(token, "orthodox", white="Ann", black="builtin:1", fen="7k/6Q1/8/8/8/8/8/K7 b - - 0 1")
    st = wait(None, lambda: (s := server.wait_state())["computer"] and s, what="the computer's move shown")
    assert st["computer"]["move"] == "h8g7" and st["leds"]["g7"]["layer"] == "remove"
    wait(browser, lambda: piece_on(browser, "g7") == "Q" and piece_on(browser, "h8") == "k", what="the position")
    if how == "tap":
        move_on_page(server, browser, "h8", "g7", "tap")
    else:
        server.sim({"lift": "g7"})                         # the victim off first, then the king dragged
        assert server.wait_state()["pending"]["type"] == "move"
        wait(browser, lambda: piece_on(browser, "g7") == "", what="the victim lifted")
        move_on_page(server, browser, "h8", "g7", "drag")
    st = moves_are(server, ["h8g7"])
    assert st["pending"] is None and st["pieces"]["g7"] == "k" and st["computer"] is None
    wait(browser, lambda: piece_on(browser, "g7") == "k" and piece_on(browser, "h8") == "", what="Kxg7")


def test_the_board_is_turned_toward_the_side_played_here(server, browser, token):
    """Against the computer the page shows the person's side at the bottom; Flip turns it."""
    where = """const r = (k) => document.querySelector(`#board [data-square='${k}']`).getBoundingClientRect();
               return {a1: r('a1'), h8: r('h8'), side: document.querySelector('#board').dataset.orientation};"""
    server.new_game(token, "orthodox", white="random", black="Ann")
    after = wait(browser, lambda: (w := js(browser, where))["side"] == "black" and w, what="turned to Black")
    assert after["a1"]["x"] > after["h8"]["x"] and after["a1"]["y"] < after["h8"]["y"]    # h8 bottom left
    assert text_of(browser, "#players") == "Computer (random) – Ann"
    wait(browser, lambda: piece_on(browser, "e8") == "k", what="the board")
    path = screenshot(browser, "oriented-black", prompt=False)
    assert any(max(c) < 50 for c in square_pixels(browser, path, "e8")), "no black king drawn on e8"
    click(browser, "#btn-flip")
    wait(browser, lambda: js(browser, where)["side"] == "white", what="flipped back")
    server.new_game(token, "orthodox", white="Ann", black="Bob")          # two people: White at the bottom
    wait(browser, lambda: js(browser, where)["side"] == "white" and text_of(browser, "#players") == "Ann – Bob")


def test_a_chego_game_paired_and_started_from_a_fresh_page(server, browser, token):
    """Chego starts on an empty board: the pairing lights an empty square (drawn on the page and
    in /api/state), a piece put there and taken off again pairs, and the page starts a game."""
    server.new_game(token, "chego")
    browser.delete_all_cookies()                          # a fresh page: never paired
    try:
        browser.refresh()
        wait(browser, lambda: text_of(browser, "#pairstate") == "Not paired" and js(browser, "return document.body.dataset.family") == "chego")
        click(browser, "#pairbtn")
        square = wait(browser, lambda: js(browser, "return document.querySelector('#pairtext').dataset.square"), what="the square")
        assert "Put a piece on" in text_of(browser, "#pairtext")
        led = server.wait_state()["leds"][square]
        assert led["layer"] == "pairing" and led["blink"] == "slow" and led["color"] == "#ffffff"
        wait(browser, lambda: js(browser, "return document.querySelector(`#board [data-square='${arguments[0]}']`).dataset.led", square) == "pairing",
             what="the pairing square drawn")
        screenshot(browser, "pairing-chego", prompt=False)
        click(browser, "#simtools button[data-tool='place']")       # as a player at the board: a piece put there ...
        click_square(browser, square)
        wait(None, lambda: square in server.wait_state()["occupied"], what="the piece set down")
        click(browser, "#simtools button[data-tool='lift']")        # ... and taken off again
        click_square(browser, square)
        wait(browser, lambda: text_of(browser, "#pairstate") == "Paired", what="Paired")
        assert server.wait_state()["leds"].get(square, {}).get("layer") != "pairing"    # no longer lit for it
        click(browser, "#simtools button[data-tool='move']")
        game = server.wait_state()["game"]
        click(browser, "nav button[data-tab='new']")
        wait(browser, lambda: js(browser, "return document.querySelectorAll('#nv-variant option').length") > 20)
        js(browser, "const s = document.querySelector('#nv-variant'); s.value = 'chego'; s.dispatchEvent(new Event('change'))")
        js(browser, "document.querySelector('#newform').requestSubmit()")          # Start the game
        st = wait(None, lambda: (s := server.wait_state())["game"] != game and s, what="the new game")
        assert st["variant"] == "chego" and st["players"] == {"white": "White", "black": "Black"}
    finally:
        browser.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})
        click(browser, "nav button[data-tab='play']")


def resign_buttons(browser):
    return js(browser, "return [...document.querySelectorAll('#resignbox button.resignside')].map(b => b.dataset.side)")


def test_resign_against_the_computer_resigns_the_persons_side(server, browser, token, paired):
    server.new_game(token, "orthodox", white="Ann", black="random")
    server.move("e2", "e4")
    st = wait(None, lambda: (s := server.wait_state())["computer"] and s, what="the computer's move shown")
    assert st["turn"] == "black"                                   # the computer's turn
    wait(browser, lambda: st["computer"]["text"] in text_of(browser, "#prompt"), what="its move on the page")
    click(browser, "#btn-resign")
    wait(browser, lambda: resign_buttons(browser) == ["white"], what="Ann's side only")
    assert "Ann" in text_of(browser, "#resignbox")
    screenshot(browser, "resign-computer", prompt=False)
    click(browser, "#resignbox button.resignside[data-side='white']")
    st = wait(None, lambda: (s := server.wait_state())["result"] and s, what="the resignation")
    assert st["result"] == "0-1" and st["reason"] == "resignation", st["result"]
    wait(browser, lambda: "0-1" in text_of(browser, "#status"))


def test_resign_between_two_people_asks_which_side(server, browser, token, paired):
    server.new_game(token, "orthodox", white="Ann", black="Bob")
    synced(server, browser)
    click(browser, "#btn-resign")
    wait(browser, lambda: resign_buttons(browser) == ["white", "black"], what="both sides offered")
    click(browser, "#resignbox .resigncancel")                      # changed one's mind: nothing happens
    wait(browser, lambda: js(browser, "return document.querySelector('#resignbox').hidden"))
    assert server.wait_state()["result"] is None
    click(browser, "#btn-resign")
    click(browser, "#resignbox button.resignside[data-side='black']")   # Bob resigns on White's turn
    st = wait(None, lambda: (s := server.wait_state())["result"] and s, what="the resignation")
    assert st["result"] == "1-0" and st["turn"] == "white"


def test_what_is_hidden_stays_hidden(server, browser):
    """A hidden element is not shown whatever its class's display (.row is flex): the password
    box of a board without a password, the simulated board's toolbar on a real one."""
    click(browser, "nav button[data-tab='play']")
    js(browser, "document.querySelector('#pairpanel').hidden = false")     # the pairing panel open
    try:
        assert not server.wait_state()["password"]
        shown = js(browser, "return [...document.querySelectorAll('[hidden]')]"
                            ".filter(e => getComputedStyle(e).display !== 'none').map(e => e.id || e.className)")
        assert shown == [], shown
        assert not browser.find_element("css selector", "#loginform").is_displayed()
    finally:
        js(browser, "document.querySelector('#pairpanel').hidden = true")


# -- dark mode ------------------------------------------------------------------------------------

def _lum(rgb):
    return sum(w * ((c / 255 / 12.92) if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4)
               for w, c in zip((0.2126, 0.7152, 0.0722), rgb))


def _rgb(text):
    import re
    return tuple(int(v) for v in re.match(r"rgba?\((\d+),\s*(\d+),\s*(\d+)", text).groups())


def square_pixels(browser, path, sq):
    """The colours of a square of the board in a screenshot."""
    x, y, w, h = js(browser, "const b = document.querySelector(`#board [data-square='${arguments[0]}']`).getBoundingClientRect();"
                             "return [b.x, b.y, b.width, b.height];", sq)
    return colours_in(read_png(path), [v * 2 for v in (x, y, w, h)], step=2)


def test_the_page_follows_the_phones_dark_mode(server, browser, token):
    server.new_game(token, "orthodox")
    wait(browser, lambda: piece_on(browser, "e8") == "k", what="the board")
    assert js(browser, "return document.querySelector('meta[name=color-scheme]').content") == "light dark"
    light_bg = _rgb(js(browser, "return getComputedStyle(document.body).backgroundColor"))
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    try:
        wait(browser, lambda: _lum(_rgb(js(browser, "return getComputedStyle(document.body).backgroundColor"))) < 0.03,
             what="the dark theme")
        assert _lum(light_bg) > 0.8
        assert "dark" in js(browser, "return getComputedStyle(document.documentElement).colorScheme")
        ink = _rgb(js(browser, "return getComputedStyle(document.body).color"))
        bg = _rgb(js(browser, "return getComputedStyle(document.body).backgroundColor"))
        assert (_lum(ink) + 0.05) / (_lum(bg) + 0.05) >= 7                       # text stays readable
        for css in ("#btn-flip", "nav button", ".panel, #notices li"):
            fg = _rgb(js(browser, "return getComputedStyle(document.querySelector(arguments[0])).color", css))
            assert _lum(fg) > 0.5, (css, fg)
        path = screenshot(browser, "dark-mode", prompt=False)          # the board keeps its squares
        assert any(max(c) < 50 for c in square_pixels(browser, path, "e8")), "the black king is not dark"
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_pieces_stay_readable_under_forced_dark(server):
    """Chrome's "darken websites" (auto dark mode, under the phone's dark theme) darkened the page
    by a filter: the squares dark brown and every piece white. The page's own dark theme opts out."""
    d = open_browser(server.url, "--force-dark-mode", "--enable-features=WebContentsForceDark")
    try:
        wait(d, lambda: piece_on(d, "e8") == "k" and piece_on(d, "e1") == "K", what="the board")
        path = screenshot(d, "forced-dark", prompt=False)           # the squares' own colours (checked there)
        assert any(max(c) < 50 for c in square_pixels(d, path, "e8")), "the black king turned light"
        assert any(min(c) > 235 for c in square_pixels(d, path, "e1")), "the white king is not white"
        assert js(d, "return matchMedia('(prefers-color-scheme: dark)').matches")
    finally:
        d.quit()


# -- layout ------------------------------------------------------------------------------------------

def test_flipping_keeps_the_coordinates_upright(server, browser, token):
    server.new_game(token, "orthodox")
    wait(browser, lambda: piece_on(browser, "e8") == "k", what="the board")
    where = """const r = (k) => document.querySelector(`#board [data-square='${k}']`).getBoundingClientRect();
               const lab = (a) => [...document.querySelectorAll(`#board .sq[data-${a}]`)].map(e => [e.dataset.square, e.getBoundingClientRect().x, e.getBoundingClientRect().y]);
               return {a1: r('a1'), h8: r('h8'), ranks: lab('rank'), files: lab('file'),
                       turned: [...document.querySelectorAll('#board, #board *')].some(e => getComputedStyle(e).transform !== 'none' && e.matches('.fb-grid, .sq'))};"""
    before = js(browser, where)
    assert before["a1"]["x"] < before["h8"]["x"] and before["a1"]["y"] > before["h8"]["y"]
    click(browser, "#btn-flip")
    try:
        after = wait(browser, lambda: (w := js(browser, where))["a1"]["x"] > w["h8"]["x"] and w, what="the board flipped")
        assert after["a1"]["y"] < after["h8"]["y"] and not after["turned"]       # laid out, not turned round
        ranks = {sq for sq, _, _ in after["ranks"]}
        files = {sq for sq, _, _ in after["files"]}
        assert ranks == {f"h{r}" for r in range(1, 9)}                # the left column names the ranks
        assert files == {f"{f}8" for f in "abcdefgh"}                 # the bottom row names the files
        assert piece_on(browser, "e8") == "k"
        screenshot(browser, "flipped", prompt=False)
    finally:
        click(browser, "#btn-flip")


def test_notices_of_earlier_games_are_not_shown_under_a_new_one(server, browser, token):
    st = server.new_game(token, "orthodox")
    st = server.new_game(token, "orthodox")
    assert sum(n["text"].startswith("New game ") for n in st["notices"]) >= 2   # the board said both
    synced(server, browser)
    shown = js(browser, "return [...document.querySelectorAll('#notices li')].map(e => e.textContent)")
    assert shown and shown[-1].startswith(f"New game {st['game']}:"), shown
    assert not [t for t in shown if t.startswith("New game ") and not t.startswith(f"New game {st['game']}:")], shown


def test_an_error_says_what_is_wrong_and_takes_no_taps(server, browser, paired):
    browser.refresh()
    wait(browser, lambda: piece_on(browser, "e1") == "K", what="the board")
    cdp = browser.execute_cdp_cmd
    cdp("Network.enable", {})
    cdp("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        click(browser, "#btn-flip")        # nothing asked of the board
        js(browser, "document.querySelector('#cmd').value = 'pass'; document.querySelector('#cmdform button').click()")
        toast = wait(browser, lambda: text_of(browser, "#toast"), what="the error")
        assert "Failed to fetch" not in toast and "does not answer" in toast, toast
    finally:
        cdp("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        click(browser, "#btn-flip")
    # a tap where the toast shows goes to what is under it
    hit = js(browser, """const t = document.querySelector('#toast'); const b = t.getBoundingClientRect();
                         const e = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
                         return [!t.hidden, e === t || t.contains(e)];""")
    assert hit == [True, False], hit


def test_header_and_tabs_fit_the_phone_at_200_percent_text(server, browser):
    browser.refresh()
    wait(browser, lambda: piece_on(browser, "e1") == "K", what="the board")
    players = js(browser, "const e = document.querySelector('#players'); const b = e.getBoundingClientRect(); return [b.width, e.textContent]")
    assert players[0] > 0 and "–" in players[1], players                  # the names show on a phone
    js(browser, "document.documentElement.style.fontSize = '200%'")
    try:
        out = js(browser, """return [...document.querySelectorAll('header *, nav button')]
                 .filter(e => e.getBoundingClientRect().width).map(e => [e.id || e.textContent.trim(), e.getBoundingClientRect().right])
                 .filter(([, r]) => r > innerWidth + 1)""")
        assert not out, f"off the screen at 200% text: {out}"
        assert js(browser, "return document.documentElement.scrollWidth <= innerWidth")
        assert float(js(browser, "return parseFloat(getComputedStyle(document.querySelector('nav button')).fontSize)")) >= 29
        screenshot(browser, "text-200", prompt=False)
    finally:
        js(browser, "document.documentElement.style.fontSize = ''")


def test_a_landscape_phone_shows_the_board_and_its_controls_at_once(server, browser):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 844, "height": 390, "deviceScaleFactor": 2, "mobile": True})
    try:
        browser.refresh()
        wait(browser, lambda: piece_on(browser, "e1") == "K", what="the board")
        js(browser, "window.scrollTo(0, document.querySelector('#tab-play').getBoundingClientRect().top + scrollY)")
        r = js(browser, """const r = (s) => { const b = document.querySelector(s).getBoundingClientRect(); return [b.x, b.y, b.right, b.bottom]; };
                           return {board: r('#board'), status: r('#status'), resign: r('#btn-resign'), flip: r('#btn-flip'), vw: innerWidth, vh: innerHeight};""")
        for k in ("board", "status", "resign", "flip"):
            x, y, right, bottom = r[k]
            assert y >= 0 and bottom <= r["vh"] + 1 and right <= r["vw"] + 1, (k, r)
        assert r["board"][3] - r["board"][1] >= 0.8 * r["vh"], r                  # the board fills the height
        browser.save_screenshot(str(__import__("test_web_page").SHOTS / "landscape.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", __import__("test_web_page").PHONE)
        browser.refresh()


# -- serving -------------------------------------------------------------------------------------------

def test_the_page_comes_gzipped_and_its_hashed_files_are_kept(server, browser):
    import re
    browser.get(server.url + "/")
    wait(browser, lambda: piece_on(browser, "e1") == "K", what="the board")
    got = js(browser, """return performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))
                         .filter(e => /\\/static\\/|\\/$/.test(e.name))
                         .map(e => [e.name, e.encodedBodySize, e.decodedBodySize])""")
    files = {re.sub(r"\?.*", "", n).rsplit("/", 1)[-1] or "index.html": (enc, dec) for n, enc, dec in got}
    assert set(files) >= {"index.html", "app.js", "app.css"}, files
    for name, (enc, dec) in files.items():
        assert enc < dec / 2, f"{name}: {enc} bytes sent for {dec}"          # gzip-compressed
    assert sum(enc for enc, _ in files.values()) < 40_000, files
    refs = re.findall(r'(/static/app\.(?:js|css)\?v=[0-9a-f]{12})', server.get("/")[1])
    assert len(refs) == 2, refs
    import gzip
    import urllib.error
    import urllib.request

    def fetch(path, **headers):
        try:
            with urllib.request.urlopen(urllib.request.Request(server.url + path, headers=headers), timeout=10) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, b"", dict(e.headers)
    for ref in refs:
        status, body, headers = fetch(ref, **{"Accept-Encoding": "gzip"})
        assert status == 200 and headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in headers["Vary"]
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable", headers
        plain = fetch(ref.split("?")[0] + "?v=000000000000")
        assert plain[2]["Cache-Control"] == "no-cache" and "Content-Encoding" not in plain[2]   # no gzip asked
        assert gzip.decompress(body) == plain[1]
    assert fetch("/")[2]["Cache-Control"] == "no-cache"
    assert fetch("/static/app.js.gz")[0] == 404
    assert fetch("/static/..%2fserver.py")[0] == 404
