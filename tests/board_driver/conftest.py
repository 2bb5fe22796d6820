"""Fixtures the driver's tests share: a data folder of the test's own (``data``), the CLI run in
this process (``fb``), and for the page and API tests one ``play --web`` server per test
module (its own data folder, a new orthodox game), a token paired as a player at the board
would, and the browser holding that token as the page's cookie."""

from __future__ import annotations

import io
import sys

import pytest
from webtools import Server

from board_driver.cli import main


@pytest.fixture
def data(tmp_path, monkeypatch):
    """FAIRYBOARD_DATA pointed at a folder of the test's own."""
    d = tmp_path / "data"
    monkeypatch.setenv("FAIRYBOARD_DATA", str(d))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return d


@pytest.fixture
def fb(capsys, monkeypatch):
    """The CLI in this process: fb(*args, stdin="") -> (exit code, stdout, stderr)."""
    def run(*args, stdin=""):
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err
    return run


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
