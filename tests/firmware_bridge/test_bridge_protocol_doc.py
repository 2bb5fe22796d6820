"""hardware/PROTOCOL.md's worked examples, checked against both implementations, so the
document cannot drift from the code (nor the code from the document)."""

from __future__ import annotations

import re
from pathlib import Path

import bridge_fakes  # noqa: F401  (puts the firmware's modules on sys.path)
import fb_proto
import pytest

import firmware_bridge
from firmware_bridge import (
    BOARD_MESSAGES,
    HOST_MESSAGES,
    Decoder,
    body_of,
    decode,
    encode,
)
from firmware_bridge.codec import payload_of
from firmware_bridge.framing import cobs_decode, cobs_encode, crc16

DOC = Path(__file__).resolve().parents[2] / "hardware" / "PROTOCOL.md"
BLOCK = re.compile(r"^```(frame|crc|cobs|stream)\n(.*?)^```", re.M | re.S)


def blocks(kind: str) -> list[dict[str, str]]:
    """The doc's ```kind blocks, each as {key: value}; indented lines continue the last key."""
    out = []
    for found, text in BLOCK.findall(DOC.read_text()):
        if found != kind:
            continue
        fields: dict[str, str] = {}
        key = None
        for line in text.splitlines():
            if line[:1].isspace() and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key.strip()] = value.strip()
        out.append(fields)
    return out


def hexbytes(text: str) -> bytes:
    """Hex byte pairs; ``|`` separators and ``#`` comments (to the end of the line) ignored."""
    text = re.sub(r"#.*", "", text).replace("|", " ")
    return bytes.fromhex(" ".join(text.split()))


def message(text: str):
    return eval(text, vars(firmware_bridge))  # the doc writes messages as their repr


FRAMES = blocks("frame")


def test_the_doc_has_examples_of_every_kind():
    assert len(FRAMES) >= 13 and blocks("crc") and blocks("cobs") and blocks("stream")
    shown = {type(message(f["message"])) for f in FRAMES}
    assert shown == set(BOARD_MESSAGES) | set(HOST_MESSAGES)


def test_the_doc_names_every_type_code():
    text = DOC.read_text()
    for cls in BOARD_MESSAGES + HOST_MESSAGES:
        assert f"| 0x{cls.TYPE:02X} |" in text, cls.__name__


@pytest.mark.parametrize("example", FRAMES, ids=lambda f: f["message"].split("(")[0])
def test_frame_example(example):
    msg = message(example["message"])
    body, wire = hexbytes(example["body"]), hexbytes(example["wire"])
    # the host
    assert body_of(msg) == body
    assert encode(msg) == wire
    assert decode(wire) == msg
    assert Decoder().feed(wire) == [msg]
    assert repr(msg) == example["message"] or message(repr(msg)) == msg
    # the board
    assert bytes(fb_proto.cobs_encode(body)) + b"\x00" == wire
    ((msg_type, payload),) = fb_proto.FrameReader().feed(wire)
    assert (msg_type, payload) == (type(msg).TYPE, payload_of(msg))


@pytest.mark.parametrize("example", blocks("crc"), ids=lambda f: f["data"][:8])
def test_crc_example(example):
    data, crc = hexbytes(example["data"]), int.from_bytes(hexbytes(example["crc"]), "big")
    assert crc16(data) == crc
    assert fb_proto.crc16(data) == crc


@pytest.mark.parametrize("example", blocks("cobs"), ids=lambda f: f["data"][:8])
def test_cobs_example(example):
    data, encoded = hexbytes(example["data"]), hexbytes(example["encoded"])
    assert cobs_encode(data) == encoded and cobs_decode(encoded) == data
    assert bytes(fb_proto.cobs_encode(data)) == encoded and bytes(fb_proto.cobs_decode(encoded)) == data


@pytest.mark.parametrize("example", blocks("stream"))
def test_stream_example(example):
    wire = hexbytes(example["wire"])
    d = Decoder()
    assert d.feed(wire) == message(example["messages"])
    assert d.stats.rejected == int(example["rejected"])
    good = [item for item in fb_proto.FrameReader().feed(wire) if item[0] is not None]
    assert good == [(type(m).TYPE, payload_of(m)) for m in message(example["messages"])]


def test_hex_parser_ignores_comments():
    assert hexbytes("01 02 # the 03 04 bytes\n05") == b"\x01\x02\x05"
