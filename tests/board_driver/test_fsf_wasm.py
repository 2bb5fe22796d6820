"""The WebAssembly Fairy-Stockfish (npm's fairy-stockfish-nnue.wasm, run under node by
board_driver/opponents/fsf_wasm/uci.mjs): it counts the same perft as our rules for the 12x8
variants the distribution's Fairy-Stockfish 11 cannot load, ``fsf`` picks it for them (and the
native binary for what that loads), and ``fairyboard match`` plays a game of Tomorrow's Chess
with it. scripts/engine-deps installs it (scripts/test runs that); the tests that need it skip
where node or the package is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from board_driver.config import load_variant
from board_driver.opponents import players
from board_driver.opponents.players import PlayerError, can_play, find_fsf_wasm, fsf_command, make_player
from engine.fsf import fsf_name, variants_ini
from engine.perft import perft
from engine.position import Position


def _wasm() -> list[str]:
    found = find_fsf_wasm()
    if isinstance(found, str):
        pytest.skip(found)
    return found


def _uci(command: list[str], lines: list[str], timeout: float = 60) -> str:
    """The engine's output for ``lines``: each ``go`` waits for the search's last line (a
    perft's count, a search's bestmove) before the next line is sent (``quit`` would end it)."""
    import queue
    import threading
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    got: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [got.put(ln) for ln in proc.stdout] + [got.put("")], daemon=True).start()
    out: list[str] = []
    try:
        for line in lines:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            if line.startswith("go"):
                while True:
                    ln = got.get(timeout=timeout)
                    assert ln, "the engine stopped: " + "".join(out[-5:])
                    out.append(ln)
                    if ln.startswith(("Nodes searched", "bestmove")):
                        break
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        while (ln := got.get(timeout=5)):
            out.append(ln)
    finally:
        if proc.poll() is None:
            proc.kill()
    return "".join(out)


@pytest.mark.slow
def test_wasm_engine_counts_our_perft_for_the_variants_fsf_11_cannot_load(tmp_path):
    command = _wasm()
    cases = {"tomorrow-3": 27266, "courier": 33606, "tomorrow-2": None, "random-1-2-3": None}
    lines = ["uci"]
    for name in cases:
        v = load_variant(name)
        ini = tmp_path / f"{name}.ini"
        ini.write_text(variants_ini(v))
        lines += [f"setoption name VariantPath value {ini}", f"setoption name UCI_Variant value {fsf_name(name)}",
                  f"position fen {v.start_fen}", f"go perft {3 if cases[name] else 2}"]
    out = _uci(command, lines)
    counts = [int(n) for n in re.findall(r"^Nodes searched: (\d+)$", out, re.M)]
    assert len(counts) == len(cases), out[-2000:]
    for (name, expected), got in zip(cases.items(), counts):
        ours = perft(Position.from_fen(load_variant(name)), 3 if expected else 2)
        assert got == ours, name
        if expected is not None:
            assert got == expected, name
    # each section loaded under its own name (a section that fails to load leaves the old rules)
    for name in cases:
        assert f"info string variant {fsf_name(name)} files 12 ranks 8" in out


def test_the_launcher_says_where_the_package_is_missing(tmp_path):
    command = _wasm()
    r = subprocess.run([command[0], command[1], "--module", str(tmp_path)], input="", capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "install-engine" in r.stderr


def test_fsf_is_the_native_binary_where_it_loads_the_variant_else_the_wasm_build(monkeypatch, tmp_path):
    native = players.find_fairy_stockfish()
    if native is None or players.native_version(native) not in range(1, 12):
        pytest.skip("needs the distribution's Fairy-Stockfish 11 (apt install fairy-stockfish)")
    command = _wasm()
    assert fsf_command(load_variant("courier")) == ([native], "native")      # built-in pieces stand in
    assert fsf_command(load_variant("orthodox")) == ([native], "native")
    assert fsf_command(load_variant("tomorrow-3")) == (command, "wasm")      # a custom piece (t: mBcN) it has no twin for
    assert can_play("fsf", load_variant("tomorrow-3")) is None
    assert "giraffe" in str(fsf_command(load_variant("tomorrow-1")))
    # without the wasm build, the reason names both and the command that installs it
    monkeypatch.setattr(players, "wasm_dirs", lambda: [tmp_path])
    why = can_play("fsf", load_variant("tomorrow-3"))
    assert why is not None and "custom pieces" in why and "install-engine" in why
    with pytest.raises(PlayerError, match="install-engine"):
        make_player("fsf", load_variant("tomorrow-3"))
    assert can_play("fsf", load_variant("courier")) is None


@pytest.mark.slow
def test_match_fsf_against_builtin_on_tomorrow_3(tmp_path):
    _wasm()
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "board_driver.cli", "match", "--variant", "tomorrow-3", "--white", "fsf",
                        "--black", "builtin", "--games", "1", "--time", "0.05", "--no-progress"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    m = re.search(r"game 1: fsf - builtin: (\S+) \((.*)\), (\d+) actions, saved as (\S+)", r.stdout)
    assert m, r.stdout
    assert "illegal" not in m[2] and "unfinished" not in m[2], m[2]     # every engine move was legal here
    assert int(m[3]) >= 10
    e = subprocess.run([sys.executable, "-m", "board_driver.cli", "games", "export", m[4]], capture_output=True,
                       text=True, env=env, timeout=60)
    assert e.returncode == 0 and '[White "Fairy-Stockfish' in e.stdout


@pytest.mark.slow
def test_wasm_player_answers_with_legal_moves_and_a_skill_level():
    _wasm()
    from board_driver.opponents.match import play_game
    v = load_variant("tomorrow-2")
    with make_player("fsf:3", v) as fsf, make_player("random", v, seed=1) as rnd:
        assert fsf.build == "wasm"
        out, n = play_game(v, rnd, fsf, seconds=0.05, max_plies=12)
    assert "illegal" not in out.reason and "unfinished" not in out.reason, out.reason
    assert n == 12 or out.result == "0-1"
