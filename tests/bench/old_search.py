"""``builtin-old``: the built-in search of another copy of engine/search.py, for measuring a
change of the search against the search before it (docs/board-driver.md, *Matches*).

The copy is the file named by ``$FAIRYBOARD_BUILTIN_OLD`` (``git show main:engine/search.py >
/tmp/old_search.py``), loaded as a sibling of engine.search. :func:`register` adds the kind to
the engine specs (``builtin-old``, ``builtin-old:LEVEL``); ``python tests/bench/old_search.py
match ...`` runs the ``fairyboard`` command with it registered::

    FAIRYBOARD_BUILTIN_OLD=/tmp/old_search.py .venv/bin/python tests/bench/old_search.py match \\
        --white builtin --black builtin-old --games 40 --time 0.1 --openings 4 --seed 2
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from board_driver.opponents.players import BuiltinPlayer, EngineSpec, PlayerError, PlayerKind, register_kind

ENV = "FAIRYBOARD_BUILTIN_OLD"
KIND = "builtin-old"


def load() -> ModuleType:
    """The copy of engine/search.py named by $FAIRYBOARD_BUILTIN_OLD (PlayerError without it)."""
    path = os.environ.get(ENV)
    if not path or not Path(path).is_file():
        raise PlayerError(f"{KIND} needs ${ENV} naming a copy of engine/search.py "
                          f"(e.g. git show main:engine/search.py > /tmp/old_search.py)")
    name = "engine._search_old"
    mod = sys.modules.get(name)
    if mod is None or getattr(mod, "__file__", None) != str(Path(path).resolve()):
        spec = importlib.util.spec_from_file_location(name, str(Path(path).resolve()))
        if spec is None or spec.loader is None:
            raise PlayerError(f"{KIND}: cannot load {path} as a Python module")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return mod


def _why_not(spec: EngineSpec, variant: object) -> str | None:
    try:
        load()
    except PlayerError as exc:
        return str(exc)
    return None


def register() -> None:
    """Let engine specs name ``builtin-old[:LEVEL]``."""
    register_kind(KIND, PlayerKind(make=lambda spec, variant, clock: BuiltinPlayer(spec, clock=clock, search=load()),
                                   why_not=_why_not, builtin_levels=True))


if __name__ == "__main__":
    from board_driver.cli import main
    register()
    sys.exit(main(sys.argv[1:]))
