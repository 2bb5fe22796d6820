"""Fixtures for the firmware on real MicroPython: the emulated Pico (pico_emu) and the unix port
(unix_board). Both need what scripts/test installs (scripts/pico-deps, the test extras)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0] / "firmware_bridge"))

import pico_emu  # noqa: E402


@pytest.fixture(scope="session")
def pico_fs(tmp_path_factory) -> Path:
    """The firmware's littlefs image, built once per session as the README installs it."""
    reason = pico_emu.why_not()
    if reason:
        pytest.skip(reason)
    return pico_emu.build_filesystem(tmp_path_factory.mktemp("pico-fs"))


@pytest.fixture
def new_pico(pico_fs):
    """A factory of freshly powered-up emulated Picos (closed at the end of the test)."""
    made = []

    def make(pty: bool = False) -> pico_emu.Pico:
        p = pico_emu.Pico(pico_fs, pty=pty)
        made.append(p)
        return p
    yield make
    for p in made:
        p.close()


@pytest.fixture
def unix_board(tmp_path):
    """main.py on MicroPython's unix port behind a pty (unix_board.UnixBoard)."""
    from unix_board import UnixBoard
    board = UnixBoard(tmp_path)         # no skip: the test extras install the unix port
    yield board
    board.close()
