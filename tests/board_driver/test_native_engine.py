"""The native Fairy-Stockfish that ``fairyboard install-engine`` builds from pyffish's source: the
CLI (run as a user runs it) builds, checks and installs it, a second run with the same inputs
does nothing, bad input gets a one-line message, ``fsf`` prefers it to the distribution's and the
WebAssembly build, and it counts the same perft as our rules (and python-chess) from many
positions and plays a game of Tomorrow's Chess through ``fairyboard match``.

scripts/engine-deps builds it once into install-engine's cache (~/.cache/fairyboard, keyed by
the inputs), so these runs take it from there; where the cache is cold the first one compiles
(about a minute on two cores). Where g++ or the source package cannot be had, they skip and say
why."""

from __future__ import annotations

import os
import random
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import chess
import pytest
from chess_reference import chess_perft

from board_driver.config import load_variant
from board_driver.opponents import native_build, players
from board_driver.opponents.native_build import NativeBuildError, check, engine_perft, our_perft
from board_driver.opponents.players import fsf_command
from engine.fsf import expressible
from engine.position import Position

ARCH = native_build.machine_arch()
NAME = f"fairy-stockfish-{native_build.PYFFISH_VERSION}-{ARCH}"


def fb(*args: str, data: Path, env: dict | None = None, timeout: float = 1800) -> subprocess.CompletedProcess:
    """``fairyboard ARGS`` as a child process with its own data folder."""
    e = dict(os.environ, FAIRYBOARD_DATA=str(data), **(env or {}))
    return subprocess.run([sys.executable, "-m", "board_driver.cli", *args], capture_output=True, text=True,
                          env=e, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(data folder, the installed binary, install-engine's output): install-engine run once."""
    data = tmp_path_factory.mktemp("native") / "data"
    r = fb("install-engine", data=data)
    if r.returncode != 0 and re.search(r"no C\+\+ compiler|pip cannot download", r.stderr):
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    return data, data / "engines" / NAME, r.stdout


@pytest.mark.slow   # builds (from the cache), checks and installs through the CLI
def test_install_engine_builds_checks_and_installs_it_where_fsf_finds_it(installed):
    data, binary, out = installed
    assert f"installed {binary}" in out
    assert "perft 3 tomorrow-3: 27266 (ours: 27266)" in out
    assert "perft 4 orthodox: 197281 (ours: 197281)" in out
    assert binary.stat().st_mode & stat.S_IXUSR
    r = subprocess.run([str(binary)], input="uci\nquit\n", capture_output=True, text=True, timeout=60)
    assert re.search(r"^id name Fairy-Stockfish", r.stdout, re.M) and "option name VariantPath" in r.stdout
    s = fb("install-engine", "--status", data=data)
    assert s.returncode == 0, s.stderr
    assert f"native build (install-engine): {binary}" in s.stdout
    assert "fsf for tomorrow-3: the native build (Fairy-Stockfish" in s.stdout
    assert "fsf for orthodox: the native build" in s.stdout


@pytest.mark.slow   # builds (from the cache), checks and installs through the CLI
def test_a_second_install_with_the_same_inputs_does_nothing_and_says_so(installed):
    data, binary, _ = installed
    before = binary.stat().st_mtime_ns
    r = fb("install-engine", data=data)
    assert r.returncode == 0, r.stderr
    assert "nothing to do" in r.stdout and "compiling" not in r.stdout and "perft" not in r.stdout
    assert binary.stat().st_mtime_ns == before
    # --output writes the same binary elsewhere without compiling; then it too is up to date
    out = data.parent / "out" / "fsf"
    r = fb("install-engine", "--output", str(out), data=data)
    assert r.returncode == 0, r.stderr
    assert "nothing compiled" in r.stdout and "compiling" not in r.stdout and f"wrote {out}" in r.stdout
    assert out.read_bytes() == binary.read_bytes()
    r = fb("install-engine", "--output", str(out), data=data)
    assert "nothing to do" in r.stdout, r.stdout


@pytest.mark.slow   # builds (from the cache), checks and installs through the CLI
def test_a_binary_built_elsewhere_is_checked_and_installed_with_install(installed, tmp_path):
    _, binary, _ = installed
    # as copied from a PC: the binary and the FILE.json that --output wrote beside it
    copy = tmp_path / "copied" / "fsf"
    copy.parent.mkdir()
    copy.write_bytes(binary.read_bytes())
    (tmp_path / "copied" / "fsf.json").write_text(binary.with_name(binary.name + ".json").read_text())
    data = tmp_path / "data"
    r = fb("install-engine", "--install", str(copy), data=data)
    assert r.returncode == 0, r.stderr
    assert "perft 3 tomorrow-3: 27266 (ours: 27266)" in r.stdout and "compiling" not in r.stdout
    assert f"installed {data / 'engines' / NAME}" in r.stdout
    assert (data / "engines" / NAME).read_bytes() == binary.read_bytes()
    s = fb("install-engine", "--status", data=data)
    assert "fsf for tomorrow-3: the native build" in s.stdout, s.stdout
    # one built for another arch is refused before anything is installed
    other = next(a for a in native_build.ARCHES if a != ARCH)
    (tmp_path / "copied" / "fsf.json").write_text(f'{{"arch": "{other}", "pyffish": "0.0.90"}}')
    err = _one_line_error(fb("install-engine", "--install", str(copy), data=tmp_path / "data2"))
    assert f"it was built for {other}" in err
    assert not (tmp_path / "data2" / "engines").exists()


def _one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fairyboard install-engine: error: "), r.stderr
    return lines[0]


def test_bad_input_gets_a_one_line_message(tmp_path):
    data = tmp_path / "data"
    junk = tmp_path / "pyffish-0.0.90.tar.gz"
    junk.write_bytes(b"not a tar file\n" * 10)
    assert "is not a pyffish source package (not a tar file" in _one_line_error(fb("install-engine", "--sdist", str(junk), data=data))
    import tarfile
    other = tmp_path / "other.tar.gz"
    with tarfile.open(other, "w:gz") as tar:
        tar.add(junk, arcname="pyffish-0.0.90/README.md")
    assert "no src/main.cpp" in _one_line_error(fb("install-engine", "--sdist", str(other), data=data))
    assert "no such file" in _one_line_error(fb("install-engine", "--sdist", str(tmp_path / "none.tar.gz"), data=data))
    err = _one_line_error(fb("install-engine", "--cxx", "no-such-g++", data=data))
    assert "no C++ compiler 'no-such-g++'" in err and "apt install" in err
    other_arch = next(a for a in native_build.ARCHES if a != ARCH)
    assert f"not {other_arch}: pass --cxx" in _one_line_error(fb("install-engine", "--arch", other_arch, "--no-check",
                                                                 "--output", str(tmp_path / "x"), data=data))
    cross = {"x86-64": "x86_64-linux-gnu-g++", "aarch64": "aarch64-linux-gnu-g++", "armv7": "arm-linux-gnueabihf-g++"}
    if shutil.which(cross[other_arch]):         # a cross compiler: its binary cannot be checked here
        err = _one_line_error(fb("install-engine", "--cxx", cross[other_arch], data=data))
        assert f"a binary for {other_arch} cannot run on this {ARCH} machine" in err and "--no-check" in err
    assert not (data / "engines").exists()
    from board_driver.cli import engines_cmds
    assert engines_cmds.ARCHES == native_build.ARCHES       # --arch's choices, kept apart for a short start-up


def test_without_a_connection_it_says_to_pass_sdist(tmp_path):
    # an empty cache (no source kept) and pip with no index and nothing to find: as offline
    env = {"FAIRYBOARD_CACHE": str(tmp_path / "cache"), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path),
           "PIP_CONFIG_FILE": os.devnull}
    err = _one_line_error(fb("install-engine", data=tmp_path / "data", env=env, timeout=300))
    assert "pip cannot download pyffish" in err and "pass --sdist" in err


def test_a_perft_that_differs_from_ours_is_a_check_mismatch(tmp_path):
    fake = tmp_path / "fake-engine"
    script = ("#!/bin/sh\nwhile read line; do case $line in\n"
              "  'setoption name UCI_Variant value '*) [ -n \"$LOADS\" ] && echo \"info string variant ${line##* } files 12 ranks 8\";;\n"
              "  'go perft'*) echo 'Nodes searched: 27265';;\n  quit) exit 0;;\nesac; done\n")
    fake.write_text(script)
    fake.chmod(0o755)
    # an engine that does not load the section would count the rules it had before
    with pytest.raises(NativeBuildError, match=r"did not load tomorrow-3's variants.ini section"):
        check(str(fake), log=None)
    fake.write_text(script.replace("$LOADS", "yes"))
    with pytest.raises(NativeBuildError, match=r"check mismatch: tomorrow-3 perft 3: the engine counts 27265, "
                                               r"our rules 27266 \(known: 27266\)"):
        check(str(fake), log=None)


# --- which engine fsf plays with ----------------------------------------------------------------

def _fake_engine(path: Path, greeting: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{greeting} by F. F.'\nwhile read -r line; do :; done\n")
    path.chmod(0o755)
    return str(path)


def test_fsf_prefers_the_native_build_then_the_distributions_then_webassembly(tmp_path, monkeypatch):
    data = tmp_path / "data"
    native = _fake_engine(data / "engines" / NAME, "Fairy-Stockfish 281126 LB 64")
    _fake_engine(data / "engines" / f"fairy-stockfish-{native_build.PYFFISH_VERSION}-"
                                    f"{next(a for a in native_build.ARCHES if a != ARCH)}", "Fairy-Stockfish 281126")
    distribution = _fake_engine(tmp_path / "bin" / "fairy-stockfish", "Fairy-Stockfish 11.1 LB 64")
    node = _fake_engine(tmp_path / "bin" / "node", "v18")
    module = tmp_path / "wasm" / "node_modules" / players.WASM_PACKAGE
    module.mkdir(parents=True)
    for f in ("stockfish.js", "stockfish.wasm"):
        (module / f).write_text("")
    monkeypatch.setenv("FAIRYBOARD_DATA", str(data))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("FAIRYBOARD_FSF", raising=False)
    monkeypatch.delenv("FAIRYBOARD_NODE", raising=False)
    monkeypatch.setattr(players, "FSF_DEFAULT", str(tmp_path / "none"))
    monkeypatch.setattr(players, "wasm_dirs", lambda: [tmp_path / "wasm"])
    tomorrow, courier, orthodox = (load_variant(n) for n in ("tomorrow-3", "courier", "orthodox"))

    assert players.fsf_candidates() == [native, distribution]
    assert fsf_command(tomorrow) == ([native], "native")
    assert fsf_command(courier) == ([native], "native")
    assert fsf_command(orthodox) == ([native], "native")
    # a configured binary comes first; one that cannot load the variant lets the next one try
    newer = _fake_engine(tmp_path / "mine" / "fsf", "Fairy-Stockfish 14.0.1 LB 64")
    assert fsf_command(tomorrow, newer) == ([newer], "native")
    monkeypatch.setenv("FAIRYBOARD_FSF", distribution)
    assert fsf_command(courier) == ([distribution], "native")         # its built-in pieces stand in
    assert fsf_command(tomorrow) == ([native], "native")              # a custom piece it has no twin for
    monkeypatch.delenv("FAIRYBOARD_FSF")
    # without the native build: the distribution's where it loads the variant, else WebAssembly
    os.remove(native)
    assert fsf_command(courier) == ([distribution], "native")
    assert fsf_command(orthodox) == ([distribution], "native")
    assert fsf_command(tomorrow) == ([node, str(players.WASM_DIR / "uci.mjs"), "--module", str(module)], "wasm")
    # without WebAssembly either: why, and what to run
    monkeypatch.setattr(players, "wasm_dirs", lambda: [tmp_path / "none"])
    why = fsf_command(tomorrow)
    assert isinstance(why, str) and "custom pieces" in why and "install-engine" in why


# --- the built engine against our rules -----------------------------------------------------------

def _positions(name: str, count: int, seed: int) -> list[str]:
    """FENs reached by random legal moves from ``name``'s start (4 to 30 plies)."""
    rng = random.Random(seed)
    v = load_variant(name)
    out = []
    for _ in range(count):
        pos = Position.from_fen(v)
        for _ in range(rng.randint(4, 30)):
            moves = pos.legal_moves()
            if not moves:
                break
            pos.push(rng.choice(moves))
        out.append(pos.fen())
    return out


@pytest.mark.slow   # builds (from the cache), checks and installs through the CLI
def test_its_perft_equals_ours_for_12x8_variants_from_many_positions(installed):
    _, binary, _ = installed
    names = [n for n in ("tomorrow-3", "tomorrow-2", "courier", "random-1-2-3", "random-3-5-1")
             if expressible(load_variant(n))]
    assert len(names) >= 4
    cases = [(n, 2, fen) for i, n in enumerate(names) for fen in _positions(n, 6, seed=i)]
    cases += [(n, 3) for n in names]
    counts, out = engine_perft(str(binary), cases)
    assert len(counts) == len(cases), out[-2000:]
    for case, got in zip(cases, counts):
        assert got == our_perft(*case), case


@pytest.mark.slow   # builds (from the cache), checks and installs through the CLI
def test_its_orthodox_perft_equals_python_chess(installed):
    _, binary, _ = installed
    fens = _positions("orthodox", 8, seed=7)
    counts, out = engine_perft(str(binary), [("orthodox", 3, fen) for fen in fens] + [("orthodox", 4)])
    assert len(counts) == len(fens) + 1, out[-2000:]
    for fen, got in zip(fens, counts):
        assert got == chess_perft(chess.Board(fen), 3), fen
    assert counts[-1] == 197281


@pytest.mark.slow   # builds (from the cache), checks and installs through the CLI
def test_it_plays_tomorrow_3_through_fairyboard_match(installed):
    data, _, _ = installed
    # no node: the WebAssembly build cannot run, and the distribution's loads no custom pieces,
    # so every fsf move of this game is the native build's
    env = {"FAIRYBOARD_NODE": "no-such-node"}
    r = fb("match", "--variant", "tomorrow-3", "--white", "fsf", "--black", "random", "--games", "1", "--time", "0.05",
           "--seed", "3", "--no-progress", data=data, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    m = re.search(r"game 1: fsf - random: (\S+) \((.*)\), (\d+) actions, saved as (\S+)", r.stdout)
    assert m, r.stdout
    assert "illegal" not in m[2] and "unfinished" not in m[2], m[2]
    assert m[1] == "1-0", m[0]          # Fairy-Stockfish beats a random mover
    e = fb("games", "export", m[4], data=data, timeout=120)
    assert e.returncode == 0 and '[White "Fairy-Stockfish' in e.stdout
