"""The page's defences as units: the login limiter's delays (an injected clock, no waiting),
the token store's expiry and revocation, the pairing's choice of square and its lift and
put-back, the Host check."""

from __future__ import annotations

import pytest

from board_driver.web.auth import (
    LOGIN_FREE,
    LOGIN_MAX_DELAY,
    LOGIN_TOTAL_FREE,
    LOGIN_TOTAL_MAX_DELAY,
    Backoff,
    LoginLimiter,
    client_key,
)


class Clock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_a_client_waits_longer_after_every_wrong_password_past_its_free_ones():
    clock = Clock()
    lim = LoginLimiter(clock)
    for _ in range(LOGIN_FREE - 1):
        lim.failed("10.0.0.7")
        assert lim.wait("10.0.0.7") == 0
    waits = []
    for _ in range(12):
        lim.failed("10.0.0.7")
        waits.append(lim.wait("10.0.0.7"))
        clock.t += waits[-1]                     # the client waits exactly as long as told
    assert waits[:4] == [2, 4, 8, 16]
    assert all(b >= a for a, b in zip(waits, waits[1:])) and waits[-1] == LOGIN_MAX_DELAY
    assert lim.wait("10.0.0.8") == 0            # another client is not held up by this one


def test_a_right_password_clears_the_clients_count_and_an_hour_of_quiet_forgets_it():
    clock = Clock()
    lim = LoginLimiter(clock)
    for _ in range(LOGIN_FREE):
        lim.failed("a")
    assert lim.retry_after("a") == 2
    clock.t += 2
    lim.succeeded("a")
    lim.failed("a")
    assert lim.wait("a") == 0
    for _ in range(LOGIN_FREE):
        lim.failed("b")
    clock.t += 3601
    lim.failed("b")
    assert lim.wait("b") == 0


def test_all_clients_together_wait_once_the_total_free_guesses_are_spent():
    clock = Clock()
    lim = LoginLimiter(clock)
    for i in range(LOGIN_TOTAL_FREE):              # each from a new address: none is held up alone
        lim.failed(f"10.0.{i}.1")
    assert lim.wait("10.9.9.9") == 2               # a client never seen waits too
    for i in range(40):
        clock.t += lim.wait("x")
        lim.failed(f"10.1.{i}.1")
    assert lim.wait("someone") == LOGIN_TOTAL_MAX_DELAY


def test_backoff_remembers_a_bounded_number_of_clients():
    b = Backoff(1, 1.0, 10.0, clock=Clock(), keys=3)
    for k in "abcd":
        b.failed(k)
    assert b.wait("a") == 0 and b.wait("d") == 1


def test_clients_are_told_apart_by_address_and_ipv6_by_their_64():
    assert client_key("192.168.1.20") == "192.168.1.20"
    assert client_key("::ffff:192.168.1.20") == "192.168.1.20"
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key(None) == "?"


def test_a_host_header_is_read_as_its_name_alone():
    from board_driver.web.hosts import host_name
    assert host_name("Board.Local:8080") == "board.local"
    assert host_name("[::1]:8080") == "::1"
    assert host_name("chess.example.org.") == "chess.example.org"
    assert host_name("a@b") is None and host_name("x:99999") is None and host_name("") is None


def test_the_board_answers_to_its_own_names_only():
    import socket

    from board_driver.web.hosts import HostNames
    h = HostNames("0.0.0.0", ["chess.example.org", "192.168.7.7"])
    name = socket.gethostname().lower()
    for ok in ("localhost:8080", "127.0.0.1", "[::1]:1", f"{name}:8080", f"{name.split('.')[0]}.local",
               "chess.example.org", "192.168.7.7:80", "0.0.0.0:8080"):
        assert h.allows(ok), ok
    for bad in ("evil.example", "evil.example:8080", "localhost.evil.example", "10.255.255.1", "bad host"):
        assert not h.allows(bad), bad
    assert h.allows("10.255.255.1:80", local="10.255.255.1")     # the address the request came in on
    assert h.allows(None)                                         # no Host at all: no browser's request


def test_the_profile_may_name_more_hosts_and_nothing_else():
    from board_driver.errors import ConfigError
    from board_driver.web.service import WebConfig
    assert WebConfig.from_dict({"hosts": ["Chess.Example.org", "192.168.1.5"]}, "b.yaml").hosts == \
        ("chess.example.org", "192.168.1.5")
    for bad in (["a b"], ["host:80"], [3], {"x": 1}, ["http://x/"]):
        with pytest.raises(ConfigError, match="web.hosts"):
            WebConfig.from_dict({"hosts": bad}, "b.yaml")


# -- tokens: expiry, the owner's list, revocation --------------------------------------------------

def test_a_token_expires_after_30_days_unused_and_each_use_restarts_them(tmp_path):
    from board_driver.web.auth import TOKEN_DAYS, TokenStore
    clock = Clock(1_700_000_000.0)
    store = TokenStore(tmp_path / "web-tokens.json", clock=clock)
    token = store.grant("Firefox on Linux (10.0.0.2)", "pairing")
    day = 24 * 3600
    for _ in range(3):                         # used every 20 days: still valid after 60
        clock.t += 20 * day
        assert store.valid(token)
    clock.t += TOKEN_DAYS * day + 1
    assert not store.valid(token) and store.devices() == []
    assert not TokenStore(tmp_path / "web-tokens.json", clock=clock).valid(token)     # nor after a restart


def test_tokens_are_kept_as_hashes_in_a_private_file_and_survive_a_restart(tmp_path):
    import json
    import stat

    from board_driver.web.auth import TokenStore
    path = tmp_path / "web-tokens.json"
    token = TokenStore(path).grant("Chrome on Android (10.0.0.3)", "password")
    text = path.read_text()
    assert token not in text and stat.S_IMODE(path.stat().st_mode) == 0o600
    again = TokenStore(path)
    assert again.valid(token)
    (d,) = again.devices()
    assert d["label"] == "Chrome on Android (10.0.0.3)" and d["via"] == "password"
    assert set(d) == {"id", "label", "via", "created", "last_used", "expires"}
    assert json.loads(text)["tokens"][0]["id"] == d["id"]


def test_the_owner_revokes_one_device_or_all_and_another_process_may_too(tmp_path):
    from board_driver.web.auth import TokenStore
    path = tmp_path / "web-tokens.json"
    store = TokenStore(path)
    a, b, c = (store.grant(f"device {i}") for i in range(3))
    ids = [d["id"] for d in store.devices()]
    assert store.revoke({ids[0]}) == 1 and not store.valid(a) and store.valid(b)
    TokenStore(path).revoke(None)              # `fairyboard web forget` in another process
    assert not store.valid(b) and not store.valid(c) and store.devices() == []


def test_tokens_of_the_first_format_are_read_and_expire_from_now(tmp_path):
    import hashlib
    import json

    from board_driver.web.auth import TokenStore
    path = tmp_path / "web-tokens.json"
    path.write_text(json.dumps({"tokens": [hashlib.sha256(b"old").hexdigest()]}))
    clock = Clock(1_700_000_000.0)
    store = TokenStore(path, clock=clock)
    assert store.valid("old") and len(store.devices()) == 1
    clock.t += 31 * 24 * 3600
    assert not store.valid("old")


# -- pairing: the square, the lift and put-back, one per client ---------------------------------------

def _bridge_on(table):
    from board_driver.web.bridge import WebBridge
    bridge = WebBridge()
    bridge.attach(table.session)
    return bridge


def _frame(closed, t=0, gap=False):
    from board_driver.devices import RawFrame
    return RawFrame(t, frozenset(closed), gap)


def _pair(bridge, table, square: str, client: str = "c"):
    """A waiting pairing on ``square`` (as start_pairing makes them, its square chosen)."""
    import time

    from board_driver.web.pairing import PAIR_SECONDS, Pairing
    layout, geo = table.session.layout, table.session.game.geometry
    sq = geo.parse(square)
    p = Pairing(f"p-{square}", square, layout.physical(sq), layout.sensor_of(sq), time.monotonic() + PAIR_SECONDS,
                client=client)
    bridge.pairings._pairings[p.id] = p
    return p


def test_a_lift_and_put_back_of_the_lit_piece_alone_pairs():
    from board_driver.web.pairing import PairingState
    from drivertools import Table
    t = Table("orthodox")
    bridge = _bridge_on(t)
    p = _pair(bridge, t, "d8")
    board = t.session.layout.closed_sensors(t.session.occupancy)
    bridge.observe(_frame(board))
    bridge.observe(_frame(set(board) - {p.sensor}))
    assert p.state is PairingState.WAITING
    bridge.observe(_frame(board))
    assert p.state is PairingState.GRANTED and bridge.tokens.valid(p.token)


def test_a_capture_made_on_the_lit_square_does_not_pair():
    from board_driver.web.pairing import PairingState
    from drivertools import Table
    t = Table("orthodox", fen="rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    geo, layout = t.session.game.geometry, t.session.layout
    bridge = _bridge_on(t)
    p = _pair(bridge, t, "d5")                 # (pairing_squares never lights it; observe must not care)
    e4 = layout.sensor_of(geo.parse("e4"))
    board = set(layout.closed_sensors(t.session.occupancy))
    bridge.observe(_frame(board))
    bridge.observe(_frame(board - {p.sensor}))              # the victim off
    bridge.observe(_frame(board - {p.sensor, e4}))          # the capturing pawn lifted
    bridge.observe(_frame(board - {e4}))                    # ... and set down on d5
    assert p.state is PairingState.WAITING and p.token is None
    # both at once (one frame) counts no more than one after the other
    q = _pair(bridge, t, "d8")
    c7 = layout.sensor_of(geo.parse("c7"))
    bridge.observe(_frame(board))
    bridge.observe(_frame(board - {q.sensor, c7}))
    bridge.observe(_frame(board - {c7}))
    assert q.state is PairingState.WAITING
    # after the spoiled try, a clean lift and put-back pairs
    bridge.observe(_frame(board))
    bridge.observe(_frame(board - {q.sensor}))
    bridge.observe(_frame(board))
    assert q.state is PairingState.GRANTED


def test_the_pairing_square_is_apart_from_the_move_under_way_and_the_captures():
    from board_driver.web.pairing import pairing_squares
    from drivertools import Table
    t = Table("orthodox", fen="r3k2r/pppq1ppp/8/3p4/4P3/8/PPPP1PPP/R3K2R w KQkq - 0 1")
    name = t.session.game.geometry.name
    free = {name(sq) for sq in pairing_squares(t.session)}
    assert "d5" not in free                      # the pawn on e4 may take it
    assert not free & {"e1", "a1", "h1", "e4", "a2", "h2"}      # pieces the side to move may move
    assert {"e8", "d7", "a8"} <= free
    t.lift("e1").place("g1")                   # castling under way: its rook is part of it
    assert t.session.verdict.status.value in ("pending", "hold")
    during = {name(sq) for sq in pairing_squares(t.session)}
    assert "h1" not in during and "g1" not in during and "d5" not in during


def test_one_waiting_pairing_per_client_and_a_client_cannot_keep_squares_lit():
    import time

    from board_driver.web.pairing import MAX_WAITING, PAIR_PER_CLIENT, PAIR_WINDOW, PairingBusy
    from drivertools import Table
    t = Table("orthodox")
    bridge = _bridge_on(t)
    p = bridge.start_pairing(t.session, client="10.0.0.9")
    assert bridge.start_pairing(t.session, client="10.0.0.9") is p          # asked again: the same one
    others = [bridge.start_pairing(t.session, client=f"10.0.1.{i}") for i in range(MAX_WAITING - 1)]
    assert len({x.square for x in [p, *others]}) == MAX_WAITING             # never one square for two
    with pytest.raises(PairingBusy) as full:
        bridge.start_pairing(t.session, client="10.0.0.99")
    assert full.value.status == 400 and 1 <= full.value.retry_after <= 30
    for x in others:
        x.deadline = time.monotonic() - 1
    for _ in range(PAIR_PER_CLIENT):            # the watcher's pairings run out, one after another
        p.deadline = time.monotonic() - 1
        bridge.pairings.expire()
        try:
            p = bridge.start_pairing(t.session, client="10.0.0.9")
        except PairingBusy as exc:
            busy = exc
            break
    else:
        raise AssertionError("a client renewed its pairing for good")
    assert busy.status == 429 and PAIR_WINDOW - 60 < busy.retry_after <= PAIR_WINDOW
    assert PAIR_PER_CLIENT >= 5 and PAIR_WINDOW <= 300            # a fumbling new player waits minutes at most
    assert bridge.start_pairing(t.session, client="10.0.0.10").state.value == "waiting"   # others still may


def test_an_empty_board_pairs_by_a_piece_put_on_the_lit_square_and_taken_off():
    """Chego starts on an empty board: nothing to lift, so an empty square is lit (in the
    snapshot's LEDs too) and a piece set on it and taken off again pairs; a stale frame of the
    board before a new game does not spoil it."""
    from board_driver.web.pairing import PairingState
    from drivertools import Table
    t = Table("chego")
    bridge = _bridge_on(t)
    bridge.observe(_frame(set(range(20))))              # the last frame of the game before
    bridge.attach(t.session)                            # a new game on a new board
    p = bridge.start_pairing(t.session, client="c")
    assert not p.filled and "Put a piece on" in p.text and p.square not in t.session.game.geometry.holes
    assert bridge.publish(t.session)["leds"][p.square]["layer"] == "pairing"
    t.place(p.square)                                   # the game asks which piece was dropped ...
    bridge.observe(_frame({p.sensor}))
    t.lift(p.square)                                    # ... and forgets it when it is taken off
    bridge.observe(_frame(set()))
    assert p.state is PairingState.GRANTED and t.session.pending() is None and not t.moves
    assert bridge.publish(t.session)["leds"].get(p.square, {}).get("layer") != "pairing"


def test_a_move_on_the_page_does_not_lift_a_victim_already_off():
    from board_driver.web.routes.game import move_steps
    from drivertools import Table
    t = Table("orthodox", fen="7k/6Q1/8/8/8/8/8/K7 b - - 0 1")
    assert move_steps("h8-g7", t.session, board=t.board) == [("lift", "g7"), ("lift", "h8"), ("place", "g7")]
    t.lift("g7")                                        # the victim taken off first
    assert move_steps("h8-g7", t.session, board=t.board) == [("lift", "h8"), ("place", "g7")]
    t.lift("h8").place("g7")
    assert t.moves == ["h8g7"]
