"""The page's defences as units: the login limiter's delays (an injected clock, no waiting),
the token store's expiry and revocation, the pairing's choice of square and its lift and
put-back, the Host check."""

from __future__ import annotations

import pytest

from board_driver.web.bridge import (
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
    from board_driver.web.server import host_name
    assert host_name("Board.Local:8080") == "board.local"
    assert host_name("[::1]:8080") == "::1"
    assert host_name("chess.example.org.") == "chess.example.org"
    assert host_name("a@b") is None and host_name("x:99999") is None and host_name("") is None


def test_the_board_answers_to_its_own_names_only():
    import socket

    from board_driver.web.server import HostNames
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
