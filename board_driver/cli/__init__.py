"""The ``fairyboard`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function that adds
its sub-commands; a sub-command's handler takes the parsed ``argparse.Namespace`` and returns
the process exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules (relative to this package) that contribute sub-commands.
COMMAND_MODULES = (
    "engine_cmds",
    "csipgs_cmds",
    "play_cmds",
    "games_cmds",
    "hw_cmds",
    "club_cmds",
)


def version() -> str:
    """The installed package's version (or the checkout's pyproject.toml when not installed)."""
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        return dist_version("fairyboard")
    except PackageNotFoundError:
        pass
    try:
        import tomllib
        from pathlib import Path
        with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as f:
            return str(tomllib.load(f)["project"]["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairyboard",
        description="Referee chess variants on a 12x8 sensor board (or the simulated one).",
    )
    parser.add_argument("--version", action="version", version=f"fairyboard {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the one place that catches broadly: print a clear message
        from engine.errors import EngineError
        from board_driver.errors import BoardDriverError

        if isinstance(exc, (EngineError, BoardDriverError, OSError, ValueError)):
            print(f"fairyboard {args.command}: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
