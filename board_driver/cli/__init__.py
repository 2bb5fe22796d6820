"""The ``fairyboard`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function that adds
its sub-commands; a sub-command's handler takes the parsed ``argparse.Namespace`` and returns
the process exit code.

Start-up stays short because only the dispatched command's module is imported: ``COMMANDS``
names every sub-command, its module and its one-line help, so ``fairyboard --help`` lists them
all without importing any (a test keeps the table equal to what the modules register).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Every sub-command: (name, module relative to this package, one-line help), in --help's order.
COMMANDS = (
    ("variants", "engine_cmds", "list the variants with a one-line description"),
    ("perft", "engine_cmds", "count legal move paths to a depth (move generator check)"),
    ("roll", "engine_cmds", "throw three dice for Random Variant Chess (or print a match schedule)"),
    ("replay", "engine_cmds", "apply moves to a variant's start (or a FEN) and print the position"),
    ("fsf", "engine_cmds", "print a Fairy-Stockfish variants.ini section for a variant"),
    ("cost", "csipgs_cmds", "price a csipgs design (atoms x modifiers, colourbound, royal; rounded up)"),
    ("play", "play_cmds", "play a game on the simulated board (the default board)"),
    ("games", "games_cmds", "list, show and export saved games"),
    ("match", "match_cmds", "play engines against each other and score the match"),
    ("install-engine", "engines_cmds", "build and install a native Fairy-Stockfish that fsf plays every variant with"),
    ("calibrate", "hw_cmds", "walk through the board: map sensors to squares, check the LED order"),
    ("selftest", "hw_cmds", "check the board: config, sensors, LEDs, link counters"),
    ("doctor", "hw_cmds", "check the board: config, sensors, LEDs, link counters"),
    ("serve", "hw_cmds", "run the board: the game on the real board until stopped (what the service runs)"),
    ("install-service", "hw_cmds", "install the systemd unit, the udev rule and /etc/fairyboard on a Pi"),
    ("web", "web_cmds", "the page's paired devices: list them, forget them"),
    ("recorder", "club_cmds", "record every board's games from the club's MQTT broker (--web: show them)"),
    ("round", "club_cmds", "start a round in the recorder's store (games first seen from now on)"),
    ("conflicts", "club_cmds", "the lines a board sent again with another body (--take ID: the correction)"),
)

# Modules (relative to this package) that contribute sub-commands.
COMMAND_MODULES = tuple(dict.fromkeys(module for _, module, _ in COMMANDS))
_MODULE_OF = {name: module for name, module, _ in COMMANDS}


def version() -> str:
    """The installed package's version (or the checkout's pyproject.toml when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version
    try:
        return dist_version("fairyboard")
    except PackageNotFoundError:
        pass
    if sys.version_info >= (3, 11):     # tomllib reads the checkout's pyproject.toml (3.10 has none)
        try:
            from pathlib import Path

            import tomllib
            with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as f:
                return str(tomllib.load(f)["project"]["version"])
        except (OSError, KeyError, ValueError):
            pass
    return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked for (importlib.metadata is slow
    to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"fairyboard {version()}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error in one line (``fairyboard play: error: argument --move-time:
    ...; fairyboard play --help lists the options``), exit code 2, as every other bad input."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")


def build_parser(modules: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The parser with the sub-commands of ``modules`` (default: every module) in full, and
    every other sub-command of ``COMMANDS`` by its name and help only."""
    parser = _Parser(
        prog="fairyboard",
        description="Referee chess variants on a 12x8 sensor board (or the simulated one).",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES if modules is None else modules:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    for name, _, text in COMMANDS:
        if name not in sub.choices:
            sub.add_parser(name, help=text)
    return parser


def _parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """Only the module of the command named on the line (none for ``--help``; every module
    for a name the table does not know, so a command missing from it still runs)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is None:
        return build_parser(())
    module = _MODULE_OF.get(command)
    return build_parser((module,) if module else None)


def main(argv: list[str] | None = None) -> int:
    parser = _parser_for(sys.argv[1:] if argv is None else list(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:       # --help, --version (0) or a usage error (2, said in one line)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the one place that catches broadly: print a clear message
        from board_driver.errors import BoardDriverError
        from engine.errors import EngineError

        if isinstance(exc, (EngineError, BoardDriverError, OSError, ValueError)):
            print(f"fairyboard {args.command}: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
