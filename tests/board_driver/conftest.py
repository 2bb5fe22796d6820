"""Fixtures the page and API tests share: one ``play --web`` server per test module (its own
data folder, a new orthodox game), a token paired as a player at the board would, and the
browser holding that token as the page's cookie."""

from __future__ import annotations

import pytest
from webtools import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    s = Server(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]) / "data",
               "--variant", "orthodox", "--new")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def token(server):
    return server.pair()


@pytest.fixture(scope="module")
def paired(browser, token):
    """The browser holds the token as the pairing's cookie (commands from the page are allowed)."""
    browser.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})
    return browser
