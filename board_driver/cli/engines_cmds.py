"""``fairyboard install-engine``: the WebAssembly Fairy-Stockfish for the variants the
distribution's ``fairy-stockfish`` cannot load (see docs/board-driver.md, *Playing the computer*)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from board_driver.errors import BoardDriverError


def register(sub) -> None:
    p = sub.add_parser(
        "install-engine", help="install the WebAssembly Fairy-Stockfish (npm) that fsf plays fairy pieces with",
        description="Install npm's fairy-stockfish-nnue.wasm, at the version the package pins "
                    "(fsf_wasm/package-lock.json), with `npm ci`: into the package's own fsf_wasm "
                    "folder where it is writable, else DATA/fsf-wasm. Needs node and npm (apt install "
                    "nodejs npm). fsf then plays every variant Fairy-Stockfish can express; the "
                    "distribution's fairy-stockfish still plays those it can load.")
    p.add_argument("--dir", type=Path, help="install here instead (then set $FAIRYBOARD_FSF_WASM to it)")
    p.set_defaults(handler=cmd_install_engine)


def _default_dir() -> Path:
    from board_driver.journal import data_dir
    from board_driver.opponents.players import WASM_DIR
    return WASM_DIR if os.access(WASM_DIR, os.W_OK) else data_dir() / "fsf-wasm"


def cmd_install_engine(args) -> int:
    from board_driver.opponents.players import WASM_DIR, find_fsf_wasm, wasm_dirs
    npm = shutil.which("npm")
    if npm is None or not (shutil.which("node") or shutil.which("nodejs")):
        raise BoardDriverError("install-engine: node and npm are needed (apt install nodejs npm)")
    target = (args.dir or _default_dir()).resolve()
    target.mkdir(parents=True, exist_ok=True)
    if target != WASM_DIR:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(WASM_DIR / name, target / name)
    print(f"install-engine: npm ci in {target}", flush=True)
    r = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target)
    if r.returncode != 0:
        raise BoardDriverError(f"install-engine: npm ci failed in {target} (exit {r.returncode})")
    found = find_fsf_wasm()
    if isinstance(found, str) or target not in {d.resolve() for d in wasm_dirs()}:
        print(f"install-engine: installed; set FAIRYBOARD_FSF_WASM={target} for fsf to find it")
        return 0
    print(f"install-engine: {_engine_name(found) or 'the engine'} answers; fsf plays every variant Fairy-Stockfish can express")
    return 0


def _engine_name(command: list[str]) -> str | None:
    """The engine's ``id name`` (None when it does not answer ``uci`` within 30 s)."""
    try:
        r = subprocess.run(command, input="uci\nquit\n", capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in r.stdout.splitlines():
        if line.startswith("id name "):
            return line[len("id name "):]
    return None
