"""Remote games asked for on the page (docs/remote.md, docs/web.md): two boards' pages
(``play --web`` on simulated boards whose profiles name the same real mosquitto, with the
club's ACL), the boards online listed, an invitation sent from one page, shown on the other
board's page and said on its console, accepted there (both boards then play one game) or
declined (the inviting board is told). (A board without a broker: test_web_help.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from clubtools import MOSQUITTO, Broker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "board_driver"))
from webtools import Server, until  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]

SIM = (Path(__file__).resolve().parents[2] / "configs" / "boards" / "sim.yaml").read_text()



def page_board(tmp_path, broker, name) -> Server:
    profile = tmp_path / f"{name}.yaml"
    profile.write_text(SIM + f"broker:\n  host: 127.0.0.1\n  port: {broker.port}\n  name: {name}\n"
                             f"  password: pw-{name}\n  keepalive: 3\n")
    return Server(tmp_path / name, "--board", str(profile), "--variant", "orthodox", "--new")


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("invitations")
    broker = Broker(tmp / "broker", {"b1": "pw-b1", "b2": "pw-b2", "b3": "pw-b3"}).start()
    b1 = page_board(tmp, broker, "b1")
    b2 = page_board(tmp, broker, "b2")
    yield broker, b1, b2
    for b in (b1, b2):
        b.stop()
    broker.stop()


@pytest.fixture(scope="module")
def tokens(boards):
    _, b1, b2 = boards
    return b1.pair(), b2.pair()


def notices(server) -> list[str]:
    return [n["text"] for n in server.wait_state()["notices"]]


def test_the_boards_online_are_listed(boards):
    _, b1, b2 = boards
    listed = until(lambda: (r := b2.get("/api/remote/boards")[1]).get("boards") and r, what="the boards online")
    assert listed["me"] == "b2" and listed["connected"] is True
    assert {"board": "b1", "online": True} == {k: v for k, v in listed["boards"][0].items() if k != "t"}
    assert "b2" not in [b["board"] for b in listed["boards"]]          # not itself
    assert b2.wait_state()["lobby"] == {"me": "b2", "connected": True, "invitations": [], "outgoing": None}


def test_an_invitation_shown_on_the_other_board_and_accepted(boards, tokens):
    _, b1, b2 = boards
    t1, t2 = tokens
    assert b1.post("/api/remote/invite", {"board": "b2"})[0] == 401
    status, body = b1.post("/api/remote/invite", {"board": "b2", "side": "white", "variant": "courier",
                                                   "clock": "300+3"}, token=t1)
    assert status == 202 and body["invited"] == "b2" and body["you_play"] == "white", body
    before = b1.wait_state()["game"]
    out = until(lambda: b1.wait_state()["lobby"]["outgoing"], what="the invitation on b1's page")
    assert out["to"] == "b2" and out["state"] == "waiting" and out["variant"] == "courier"
    until(lambda: any("waiting for b2 to accept" in n for n in notices(b1)), what="b1 says it waits")
    # on b2's page and console
    inv = until(lambda: b2.wait_state()["lobby"]["invitations"], what="the invitation on b2's page: " + "".join(b2.output()[-20:]))
    assert inv == [{"from": "b1", "game": body["game"], "variant": "courier", "you_play": "black",
                    "players": {"white": "b1", "black": "b2"}, "clock": "300+3", "fen": None}], inv
    said = "b1 invites this board to play courier (you play black, 300+3): accept or decline it on the page."
    until(lambda: said in notices(b2), what="the invitation among b2's notices")
    until(lambda: any(said in line for line in b2.output()), what="the invitation on b2's console: " + "".join(b2.output()))
    assert b1.wait_state()["game"] == before                # b1's game goes on meanwhile
    assert b2.post("/api/remote/accept", {"board": "b3"}, token=t2)[0] == 404
    status, ans = b2.post("/api/remote/accept", {"board": "b1"}, token=t2)
    assert status == 202 and ans["accepted"] == "b1" and ans["game"] == body["game"], ans
    s1 = until(lambda: (s := b1.wait_state())["game"] == body["game"] and s, what="b1 on the agreed game")
    s2 = until(lambda: (s := b2.wait_state())["game"] == body["game"] and s, what="b2 on the agreed game")
    for s in (s1, s2):
        assert s["variant"] == "courier" and s["players"] == {"white": "b1", "black": "b2"}
        assert s["clocks"]["tc"] == "300+3"
    assert s2["lobby"]["invitations"] == [] and s1["lobby"]["outgoing"] is None
    # one game: a move on b1's board is b1's; b2 is shown it to carry out
    b1.move("b1", "c3")
    shown = until(lambda: b2.wait_state()["computer"], what="b1's move shown on b2")
    assert shown["move"] == "b1c3" and shown["text"].startswith("b1 (white) plays Nc3: "), shown


def test_an_invitation_declined_is_said_on_the_inviting_board(boards, tokens):
    _, b1, b2 = boards
    t1, t2 = tokens
    status, body = b2.post("/api/new", {"variant": "orthodox", "white": "remote:b1", "black": "Bea"}, token=t2)
    assert status == 202 and body["invited"] == "b1" and body["you_play"] == "black", body
    until(lambda: b1.wait_state()["lobby"]["invitations"], what="the invitation on b1's page")
    status, ans = b1.post("/api/remote/decline", {"board": "b2"}, token=t1)
    assert status == 200 and ans["declined"] == "b2" and ans["game"] == body["game"]
    assert b1.wait_state()["lobby"]["invitations"] == []
    out = until(lambda: (o := b2.wait_state()["lobby"]["outgoing"]) and o["state"] != "waiting" and o,
                what="the decline on b2")
    assert out["state"] == "declined" and "b1 declined the game" in out["error"]
    until(lambda: any("b1 declined the game" in n for n in notices(b2)), what="b2 says it")
    assert b2.wait_state()["game"] != body["game"]          # no game opened
    assert b2.post("/api/remote/cancel", {}, token=t2)[0] == 409        # nothing waits now


# -- the page in a real Chromium: one browser on each board's page -----------------------------------

@pytest.fixture(scope="module")
def pages(boards, tokens):
    pytest.importorskip("selenium.webdriver")
    from test_web_page import CHROMEDRIVER, CHROMIUM, open_browser
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("needs the distribution's chromium and chromedriver")
    _, b1, b2 = boards
    out = []
    for server, token in zip((b1, b2), tokens):
        d = open_browser(server.url)
        d.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})
        d.refresh()
        out.append(d)
    yield out
    for d in out:
        d.quit()


def test_on_the_page_a_board_is_invited_and_the_invitation_accepted_or_declined(boards, tokens, pages):
    from test_web_page import click, js, text_of, wait
    from test_web_page_help import both_themes
    _, b1, b2 = boards
    d1, d2 = pages
    # b1's page: the boards online, b2 invited to a game in which b1's player plays Black
    click(d1, "nav button[data-tab='new']")
    wait(d1, lambda: js(d1, "return !!document.querySelector(\"#remote-boards li[data-board='b2'] button.invite\")"),
         what="b2 listed online with an Invite button")
    assert "This board is b1" in text_of(d1, "#remote-note")
    for sel, value in (("#nv-variant", "orthodox"), ("#nv-clock", "-"), ("#remote-side", "black")):
        js(d1, "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
               "e.dispatchEvent(new Event('change'));", sel, value)
    both_themes(d1, "remote-boards", "#remote-panel", [(0xFF, 0xFF, 0xFF), (0x1E, 0x23, 0x26)])
    click(d1, "#remote-boards li[data-board='b2'] button.invite")
    wait(d1, lambda: "Invited b2" in text_of(d1, "#remote-box"), what="the invitation waiting on b1's page")
    assert js(d1, "return document.querySelector('#remote-box .outgoing').dataset.state") == "waiting"
    # b2's page: the invitation with Accept and Decline
    box = "#remote-box .invite[data-from='b1']"
    words = wait(d2, lambda: js(d2, "const e = document.querySelector(arguments[0]); return e && e.textContent", box),
                 what="the invitation on b2's page")
    assert "b1 invites this board to play Chess: you play white." in words, words
    both_themes(d2, "remote-invitation", box, [(0xF1, 0xE6, 0xFF), (0x2A, 0x1F, 0x3D)])
    click(d2, f"{box} button.accept")
    game = b1.wait_state()["lobby"]["outgoing"]["game"]
    wait(d2, lambda: js(d2, "return document.querySelector('#players').textContent") == "b2 – b1",
         what="the agreed game on b2's page")
    assert until(lambda: b1.wait_state()["game"] == game) and b2.wait_state()["game"] == game
    wait(d1, lambda: js(d1, "return document.querySelector('#players').textContent") == "b2 – b1"
         and js(d1, "return document.querySelector('#remote-box').hidden"), what="the agreed game on b1's page")
    # and one declined: b2 invites b1; b1's page declines it; b2's page says so
    status, body = b2.post("/api/remote/invite", {"board": "b1", "side": "white"}, token=tokens[1])
    assert status == 202, body
    wait(d1, lambda: js(d1, "return !!document.querySelector(\"#remote-box .invite[data-from='b2'] button.decline\")"),
         what="b2's invitation on b1's page")
    click(d1, "#remote-box .invite[data-from='b2'] button.decline")
    wait(d1, lambda: js(d1, "return document.querySelector('#remote-box').hidden"), what="the invitation gone")
    wait(d2, lambda: "b1 declined the game" in text_of(d2, "#remote-box"), what="the decline on b2's page")
    assert b1.wait_state()["game"] == game                          # b1 plays on
