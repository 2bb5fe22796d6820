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
    piece_on,
    screenshot,
    synced,
    tap_piece,
    text_of,
    wait,
)
from webtools import Server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("flows") / "data", "--variant", "orthodox", "--new")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def token(server):
    return server.pair()


def shown_version(browser) -> int:
    return int(js(browser, "return document.body.dataset.version || 0"))


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
