"""The engine's help on the page in headless Chromium, as a player at a phone uses it: the Hint
button (the words shown, the move lit on the board drawing), the live evaluation's switch and
bar, and a saved game's evaluation graph (its big swings marked, a point tapped to see that
position); each screenshot at phone width, in the light theme and the dark one.

One server (play --web) and one phone-sized browser for the module; the tests run in order."""

from __future__ import annotations

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
from test_web_page_flows import _lum, _rgb

pytestmark = pytest.mark.slow

SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
BLUNDER = [("e2", "e4"), ("e7", "e5"), ("d1", "h5"), ("b8", "c6"), ("f1", "c4"), ("g8", "f6"), ("h5", "f7")]
HINT_BG = ((0xE3, 0xFA, 0xFA), (0x11, 0x32, 0x34))       # --computer-bg, light and dark


def dark(browser, on: bool) -> None:
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                            {"features": [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]})
    wait(browser, lambda: (_lum(_rgb(js(browser, "return getComputedStyle(document.body).backgroundColor"))) < 0.03) == on,
         what="the theme")


def both_themes(browser, name, show, colours):
    """Screenshots in the light and the dark theme (the phone's setting): ``show`` on the screen
    with ``colours[0]`` in the light theme, ``colours[1]`` in the dark one."""
    screenshot(browser, name, prompt=False, show=show, colour=colours[0])
    dark(browser, True)
    try:
        screenshot(browser, name + "-dark", prompt=False, show=show, colour=colours[1])
    finally:
        dark(browser, False)


def test_the_hint_button_shows_the_words_and_lights_the_move(server, browser, token, paired):
    server.new_game(token, "orthodox", fen=SCHOLAR)
    wait(browser, lambda: piece_on(browser, "h5") == "Q", what="the position")
    synced(server, browser)
    assert js(browser, "return document.querySelector('#hint').hidden")
    click(browser, "#btn-hint")
    words = wait(browser, lambda: "Hint for white" in (t := text_of(browser, "#hint")) and t, what="the hint's words")
    assert "(#1)" in words and "move the queen from h5 to f7" in words, words
    # lit on the board drawing like the computer's move, and named as the hint's in the legend
    wait(browser, lambda: js(browser, "return document.querySelector(\"#board [data-square='h5']\").dataset.led")
         == "computer from", what="h5 lit")
    assert "the hint's move: lift this piece" in text_of(browser, "#ledlegend")
    assert js(browser, "return document.querySelector('#hint').dataset.move") == "h5f7"
    bg = _rgb(js(browser, "return getComputedStyle(document.querySelector('#hint')).backgroundColor"))
    assert bg == HINT_BG[0], bg
    both_themes(browser, "hint", "#hint", HINT_BG)
    # another move: the hint goes
    server.move("b1", "c3")
    wait(browser, lambda: js(browser, "return document.querySelector('#hint').hidden"), what="the hint gone")
    assert js(browser, "return document.querySelector(\"#board [data-square='h5']\").dataset.led || ''") == ""


def test_the_evaluation_switch_shows_a_bar_and_a_score(server, browser, token, paired):
    server.new_game(token, "orthodox", fen=SCHOLAR)
    wait(browser, lambda: piece_on(browser, "h5") == "Q", what="the position")
    assert js(browser, "return document.querySelector('#evalbox').hidden")            # off by default
    assert text_of(browser, "#btn-eval") == "Evaluation off"
    click(browser, "#btn-eval")
    wait(browser, lambda: js(browser, "return document.querySelector('#evalbox').dataset.state") == "done",
         what="the evaluation")
    assert text_of(browser, "#btn-eval") == "Evaluation on"
    assert js(browser, "return document.querySelector('#btn-eval').getAttribute('aria-pressed')") == "true"
    assert text_of(browser, "#evaltext").startswith("#1")                             # White mates in 1
    share = "const b = document.querySelector('#evalbar'); const w = b.querySelector('.evalwhite');" \
            "return w.getBoundingClientRect().width / b.getBoundingClientRect().width"
    wait(browser, lambda: js(browser, share) > 0.95, what="the bar all White's")          # it slides there
    both_themes(browser, "evaluation", "#evalbox", [(0xF4, 0xF4, 0xF0)] * 2)      # White's share of the bar
    server.move("b1", "c3")                                                           # the mate missed
    wait(browser, lambda: js(browser, "const e = document.querySelector('#evalbox').dataset;"
                                      "return e.ply === '1' && e.state === 'done'"), what="the next position judged")
    assert not text_of(browser, "#evaltext").startswith("#")
    click(browser, "#btn-eval")
    wait(browser, lambda: js(browser, "return document.querySelector('#evalbox').hidden"), what="the bar gone")
    assert server.wait_state()["eval"] is None and text_of(browser, "#btn-eval") == "Evaluation off"


def test_a_saved_games_graph_marks_the_blunder_and_a_tap_shows_its_position(server, browser, token, paired):
    server.new_game(token, "orthodox")
    for a, b in BLUNDER:
        server.move(a, b, capture=b == "f7")
    gid = wait(browser, lambda: (s := server.wait_state())["result"] and s["game"], what="the mate")
    click(browser, "nav button[data-tab='games']")
    click(browser, f"#gamelist button[data-game='{gid}']")
    wait(browser, lambda: text_of(browser, "#viewpos").startswith("4. Qxf7#"), what="the game opened")
    assert js(browser, "return document.querySelector('#evalgraph').hidden")
    click(browser, "#btn-analyse")
    wait(browser, lambda: js(browser, "return document.querySelectorAll('#evalgraph g.pt').length") == 8
         and js(browser, "return document.querySelector('#analysis-note').dataset.state") == "done",
         timeout=60, what="the graph")
    swings = js(browser, "return [...document.querySelectorAll('#evalgraph g.pt.swing')].map(g => g.dataset.ply)")
    assert "6" in swings and "7" not in swings, swings              # (2. Qh5 may count as one too)
    want = len(swings)
    assert "Nf6??" in text_of(browser, "#swings")
    note = text_of(browser, "#analysis-note")
    assert "Judged by" in note and "big swings" in note
    # the swing is red on the graph
    fill = _rgb(js(browser, "return getComputedStyle(document.querySelector(\"#evalgraph g.pt[data-ply='6'] .dot\")).fill"))
    assert fill[0] > 150 and fill[1] < 60, fill
    # a tap on the marked point shows the position after 3... Nf6 with its score
    js(browser, "document.querySelector('#evalgraph').scrollIntoView({block: 'center'})")
    click(browser, "#evalgraph g.pt.swing[data-ply='6'] circle.hit")
    on = "const e = document.querySelector(`#viewboard [data-square='${arguments[0]}']`); return e && e.dataset.piece;"
    wait(browser, lambda: js(browser, on, "f6") == "n" and js(browser, on, "f7") == "p", what="the position after Nf6")
    assert text_of(browser, "#viewpos").startswith("3... Nf6 (#1??)"), text_of(browser, "#viewpos")
    assert js(browser, "return document.querySelector('#evalgraph g.pt.current').dataset.ply") == "6"
    both_themes(browser, "evaluation-graph", "#evalgraph", [(0xD0, 0x02, 0x1B)] * 2)     # the swing's red
    # the page opened again later: the graph comes from the file, at once
    browser.refresh()
    click(browser, "nav button[data-tab='games']")
    click(browser, f"#gamelist button[data-game='{gid}']")
    wait(browser, lambda: js(browser, "return document.querySelectorAll('#evalgraph g.pt.swing').length") == want,
         timeout=5, what="the graph of the saved analysis")
    assert js(browser, "return document.querySelector('#btn-analyse').hidden")
    click(browser, "nav button[data-tab='play']")


def test_a_board_without_a_broker_says_so_on_the_new_game_tab(server, browser):
    click(browser, "nav button[data-tab='new']")
    note = wait(browser, lambda: "No remote games" in (t := text_of(browser, "#remote-note")) and t,
                what="the note on remote games")
    assert "no broker configured" in note, note
    assert js(browser, "return document.querySelector('#remote-side-row').hidden")
    assert js(browser, "return document.querySelectorAll('#remote-boards button').length") == 0
    assert js(browser, "return document.querySelector('#remote-box').hidden")          # nothing on the Game tab
    click(browser, "nav button[data-tab='play']")
