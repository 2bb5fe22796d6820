"""``fairyboard install-engine``: a native Fairy-Stockfish built from source (the default), or the
WebAssembly build with ``--wasm``; ``--status`` says which one ``fsf`` plays with (see
docs/engine.md, *The native Fairy-Stockfish*, and docs/board-driver.md, *Playing the computer*)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from board_driver.errors import BoardDriverError

ARCHES = ("x86-64", "aarch64", "armv7")     # native_build.ARCHES (not imported: start-up stays short)


def register(sub) -> None:
    p = sub.add_parser(
        "install-engine", help="build and install a native Fairy-Stockfish that fsf plays every variant with",
        description="Build Fairy-Stockfish from the source PyPI's pyffish package ships (pinned; pip download, "
                    "or --sdist FILE without a connection) with the system's C++ compiler (apt install g++), "
                    "check it (its perft of 12x8 variants and orthodox chess, loaded with the variants.ini "
                    "our rules export, must equal ours) and install it as DATA/engines/"
                    "fairy-stockfish-VERSION-ARCH, where fsf finds it. Builds are cached by their inputs "
                    "(source, flags, compiler, arch): a second run with the same inputs does nothing. "
                    "--wasm installs the WebAssembly build (npm) instead; --status shows which engine fsf uses.")
    p.add_argument("--wasm", action="store_true",
                   help="install the WebAssembly build (npm's fairy-stockfish-nnue.wasm, run under node) instead")
    p.add_argument("--dir", type=Path, help="with --wasm: install here (then set $FAIRYBOARD_FSF_WASM to it)")
    p.add_argument("--cxx", default="g++", help="the C++ compiler (default g++; aarch64-linux-gnu-g++ or "
                                                "arm-linux-gnueabihf-g++ to build for a Pi on a PC)")
    p.add_argument("--arch", choices=ARCHES, help="the target (default: what the compiler builds for, which "
                                                  "must match --cxx)")
    p.add_argument("--output", type=Path, metavar="FILE",
                   help="write the binary here (and FILE.json: its build's inputs) instead of installing it "
                        "(a cross-built one to copy to a Pi)")
    p.add_argument("--no-check", action="store_true",
                   help="do not run the built engine's perft check (needed when it is built for another arch)")
    p.add_argument("--sdist", type=Path, metavar="FILE",
                   help="the pyffish source package to build (pyffish-VERSION.tar.gz) instead of downloading it")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="compile N files at once (default: one per CPU, as many as the free memory holds)")
    p.add_argument("--status", action="store_true", help="show which Fairy-Stockfish fsf plays with; install nothing")
    p.set_defaults(handler=cmd_install_engine)


def cmd_install_engine(args) -> int:
    if args.status:
        return cmd_status()
    if args.wasm:
        return install_wasm(args.dir)
    if args.dir is not None:
        raise BoardDriverError("--dir is for --wasm (the native engine goes to the data folder, "
                               "or --output FILE)")
    return install_native(args)


# --- native -------------------------------------------------------------------------------------

def _say(text: str) -> None:
    print(f"install-engine: {text}", flush=True)


def install_native(args) -> int:
    from board_driver.journal import data_dir
    from board_driver.opponents import native_build as nb

    if args.jobs is not None and args.jobs < 1:
        raise BoardDriverError(f"--jobs {args.jobs}: must be 1 or more")
    if shutil.which(args.cxx) is None:
        raise BoardDriverError(f"no C++ compiler {args.cxx!r}: {nb.compiler_hint(args.cxx)}")
    sdist = nb.fetch_sdist(nb.cache_dir() / "sdist", sdist=args.sdist, log=_say)
    p = nb.plan(sdist, cxx=args.cxx, arch=args.arch)
    here = nb.machine_arch()
    if p.arch != here and not args.no_check:
        raise BoardDriverError(f"a binary for {p.arch} cannot run on this {here} machine to be "
                               "checked: pass --no-check (and run install-engine --status on the Pi)")
    target = args.output if args.output is not None else data_dir() / "engines" / p.name
    target = Path(target).absolute()
    stamp = target.with_name(target.name + ".json")

    if _up_to_date(p, target, stamp, checked=not args.no_check):
        _say(f"{target} is already built from the same source, flags, compiler and arch "
             f"(build {p.key}): nothing to do")
        return 0
    binary = nb.build_plan(p, jobs=args.jobs, log=_say)
    if not args.no_check:
        _say(f"checking {p.name}: perft against our rules")
        nb.check(str(binary), log=_say)
    nb.copy_executable(binary, target)
    info = dict(p.describe(), binary_sha256=nb.sha256(target), checked=not args.no_check)
    tmp = stamp.with_name(f".{stamp.name}.part")
    tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, stamp)
    if args.output is not None:
        _say(f"wrote {target} (Fairy-Stockfish of pyffish {p.version}, {p.arch}"
             f"{', not checked' if args.no_check else ', checked'})")
        return 0
    from board_driver.opponents.players import native_version
    _say(f"installed {target}: fsf plays every variant Fairy-Stockfish can express with it"
         f"{'' if native_version(str(target)) else ' (it did not greet: run install-engine --status)'}")
    return 0


def _up_to_date(p, target: Path, stamp: Path, *, checked: bool) -> bool:
    """True when ``target`` is the binary of this very build (its stamp names the build's key and
    the file's sha256), and was checked when a check is asked for."""
    from board_driver.opponents import native_build as nb
    if not target.is_file() or not stamp.is_file():
        return False
    try:
        info = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(info, dict) or info.get("key") != p.key or (checked and not info.get("checked")):
        return False
    return info.get("binary_sha256") == nb.sha256(target) and os.access(target, os.X_OK)


# --- status -------------------------------------------------------------------------------------

def cmd_status() -> int:
    """Every Fairy-Stockfish fsf can find, and which one it plays orthodox chess and a 12x8
    variant with custom pieces (tomorrow-3) with."""
    from board_driver.config import load_variant
    from board_driver.opponents.players import find_fsf_wasm, fsf_candidates, fsf_command, installed_native

    native = installed_native()
    print(f"native build (install-engine): {native if native else 'not installed (fairyboard install-engine)'}")
    for path in fsf_candidates():
        if native is None or Path(path) != native:
            print(f"also found: {path} ({_engine_name([path]) or 'does not answer uci'})")
    wasm = find_fsf_wasm()
    print(f"WebAssembly build: {' '.join(wasm) if isinstance(wasm, list) else wasm}")
    for name in ("orthodox", "tomorrow-3"):
        found = fsf_command(load_variant(name))
        if isinstance(found, str):
            print(f"fsf for {name}: none: {found}")
            continue
        command, build = found
        kind = ("the native build" if native is not None and Path(command[0]) == native else
                "the WebAssembly build" if build == "wasm" else f"{command[0]}")
        print(f"fsf for {name}: {kind} ({_engine_name(command) or 'does not answer uci'})")
    return 0


# --- WebAssembly --------------------------------------------------------------------------------

def _default_dir() -> Path:
    from board_driver.journal import data_dir
    from board_driver.opponents.players import WASM_DIR
    return WASM_DIR if os.access(WASM_DIR, os.W_OK) else data_dir() / "fsf-wasm"


def install_wasm(where: Path | None) -> int:
    from board_driver.opponents.players import WASM_DIR, find_fsf_wasm, wasm_dirs
    npm = shutil.which("npm")
    if npm is None or not (shutil.which("node") or shutil.which("nodejs")):
        raise BoardDriverError("node and npm are needed (apt install nodejs npm)")
    target = (where or _default_dir()).resolve()
    target.mkdir(parents=True, exist_ok=True)
    if target != WASM_DIR:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(WASM_DIR / name, target / name)
    _say(f"npm ci in {target}")
    r = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target)
    if r.returncode != 0:
        raise BoardDriverError(f"npm ci failed in {target} (exit {r.returncode})")
    found = find_fsf_wasm()
    if isinstance(found, str) or target not in {d.resolve() for d in wasm_dirs()}:
        _say(f"installed; set FAIRYBOARD_FSF_WASM={target} for fsf to find it")
        return 0
    _say(f"{_engine_name(found) or 'the engine'} answers; fsf plays with it the variants no native "
         "Fairy-Stockfish here loads")
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
