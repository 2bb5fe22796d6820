"""The host link against the firmware's own logic over a real pty, on virtual clocks.

The firmware runs on fake pins and a fake LED strip (bridge_fakes); the host opens the pty by
a udev-style symlink or a glob, exactly as it would open /dev/fairyboard or /dev/ttyACM*.
"""

from __future__ import annotations

import threading
import time

import fb_core
import fb_proto
import pytest
import serial
from bridge_fakes import RealTicks, Rig, VirtualBoard, board  # noqa: F401  (board: a fixture)

from firmware_bridge import (
    Blink,
    BoardError,
    Decoder,
    ErrorCode,
    Hello,
    IncompatibleBoardError,
    LedFrame,
    LinkClosedError,
    LinkTimeoutError,
    MessageError,
    Occupancy,
    OccupancyReason,
    Pong,
    PortError,
    RequestKind,
    Settings,
    encode,
)
from firmware_bridge.link import (
    BoardLink,
    Link,
    LinkHealth,
    LinkState,
    LinkStatus,
    LinkTimings,
    resolve_ports,
)

CHANGE = OccupancyReason.CHANGE
RED, GREEN, BLUE, DARK = (255, 0, 0), (0, 255, 0), (0, 0, 255), (0, 0, 0)


@pytest.fixture
def rig(board):
    r = Rig(board)
    r.until(lambda: r.link.state is LinkState.READY)
    yield r
    r.close()


def scene(*lit):
    """96 colours: the given (index, colour) pairs lit, the rest dark."""
    colours = [DARK] * 96
    for index, colour in lit:
        colours[index] = colour
    return colours


def play(rig, script, ms=50):
    """Set each occupancy of the script in turn, holding each for ``ms``."""
    for closed in script:
        rig.board.set_closed(closed)
        rig.advance(ms)


class FrameSpy:
    """Decodes what the host sends the board, as the board reads it."""

    def __init__(self, cable):
        self.decoder = Decoder()
        self.seen = []
        self.rewrite = None
        cable.to_board = self

    def __call__(self, data):
        if self.rewrite is not None:
            data = self.rewrite(data)
        self.seen += self.decoder.feed(data)
        return data

    def of(self, kind):
        return [m for m in self.seen if isinstance(m, kind)]


# --- handshake and normal traffic -------------------------------------------------------------

def test_handshake_over_a_udev_style_name(board):
    r = Rig(board, ports=[str(board.directory / "ttyFAIRY0")])
    took = r.until(lambda: r.link.state is LinkState.READY)
    assert took == 0  # no virtual time needed: the boot Hello waits in the board's USB FIFO
    hello = r.link.hello
    assert hello == Hello(1, fb_core.FIRMWARE_VERSION, 96, 96, 12, 8, 0xB007)
    states = [e.message.state for e in r.events if isinstance(e.message, LinkStatus)]
    assert states == [LinkState.DISCONNECTED, LinkState.HANDSHAKE, LinkState.READY]
    health = r.link.health()
    assert health.port == str(board.directory / "ttyFAIRY0")
    assert (health.crc_errors, health.framing_errors, health.reconnects, health.resyncs) == (0, 0, 0, 0)
    # the boot frames waited in the USB FIFO: the Hello is used, the boot OCCUPANCY is not
    # delivered (stale by the time a host reads it), the answer to the sync's request is
    (first,) = r.occupancies()
    assert first.reason is OccupancyReason.REQUESTED and first.closed == set() and first.seq == 1
    assert health.occupancy_stale == 1 and health.occupancy_lost == 0
    r.close()


def test_scripted_occupancies_arrive_exactly_and_in_order(rig):
    script = [{0}, {0, 11}, {11}, {11, 95}, set(), {5, 6, 7}, {5, 7}, set(range(96)), {42}]
    start = len(rig.occupancies())
    play(rig, script)
    changes = rig.occupancies(CHANGE)
    assert [m.closed for m in changes] == script
    seqs = [m.seq for m in rig.occupancies()[start - 1:]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gaps, no repeats
    health = rig.link.health()
    assert health.occupancy_lost == 0 and health.occupancy_duplicates == 0


def test_occupancy_timestamps_come_from_the_injected_clock(rig):
    rig.advance(5)
    t0 = rig.clock()
    rig.board.set_closed({30})
    rig.until(lambda: rig.occupancies(CHANGE))
    (received,) = [e for e in rig.events if isinstance(e.message, Occupancy) and e.message.reason is CHANGE]
    # debounce 30 ms, scanned every 10 ms: seen between 30 and 40 ms after the placement
    assert 0.030 <= received.at - t0 <= 0.041


def test_led_frames_arrive_intact_at_the_strip(rig):
    spy = FrameSpy(rig.board.cable)
    frames = [scene((0, RED), (95, BLUE)), scene((12, GREEN), (13, (1, 2, 3))), scene()]
    for colours in frames:
        sent = rig.link.send_leds(colours)
        rig.advance(1)
        assert rig.board.strip.shown == tuple(colours)
        assert rig.link.health().leds_acked
        assert spy.of(LedFrame)[-1] == sent
    sent = rig.link.send_leds(scene((7, (200, 100, 50))), blink={7: Blink.SLOW}, brightness=51)
    assert sent.blink[7] is Blink.SLOW
    rig.advance(1000)
    shown_7 = {frame[7] for frame in rig.board.strip.history[-4:]}
    assert shown_7 == {(40, 20, 10), DARK}  # scaled by 51/255 and blinking


def test_ping_and_requests(rig):
    token = rig.link.ping()
    rig.advance(1)
    assert rig.messages(Pong) == [Pong(token)]
    rig.link.request(RequestKind.SETTINGS)
    rig.advance(1)
    assert rig.messages(Settings) == [Settings(10, 30, 1000, 1000)]
    assert rig.link.health().board_settings == Settings(10, 30, 1000, 1000)


def test_settings_are_applied_at_handshake_and_after_a_reset(board):
    wanted = Settings(scan_period_ms=5, debounce_ms=10, periodic_ms=500, heartbeat_ms=250)
    r = Rig(board, settings=wanted)
    r.until(lambda: r.link.health().board_settings == wanted)
    assert board.fw.settings == [5, 10, 500, 250]
    board.boot(0x0002)
    assert board.fw.settings == [10, 30, 1000, 1000]
    r.until(lambda: board.fw.settings == [5, 10, 500, 250])
    r.close()


def test_bad_settings_come_back_as_a_board_error(rig):
    rig.link.set_settings(Settings(scan_period_ms=0))
    rig.advance(1)
    (err,) = rig.messages(BoardError)
    assert err.code is ErrorCode.BAD_SETTING and "scan_period_ms" in err.text
    assert rig.link.health().board_errors == 1
    with pytest.raises(MessageError):
        rig.link.set_settings((1, 2, 3, 4))


# --- recovery ---------------------------------------------------------------------------------

def test_unplug_and_replug_loses_nothing_after_reconnection(rig):
    board, link = rig.board, rig.link
    spy = FrameSpy(board.cable)
    leds = link.send_leds(scene((3, RED)))
    play(rig, [{1}, {1, 2}])
    board.cable.unplug()
    rig.advance(5)
    assert link.state is LinkState.DISCONNECTED
    down = [e.message for e in rig.events if isinstance(e.message, LinkStatus)][-1]
    assert down.state is LinkState.DISCONNECTED and "reading" in down.reason and "failed" in down.reason
    # the pieces move while the cable is out
    play(rig, [{2}, {2, 3}])
    board.cable.plug("ttyFAIRY0")
    spy = FrameSpy(board.cable)
    rig.until(lambda: link.state is LinkState.READY)
    rig.advance(1)
    assert spy.of(LedFrame) == [leds]  # the LED state is sent again
    first = rig.occupancies()[-1]
    assert first.closed == {2, 3}  # the state the board has now
    mark = len(rig.occupancies(CHANGE))
    script = [{3}, {3, 4}, {3, 4, 5}, set(), {9}]
    play(rig, script)
    assert [m.closed for m in rig.occupancies(CHANGE)[mark:]] == script
    health = link.health()
    assert health.reconnects == 1 and health.resyncs == 1
    assert health.state is LinkState.READY and health.occupancy_duplicates == 0


def test_replugged_under_another_name_is_found_by_the_glob(rig):
    board, link = rig.board, rig.link
    link.send_leds(scene((0, GREEN)))
    rig.advance(1)
    board.cable.unplug()
    rig.advance(2)
    board.cable.plug("ttyFAIRY7")
    rig.until(lambda: link.state is LinkState.READY)
    assert link.health().port.endswith("ttyFAIRY7")
    board.set_closed({60})
    rig.until(lambda: any(m.closed == {60} for m in rig.occupancies(CHANGE)))


def test_ports_are_retried_every_retry_interval_until_one_appears(board):
    board.cable.unplug()
    r = Rig(board)
    r.advance(1200)
    assert r.link.state is LinkState.DISCONNECTED
    assert "no port matches" in r.link.health().last_error
    board.cable.plug("ttyFAIRY0")
    took = r.until(lambda: r.link.state is LinkState.READY)
    # retry_interval, then the board's first heartbeat tells the host its firmware runs
    assert took <= 500 + 1000
    assert r.link.health().reconnects == 0  # the first connection is not a reconnection
    r.close()


def test_a_reset_board_gets_its_leds_back(rig):
    board, link = rig.board, rig.link
    colours = scene((10, RED), (20, GREEN))
    link.send_leds(colours)
    play(rig, [{4}])
    board.boot(0x0BB0)  # watchdog or power glitch: new boot id, LEDs dark
    assert board.strip.shown == (DARK,) * 96
    rig.advance(1)
    assert board.strip.shown == tuple(colours)
    health = link.health()
    assert health.board_resets == 1 and health.resyncs == 1
    assert link.hello.boot_id == 0x0BB0
    # the new boot's sequence numbers start again at 0 without being taken for repeats
    play(rig, [{4, 5}, {5}])
    assert [m.closed for m in rig.occupancies(CHANGE)] == [{4}, {4, 5}, {5}]
    assert link.health().occupancy_duplicates == 0


def test_a_silent_board_is_resynced_then_reopened(rig):
    board, link = rig.board, rig.link
    colours = scene((1, BLUE))
    link.send_leds(colours)
    rig.advance(1)
    board.hung = True
    took = rig.until(lambda: link.state is LinkState.HANDSHAKE)
    assert 3000 <= took <= 3001  # heartbeat_timeout
    assert link.health().heartbeat_timeouts == 1
    rig.until(lambda: link.health().reconnects == 1, max_ms=4000)  # 3 Hello requests, then reopen
    board.boot(0x0C0C)  # the watchdog reset it
    board.hung = False
    rig.until(lambda: link.state is LinkState.READY)
    rig.advance(1)
    assert board.strip.shown == tuple(colours)


def test_a_corrupt_occupancy_frame_is_replaced_at_once(rig):
    board, link = rig.board, rig.link

    def corrupt_change_frames(data):
        frames = Decoder().feed(data)
        if any(isinstance(m, Occupancy) and m.reason is CHANGE for m in frames):
            data = bytearray(data)
            data[len(data) // 2] ^= 0x10
            board.cable.to_host = None  # only the first one
            return bytes(data)
        return data

    board.cable.to_host = corrupt_change_frames
    board.set_closed({17})
    rig.until(lambda: any(m.closed == {17} for m in rig.occupancies()), max_ms=100)
    got = rig.occupancies()[-1]
    assert got.reason is OccupancyReason.REQUESTED  # asked for as soon as the bad frame came in
    health = link.health()
    assert health.crc_errors + health.framing_errors == 1
    assert health.occupancy_lost == 1


def test_a_lost_frame_is_noticed_by_the_heartbeat(rig):
    board, link = rig.board, rig.link

    def swallow_changes(data):
        frames = Decoder().feed(data)
        return b"" if any(isinstance(m, Occupancy) and m.reason is CHANGE for m in frames) else data

    board.cable.to_host = swallow_changes
    board.set_closed({33})
    rig.advance(100)
    assert not any(m.closed == {33} for m in rig.occupancies())  # swallowed
    board.cable.to_host = None
    rig.until(lambda: any(m.closed == {33} for m in rig.occupancies()), max_ms=1000)
    # the heartbeat (every 1000 ms of uptime) named a newer seq, so the host asked
    assert rig.occupancies()[-1].reason is OccupancyReason.REQUESTED
    assert link.health().occupancy_lost == 1
    assert link.health().crc_errors == 0


def test_a_repeated_frame_is_delivered_once(rig):
    board, link = rig.board, rig.link

    def twice(data):
        if any(isinstance(m, Occupancy) for m in Decoder().feed(data)):
            return data + data
        return data

    board.cable.to_host = twice
    play(rig, [{8}, {8, 9}])
    assert [m.closed for m in rig.occupancies(CHANGE)] == [{8}, {8, 9}]
    assert link.health().occupancy_duplicates == 2


def test_garbage_on_the_line_is_survived(rig):
    board, link = rig.board, rig.link
    board.cable.write(b"Traceback (most recent call last):\r\n  File \"main.py\"\r\n")
    board.cable.write(b"\x00\x07\x07\x07\x00")
    play(rig, [{70}])
    assert [m.closed for m in rig.occupancies(CHANGE)] == [{70}]
    assert link.health().framing_errors + link.health().crc_errors >= 1
    assert link.state is LinkState.READY


def test_a_corrupt_led_frame_is_sent_again(rig):
    board, link = rig.board, rig.link
    spy = FrameSpy(board.cable)

    def corrupt_once(data):
        if len(data) > 100:  # the LED frame
            spy.rewrite = None
            data = bytearray(data)
            data[50] ^= 0x40  # no new 0x00: the frame stays one (bad) frame
        return bytes(data)

    spy.rewrite = corrupt_once
    colours = scene((44, (9, 8, 7)))
    link.send_leds(colours)
    rig.advance(2)
    assert board.strip.shown == tuple(colours)
    assert [e.code for e in rig.messages(BoardError)] == [ErrorCode.BAD_FRAME]
    assert link.health().led_resends == 1 and link.health().leds_acked


def test_an_led_frame_lost_without_trace_is_sent_again_after_the_ack_timeout(rig):
    board, link = rig.board, rig.link
    spy = FrameSpy(board.cable)
    spy.rewrite = lambda data: b"" if len(data) > 100 else data
    colours = scene((2, GREEN))
    link.send_leds(colours)
    rig.advance(100)
    assert board.strip.shown == (DARK,) * 96 and not link.health().leds_acked
    spy.rewrite = None
    took = rig.until(lambda: board.strip.shown == tuple(colours))
    assert took <= 500  # led_ack_timeout
    assert link.health().led_resends == 1


def test_an_incompatible_board_is_left_alone(board, monkeypatch):
    monkeypatch.setattr(fb_proto, "PROTOCOL_VERSION", 9)
    board.boot(0xB007)
    spy = FrameSpy(board.cable)
    r = Rig(board)
    r.link.send_leds(scene((0, RED)))
    r.until(lambda: r.link.state is LinkState.INCOMPATIBLE)
    r.advance(100)
    assert r.link.hello.protocol_version == 9
    assert "protocol version 9" in r.link.health().last_error
    assert spy.of(LedFrame) == [] and r.occupancies() == []
    with pytest.raises(IncompatibleBoardError, match="protocol version 9, this host speaks 1"):
        r.link.wait_ready(1.0)
    r.close()


# --- configuration and lifecycle --------------------------------------------------------------

def test_resolve_ports_expands_globs_in_order(tmp_path):
    for name in ("ttyACM1", "ttyACM0", "other"):
        (tmp_path / name).touch()
    ports = resolve_ports([str(tmp_path / "fairyboard"), str(tmp_path / "ttyACM*"), "loop://",
                           str(tmp_path / "ttyACM0")])
    assert ports == [str(tmp_path / "fairyboard"), str(tmp_path / "ttyACM0"),
                     str(tmp_path / "ttyACM1"), "loop://"]


def test_a_loop_url_needs_only_configuration():
    ports = []

    def open_port(url):
        ports.append(serial.serial_for_url(url, timeout=0))
        return ports[-1]

    link = Link("loop://", open_port=open_port, timings=LinkTimings(read_timeout=0)).open()
    link.service()
    assert link.state is LinkState.HANDSHAKE and link.health().port == "loop://"
    # whatever is written into the loop comes back as if from a board
    ports[0].write(encode(Hello(1, (1, 0, 0), 96, 96, 12, 8, 7)))
    link.service()
    link.service()
    assert link.state is LinkState.READY
    # our own request, echoed: a host-to-board type is a message error on the host
    assert link.health().message_errors == 1
    assert "0x81 is not one this side receives" in (link.health().last_error or "")
    link.close()


def test_the_default_opener_uses_serial_for_url(board):
    link = Link([board.port_glob], timings=LinkTimings(read_timeout=0))
    assert isinstance(link, BoardLink)
    with link:
        link.service()
        assert link.state is LinkState.HANDSHAKE
        assert link.health().port == str(board.directory / "ttyFAIRY0")


def test_a_second_program_cannot_take_the_port(board):
    first = Link([board.port_glob], timings=LinkTimings(read_timeout=0)).open()
    second = Link([board.port_glob], timings=LinkTimings(read_timeout=0)).open()
    try:
        first.service()
        second.service()
        assert first.state is LinkState.HANDSHAKE
        assert second.state is LinkState.DISCONNECTED
        assert "exclusively lock" in second.health().last_error
    finally:
        first.close()
        second.close()


def test_health_is_a_frozen_snapshot(rig):
    before = rig.link.health()
    frames_then = before.frames_received
    assert isinstance(before, LinkHealth)
    with pytest.raises(AttributeError):
        before.reconnects = 5
    rig.advance(1100)
    after = rig.link.health()
    assert after.frames_received > frames_then
    assert before.frames_received == frames_then  # a snapshot, not a live view
    assert any(line.startswith("reconnects: ") for line in after.lines())


def test_a_closed_link_refuses_work(board):
    link = Link([board.port_glob])
    with pytest.raises(LinkClosedError):
        link.wait_ready(0.01)
    link.open()
    link.close()
    with pytest.raises(LinkClosedError):
        link.service()


def test_wait_ready_without_a_port_names_the_candidates(tmp_path):
    link = Link([str(tmp_path / "nothing*")], timings=LinkTimings(read_timeout=0.001)).open()
    with pytest.raises(PortError, match="no port matches .*nothing"):
        link.wait_ready(0.05)
    link.close()


def test_wait_ready_with_a_silent_board_times_out(board):
    board.hung = True  # nobody runs the firmware: the port opens, nothing answers
    board.cable.unheard.clear()
    link = Link([board.port_glob], open_port=board.open_port, timings=LinkTimings(read_timeout=0.001))
    with link:
        with pytest.raises(LinkTimeoutError, match="ttyFAIRY0 not ready"):
            link.wait_ready(0.05)
        assert link.state is LinkState.HANDSHAKE


def test_reader_thread_with_real_clocks(tmp_path):
    """The production arrangement: the firmware in its own loop, the link's reader thread."""
    board = VirtualBoard(tmp_path, ticks=RealTicks(), read_timeout=0.01)
    stop = threading.Event()
    fw_thread = threading.Thread(target=board.run_forever, args=(stop,), daemon=True)
    fw_thread.start()
    link = Link([board.port_glob], open_port=board.open_port,
                timings=LinkTimings(read_timeout=0.01))
    try:
        link.start()
        hello = link.wait_ready(5.0)
        assert hello.sensor_count == 96
        link.send_leds(scene((5, BLUE)))
        board.set_closed({77})
        deadline = time.monotonic() + 5.0
        seen = None
        while time.monotonic() < deadline:
            item = link.get(timeout=0.1)
            if item is not None and isinstance(item.message, Occupancy) and item.message.closed == {77}:
                seen = item
                break
        assert seen is not None
        assert link.health().leds_acked and board.strip.shown[5] == BLUE
    finally:
        link.close()
        stop.set()
        fw_thread.join()
        board.close()


# --- connecting to a board that may be booting; noise at opening; refused frames ---------------

def test_nothing_is_written_until_the_board_proves_its_firmware_runs(board):
    board.cable.unheard.clear()              # nothing waiting in the USB FIFO: no boot Hello
    r = Rig(board)
    r.advance(900)                           # before the board's first heartbeat
    assert r.link.state is LinkState.HANDSHAKE
    assert board.host_port.write_count == 0  # not a byte: 0x03 would be Ctrl-C to a booting Pico
    took = r.until(lambda: r.link.state is LinkState.READY)
    assert took <= 200                       # the heartbeat at 1000 ms, then REQUEST HELLO
    r.close()


def test_a_silent_port_is_written_to_after_listen_first(board):
    board.hung = True
    board.cable.unheard.clear()
    r = Rig(board)
    r.advance(1400)
    assert board.host_port.write_count == 0
    r.advance(200)
    assert board.host_port.write_count > 0   # listen_first (1.5 s) over: REQUEST HELLO
    r.close()


def test_what_the_board_wrote_before_the_host_came_is_not_a_link_problem(board):
    board.cable.unplug()
    board.cable.plug("ttyFAIRY0")
    for _ in range(10000):                    # 10 s with no host: heartbeats, refreshes
        board.ticks.advance(1)
        board.fw.step()
    assert len(board.cable.unheard) == board.cable.TX_FIFO   # the newest 256 bytes, cut at the front
    r = Rig(board)
    r.until(lambda: r.link.state is LinkState.READY)
    r.advance(2000)
    h = r.link.health()
    assert h.startup_discarded >= 1          # the cut-off frame was there ...
    assert (h.crc_errors, h.framing_errors, h.message_errors) == (0, 0, 0)   # ... and is no error
    # the old OCCUPANCY frames in the FIFO are neither the state nor losses
    assert h.occupancy_stale >= 1 and h.occupancy_lost == 0
    assert r.occupancies()[0].reason is OccupancyReason.REQUESTED
    r.close()


def test_a_refused_led_frame_is_not_sent_again_and_again(rig):
    spy = FrameSpy(rig.board.cable)
    rig.link.send_leds([RED] * 97)            # one more LED than the board has
    rig.advance(3000)
    assert len(spy.of(LedFrame)) == 1
    h = rig.link.health()
    assert h.leds_refused == 1 and h.led_resends == 0 and not h.leds_acked
    rig.link.send_leds(scene((0, GREEN)))     # the next frame goes as usual
    rig.advance(10)
    assert rig.link.health().leds_acked


def test_a_lost_answer_to_the_sync_request_is_asked_for_again(rig):
    board = rig.board
    dropped = []

    def lose_first_answer(data):
        msgs = Decoder().feed(data)
        if not dropped and any(isinstance(m, Occupancy) and m.reason is OccupancyReason.REQUESTED for m in msgs):
            dropped.append(msgs)
            return b""
        return data
    board.cable.to_host = lose_first_answer
    board.set_closed({33})
    board.boot(0x2222)                        # the board resets with a piece on it
    start = len(rig.occupancies())
    took = rig.until(lambda: len(rig.occupancies()) > start, max_ms=2000)
    assert dropped and took <= 1100           # asked again at the next heartbeat
    assert rig.occupancies()[-1].closed == {33}
    assert rig.link.health().occupancy_lost == 0
