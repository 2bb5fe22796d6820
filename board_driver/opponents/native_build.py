"""Build a native Fairy-Stockfish from source, cached by its inputs (``fairyboard install-engine``).

The source is PyPI's pyffish source package (:data:`PYFFISH_VERSION`, pinned): it ships
Fairy-Stockfish's whole ``src/``, the UCI program included, at the version pyffish wraps. Every
``.cpp`` of ``src/``, ``src/syzygy/``, ``src/nnue/`` and ``src/nnue/features/`` but the two
bindings (``pyffish.cpp``, ``ffishjs.cpp``) is compiled with the system's C++ compiler, in
parallel, with the flags pyffish itself builds with (:data:`FLAGS`: 12x8 boards, every variant,
no embedded network) plus ``-DNDEBUG``; a 64-bit target adds ``-DIS_64BIT`` (the 32-bit armv7
build uses Fairy-Stockfish's 32-bit large-board bitboards and links libatomic).

A build is known by a key made of its inputs: the source package's sha256, the flags, the
compiler's version and the target architecture. The linked binary is kept in the cache
(:func:`cache_dir`, ``builds/KEY/fairy-stockfish``); a build with the same inputs compiles
nothing. Object files are kept beside it while a build runs (an interrupted build resumes
where it stopped) and removed once the binary is linked.

:func:`check` runs a binary's ``go perft`` on 12x8 variants and orthodox chess, loaded with the
variants.ini sections our rules export, against our own perft.

Usable without the CLI::

    sdist = fetch_sdist(cache_dir() / "sdist")          # or a local pyffish-0.0.90.tar.gz
    binary = build(sdist, Path("fairy-stockfish"), cxx="aarch64-linux-gnu-g++", arch="aarch64")
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from board_driver.errors import BoardDriverError

PYFFISH_VERSION = "0.0.90"
SDIST_NAME = f"pyffish-{PYFFISH_VERSION}.tar.gz"
ARCHES = ("x86-64", "aarch64", "armv7")
FLAGS = ("-O2", "-std=c++17", "-DNDEBUG", "-DLARGEBOARDS", "-DALLVARS", "-DPRECOMPUTED_MAGICS",
         "-DNNUE_EMBEDDING_OFF")
ARCH_FLAGS = {"x86-64": ("-DIS_64BIT",), "aarch64": ("-DIS_64BIT",), "armv7": ()}
LIBS = {"x86-64": ("-lpthread",), "aarch64": ("-lpthread",), "armv7": ("-lpthread", "-latomic")}
SOURCE_DIRS = ("", "syzygy", "nnue", "nnue/features")
SKIPPED = ("pyffish.cpp", "ffishjs.cpp")
RECIPE = 1                  # raised when the way of building changes (it is part of the key)
BINARY = "fairy-stockfish"
# the most one g++ process of this build was measured to hold (docs/engine.md): the default
# number of jobs is also bounded by the memory available for that many
COMPILE_PEAK_MB = 300

# machine names (platform.machine(), the first part of `cxx -dumpmachine`) -> our arch names
_MACHINES = {"x86_64": "x86-64", "amd64": "x86-64", "x86-64": "x86-64",
             "aarch64": "aarch64", "arm64": "aarch64",
             "armv7l": "armv7", "armv7": "armv7", "armv8l": "armv7", "armhf": "armv7", "arm": "armv7",
             "armv7a": "armv7"}


class NativeBuildError(BoardDriverError):
    """The native engine cannot be fetched, built or checked; the message says what to do."""


Log = Callable[[str], None]


def _say(log: Log | None, text: str) -> None:
    if log is not None:
        log(text)


def arch_of(machine: str) -> str | None:
    """Our arch name for a machine name (``x86_64``, ``aarch64``, ``armv7l``, a compiler target's
    first part such as ``arm`` of ``arm-linux-gnueabihf``), None for one we do not build for."""
    return _MACHINES.get(machine.lower())


def machine_arch() -> str:
    """The arch of this machine (what an installed engine must be built for to run here)."""
    arch = arch_of(platform.machine())
    if arch is None:
        raise NativeBuildError(f"this machine is a {platform.machine()!r}: the native engine builds for "
                               f"{', '.join(ARCHES)} only (fairyboard install-engine --wasm installs the "
                               "WebAssembly build)")
    if arch == "aarch64" and sys.maxsize < 2**32:
        return "armv7"          # a 32-bit system on a 64-bit CPU (Raspberry Pi OS armhf)
    return arch


def _run_compiler(cxx: str, *args: str) -> str:
    try:
        r = subprocess.run([cxx, *args], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise NativeBuildError(f"no C++ compiler {cxx!r}: {compiler_hint(cxx)}") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise NativeBuildError(f"the C++ compiler {cxx!r} does not run: {exc}") from None
    if r.returncode != 0:
        raise NativeBuildError(f"the C++ compiler {cxx!r} does not run: {r.stderr.strip()[:200]}")
    return r.stdout.strip()


def compiler_hint(cxx: str) -> str:
    """How to install the compiler ``cxx`` on Debian."""
    if cxx in ("g++", "c++"):
        return "install g++: apt install g++"
    if cxx.endswith("-g++"):
        return f"install {cxx}: apt install g++-{cxx[:-4]}"
    return f"install {cxx} or name another with --cxx"


def compiler_target(cxx: str) -> tuple[str, str]:
    """(the compiler's target triple, our arch name for it), from ``cxx -dumpmachine``."""
    triple = _run_compiler(cxx, "-dumpmachine")
    arch = arch_of(triple.split("-")[0])
    if arch is None:
        raise NativeBuildError(f"{cxx} builds for {triple}: the native engine builds for {', '.join(ARCHES)} only")
    return triple, arch


def compiler_version(cxx: str) -> str:
    """The first line of ``cxx --version`` (``g++ (Debian 12.2.0-14) 12.2.0``)."""
    return _run_compiler(cxx, "--version").splitlines()[0]


def cache_dir() -> Path:
    """Where sources and builds are kept: ``$FAIRYBOARD_CACHE``, else ``$XDG_CACHE_HOME/fairyboard``,
    else ``~/.cache/fairyboard``."""
    env = os.environ.get("FAIRYBOARD_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "fairyboard"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_sdist(dest: Path, *, sdist: Path | None = None, log: Log | None = print) -> Path:
    """The pinned pyffish source package in ``dest``: ``sdist`` when given (a local file, for a Pi
    without a connection; checked and used where it is), the one already in ``dest``, else
    ``pip download``-ed from PyPI."""
    if sdist is not None:
        sdist = Path(sdist)
        if not sdist.is_file():
            raise NativeBuildError(f"--sdist {sdist}: no such file (pip download --no-deps --no-binary :all: "
                                   f"pyffish=={PYFFISH_VERSION} fetches it)")
        source_root(sdist)
        return sdist
    dest = Path(dest)
    have = dest / SDIST_NAME
    if have.is_file():
        return have
    dest.mkdir(parents=True, exist_ok=True)
    _say(log, f"downloading pyffish {PYFFISH_VERSION}'s source (pip download)")
    with tempfile.TemporaryDirectory(dir=dest, prefix=".download-") as tmp:
        try:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                                "--disable-pip-version-check", "-q", "-d", tmp, f"pyffish=={PYFFISH_VERSION}"],
                               capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            raise NativeBuildError(f"pip cannot download pyffish {PYFFISH_VERSION} ({exc}): pass --sdist "
                                   f"{SDIST_NAME} (a copy from a machine with a connection)") from None
        got = Path(tmp) / SDIST_NAME
        if r.returncode != 0 or not got.is_file():
            why = (r.stderr.strip().splitlines() or ["no file"])[-1]
            if "No module named pip" in r.stderr:
                why = "pip is not installed (apt install python3-pip)"
            raise NativeBuildError(f"pip cannot download pyffish {PYFFISH_VERSION} ({why}): pass --sdist "
                                   f"{SDIST_NAME} (a copy from a machine with a connection)")
        source_root(got)
        os.replace(got, have)
    return have


def source_root(sdist: Path) -> str:
    """The folder inside ``sdist`` that holds ``src/`` (``pyffish-0.0.90``); a NativeBuildError
    when the file is not a pyffish source package."""
    try:
        with tarfile.open(sdist, "r:*") as tar:
            names = tar.getnames()
    except (OSError, tarfile.TarError, EOFError) as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NativeBuildError(f"{sdist} is not a pyffish source package (not a tar file: {why.rstrip(':')})") from None
    for name in names:
        parts = name.split("/")
        if len(parts) == 3 and parts[1:] == ["src", "main.cpp"] and f"{parts[0]}/src/uci.cpp" in names:
            return parts[0]
    raise NativeBuildError(f"{sdist} is not a pyffish source package (no src/main.cpp and src/uci.cpp in it)")


def sdist_version(sdist: Path) -> str:
    """The version a pyffish source package says it is (its folder's name: ``pyffish-0.0.90``)."""
    root = source_root(sdist)
    return root.split("-", 1)[1] if "-" in root else "unknown"


def flags_for(arch: str) -> tuple[list[str], list[str]]:
    """(compile flags, link libraries) for ``arch``."""
    if arch not in ARCHES:
        raise NativeBuildError(f"--arch {arch}: use one of {', '.join(ARCHES)}")
    return [*FLAGS, *ARCH_FLAGS[arch]], list(LIBS[arch])


@dataclass(frozen=True)
class Plan:
    """What a build is made of, and the key that names it in the cache."""

    sdist: Path
    sdist_sha256: str
    version: str
    cxx: str
    compiler: str
    target: str
    arch: str
    flags: tuple[str, ...]
    libs: tuple[str, ...]

    @property
    def key(self) -> str:
        text = json.dumps([RECIPE, self.sdist_sha256, self.flags, self.libs, self.compiler, self.target, self.arch])
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    @property
    def name(self) -> str:
        """The installed binary's name: ``fairy-stockfish-0.0.90-x86-64``."""
        return f"{BINARY}-{self.version}-{self.arch}"

    def describe(self) -> dict:
        return {"key": self.key, "pyffish": self.version, "sdist_sha256": self.sdist_sha256, "arch": self.arch,
                "target": self.target, "compiler": self.compiler, "flags": list(self.flags), "libs": list(self.libs)}


def plan(sdist: Path, *, cxx: str = "g++", arch: str | None = None) -> Plan:
    """The build of ``sdist`` with ``cxx`` for ``arch`` (default: what the compiler targets, which
    must be this machine's arch when no arch is given); checks that the compiler targets ``arch``."""
    sdist = Path(sdist)
    version = sdist_version(sdist)
    triple, target_arch = compiler_target(cxx)
    if arch is None:
        arch = target_arch
    elif arch not in ARCHES:
        raise NativeBuildError(f"--arch {arch}: use one of {', '.join(ARCHES)}")
    if target_arch != arch:
        raise NativeBuildError(f"{cxx} builds for {triple} ({target_arch}), not {arch}: pass --cxx with a compiler "
                               f"for {arch} (e.g. {_cross_example(arch)})")
    flags, libs = flags_for(arch)
    return Plan(sdist, sha256(sdist), version, cxx, compiler_version(cxx), triple, arch, tuple(flags), tuple(libs))


def _cross_example(arch: str) -> str:
    return {"aarch64": "aarch64-linux-gnu-g++", "armv7": "arm-linux-gnueabihf-g++", "x86-64": "g++"}[arch]


def cached_binary(p: Plan) -> Path | None:
    """The cache's binary for this plan, when it was built."""
    binary = cache_dir() / "builds" / p.key / BINARY
    return binary if binary.is_file() else None


def default_jobs() -> int:
    """One compile per CPU, but no more than the memory available holds (:data:`COMPILE_PEAK_MB` each)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    avail = _mem_available_mb()
    if avail is not None:
        cpus = min(cpus, max(1, avail // COMPILE_PEAK_MB))
    return max(1, cpus)


def _mem_available_mb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def build(sdist: Path, out: Path, *, cxx: str = "g++", arch: str | None = None, jobs: int | None = None,
          log: Log | None = print) -> Path:
    """Compile ``sdist``'s Fairy-Stockfish with ``cxx`` for ``arch`` and write the binary to ``out``
    (returned). A build with the same inputs is taken from the cache and compiles nothing (it says
    so); ``jobs`` compiles at once (default :func:`default_jobs`). A failed compile is a
    NativeBuildError naming the log file."""
    p = plan(sdist, cxx=cxx, arch=arch)
    binary = build_plan(p, jobs=jobs, log=log)
    out = Path(out)
    if out.resolve() != binary.resolve():
        copy_executable(binary, out)
    return out


def build_plan(p: Plan, *, jobs: int | None = None, log: Log | None = print) -> Path:
    """The cache's binary for ``p``, compiled and linked when it is not there yet (one build of a
    key at a time: a second one waits for the first and takes its binary)."""
    import fcntl
    have = cached_binary(p)
    if have is None:
        home = cache_dir() / "builds" / p.key
        home.mkdir(parents=True, exist_ok=True)
        with open(home / ".lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                _say(log, f"another build of the same inputs is under way ({home}): waiting for it")
                fcntl.flock(lock, fcntl.LOCK_EX)
            have = cached_binary(p)
            if have is None:
                return _compile_and_link(p, home, jobs or default_jobs(), log)
    _say(log, f"already built with the same source, flags, compiler and arch (cache {have.parent}): "
              "nothing compiled")
    return have


def _compile_and_link(p: Plan, home: Path, jobs: int, log: Log | None) -> Path:
    obj = home / "obj"
    obj.mkdir(parents=True, exist_ok=True)
    logfile = home / "build.log"
    (home / "inputs.json").write_text(json.dumps(p.describe(), indent=1) + "\n", encoding="utf-8")
    started, cpu0 = time.monotonic(), _children_cpu()
    with tempfile.TemporaryDirectory(prefix="fairyboard-fsf-src-") as tmp:
        src = _extract(p.sdist, Path(tmp))
        units = _units(src)
        todo = [u for u in units if not (obj / _obj_name(src, u)).is_file()]
        _say(log, f"compiling Fairy-Stockfish (pyffish {p.version}) for {p.arch} with {p.cxx}: {len(todo)} of "
                  f"{len(units)} files, {jobs} at a time (log: {logfile})")
        with open(logfile, "a", encoding="utf-8") as lf:
            lf.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} {json.dumps(p.describe())}\n")
            lf.flush()
            _compile_all(p, src, todo, obj, jobs, lf, logfile, log)
            objects = [str(obj / _obj_name(src, u)) for u in units]
            tmp_bin = home / f".{BINARY}.linking"
            cmd = [p.cxx, *p.flags, *objects, "-o", str(tmp_bin), *p.libs]
            lf.write(" ".join(cmd) + "\n")
            lf.flush()
            r = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT)
            if r.returncode != 0:
                raise NativeBuildError(f"linking Fairy-Stockfish failed (exit {r.returncode}): see {logfile}")
    os.chmod(tmp_bin, 0o755)
    os.replace(tmp_bin, home / BINARY)
    shutil.rmtree(obj, ignore_errors=True)
    _say(log, f"built in {time.monotonic() - started:.0f} s ({_children_cpu() - cpu0:.0f} s of CPU)")
    return home / BINARY


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _extract(sdist: Path, dest: Path) -> Path:
    root = source_root(sdist)
    with tarfile.open(sdist, "r:*") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(f"{root}/src/") and (m.isfile() or m.isdir())]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, members=members, filter="data")
        else:   # pragma: no cover (Python before 3.11.4)
            for m in members:
                if m.name.startswith("/") or ".." in m.name.split("/"):
                    raise NativeBuildError(f"{sdist}: a file outside the package: {m.name}")
            tar.extractall(dest, members=members)
    return dest / root / "src"


def _units(src: Path) -> list[Path]:
    """The translation units, biggest first (so the longest compiles start first)."""
    units = [f for d in SOURCE_DIRS for f in sorted((src / d).glob("*.cpp")) if f.name not in SKIPPED]
    return sorted(units, key=lambda f: -f.stat().st_size)


def _obj_name(src: Path, unit: Path) -> str:
    return str(unit.relative_to(src).with_suffix(".o")).replace("/", "_")


def _compile_all(p: Plan, src: Path, todo: list[Path], obj: Path, jobs: int, lf, logfile: Path,
                 log: Log | None) -> None:
    """Compile ``todo``, ``jobs`` at a time (each into a ``.part`` file renamed when complete); the
    first failure stops the files not started yet."""
    import threading
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
    lock = threading.Lock()
    failed = threading.Event()
    done = [0]

    def one(unit: Path) -> None:
        if failed.is_set():
            return
        rel = unit.relative_to(src)
        target = obj / _obj_name(src, unit)
        tmp = target.with_name(target.name + ".part")
        r = subprocess.run([p.cxx, "-c", *p.flags, str(unit), "-o", str(tmp)], cwd=src,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with lock:
            lf.write(f"{p.cxx} -c {rel}: exit {r.returncode}\n{r.stdout}")
            lf.flush()
            if r.returncode != 0:
                failed.set()
                raise NativeBuildError(f"compiling {rel} failed (exit {r.returncode}): see {logfile}")
            os.replace(tmp, target)
            done[0] += 1
            _say(log, f"  [{done[0]}/{len(todo)}] {rel}")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, u) for u in todo]
        wait(futures, return_when=FIRST_EXCEPTION)
        for f in futures:
            f.cancel()
    for f in futures:
        if not f.cancelled() and f.exception() is not None:
            raise f.exception()  # type: ignore[misc]


def copy_executable(binary: Path, out: Path) -> None:
    """Copy ``binary`` to ``out`` (through a temporary file beside it, so ``out`` is never half
    written), executable."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.part")
    shutil.copyfile(binary, tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)


# --- the check ----------------------------------------------------------------------------------

# (variant, depth): 12x8 variants with custom pieces, and orthodox chess
CHECKS = (("tomorrow-3", 3), ("courier", 3), ("tomorrow-2", 2), ("orthodox", 4))
KNOWN = {("tomorrow-3", 3): 27266, ("orthodox", 4): 197281}


def engine_perft(binary: str | list[str], cases, *, timeout: float = 120) -> tuple[list[int], str]:
    """The counts ``binary``'s ``go perft`` gives for ``cases`` ((variant, depth) or (variant,
    depth, FEN): from the variant's start, or from FEN), each variant loaded from the
    variants.ini section our rules export; and the engine's output."""
    from board_driver.config import load_variant
    from engine.fsf import fsf_name, variants_ini
    command = [binary] if isinstance(binary, str) else list(binary)
    with tempfile.TemporaryDirectory(prefix="fairyboard-check-") as tmp:
        lines = ["uci"]
        for name, depth, *fen in cases:
            v = load_variant(name)
            ini = Path(tmp) / f"{name}.ini"
            ini.write_text(variants_ini(v), encoding="utf-8")
            lines += [f"setoption name VariantPath value {ini}",
                      f"setoption name UCI_Variant value {fsf_name(v.name)}",
                      f"position fen {fen[0] if fen else v.start_fen}", f"go perft {depth}"]
        out = uci_session(command, lines, timeout=timeout)
    counts = [int(n) for n in re.findall(r"^Nodes searched: (\d+)$", out, re.M)]
    return counts, out


def uci_session(command: list[str], lines: list[str], *, timeout: float = 120) -> str:
    """The engine's output for ``lines``: after each ``go`` the next line waits for the search's
    last line (a perft's ``Nodes searched``, a search's ``bestmove``), since the engine searches
    in the background and takes no new position meanwhile; then ``quit``."""
    import queue
    import threading
    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    except OSError as exc:
        raise NativeBuildError(f"{command[0]} does not start: {exc}") from None
    assert proc.stdin is not None and proc.stdout is not None
    stdout = proc.stdout
    got: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for ln in stdout:
            got.put(ln)
        got.put("")

    threading.Thread(target=pump, daemon=True).start()
    out: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        for line in lines + ["quit"]:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            if line.startswith("go"):
                while True:
                    try:
                        ln = got.get(timeout=max(0.1, deadline - time.monotonic()))
                    except queue.Empty:
                        raise NativeBuildError(f"{command[0]} did not answer {line!r} within {timeout:.0f} s") from None
                    if not ln:
                        tail = " / ".join("".join(out).strip().splitlines()[-3:]) or "no output"
                        raise NativeBuildError(f"{command[0]} stopped during {line!r} (exit {proc.wait()}): {tail}")
                    out.append(ln)
                    if ln.startswith(("Nodes searched", "bestmove")):
                        break
        proc.stdin.close()
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        while (ln := got.get(timeout=5)):
            out.append(ln)
    except (BrokenPipeError, subprocess.TimeoutExpired, queue.Empty):
        pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return "".join(out)


def our_perft(name: str, depth: int, fen: str | None = None) -> int:
    """Our rules' perft of ``name`` from its start (or ``fen``)."""
    from board_driver.config import load_variant
    from engine.perft import perft
    from engine.position import Position
    return perft(Position.from_fen(load_variant(name), fen), depth)


def check(binary: str | list[str], cases=CHECKS, *, log: Log | None = print) -> None:
    """Run ``binary``'s perft for ``cases`` against ours; a NativeBuildError on the first mismatch."""
    counts, out = engine_perft(binary, cases)
    if len(counts) != len(cases):
        tail = " / ".join(out.strip().splitlines()[-3:]) or "no output"
        raise NativeBuildError(f"check failed: the engine answered {len(counts)} of {len(cases)} perft "
                               f"commands ({tail})")
    from board_driver.config import load_variant
    from engine.fsf import fsf_name
    for name in dict.fromkeys(c[0] for c in cases):
        section = fsf_name(load_variant(name).name)
        if not re.search(rf"^info string variant {re.escape(section)} files", out, re.M):
            raise NativeBuildError(f"check failed: the engine did not load {name}'s variants.ini section ({section})")
    for (name, depth, *fen), got in zip(cases, counts):
        ours = our_perft(name, depth, *fen)
        known = None if fen else KNOWN.get((name, depth))
        if got != ours or (known is not None and got != known):
            where = f" from {fen[0]}" if fen else ""
            raise NativeBuildError(f"check mismatch: {name} perft {depth}{where}: the engine counts {got}, our rules "
                                   f"{ours}" + (f" (known: {known})" if known is not None else ""))
        _say(log, f"  perft {depth} {name}: {got} (ours: {ours})")
