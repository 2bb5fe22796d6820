"""What the page offers to play, read from the configs off the board loop: the variants, the
computer players (``GET /api/variants``), and a design's price (``GET /api/cost``)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from board_driver.errors import BoardDriverError
from board_driver.web.api import ApiError
from engine.errors import EngineError


class Catalog:
    """The variants the page offers (read once, on first asking, off the server's loop) and
    what it says of the computer players."""

    def __init__(self, variants: list[dict] | None = None, info: dict | None = None):
        self._variants = variants
        self.info = info or computer_offer()

    async def variants(self) -> list[dict]:
        if self._variants is None:
            loop = asyncio.get_running_loop()
            self._variants = await loop.run_in_executor(None, list_variants)
        return self._variants


def computer_offer() -> dict:
    """What ``GET /api/variants`` says of the computer players: the specs offered (``computer``),
    the built-in levels, weakest first (``computer_levels``), and what each means
    (``computer_names``)."""
    from board_driver.opponents.players import PAGE_LEVELS, describe_spec
    specs = computer_specs()
    levels = [f"builtin:{n}" for n in PAGE_LEVELS]
    return {"computer": specs, "computer_levels": levels,
            "computer_names": {spec: describe_spec(spec) for spec in specs + levels}}


def computer_specs() -> list[str]:
    """The computer players the page offers: the built-in engine, the random mover, and
    Fairy-Stockfish when it is installed."""
    from board_driver.opponents.players import find_fairy_stockfish
    return ["builtin", "random"] + (["fsf"] if find_fairy_stockfish() else [])


def computer_refusal(name: str) -> str | None:
    """Why a player's name may not be used from the page (an engine that runs a command)."""
    from board_driver.opponents.players import PlayerError, parse_spec
    try:
        spec = parse_spec(name)
    except PlayerError:
        return None                 # a person's name
    if spec.kind == "uci":
        return "an engine that runs a command is set on the command line (--white/--black), not from the page"
    return None


def list_variants() -> list[dict]:
    from board_driver.config import configs_dir, load_variant
    out = []
    for path in sorted((configs_dir() / "variants").glob("*.yaml")):
        try:
            v = load_variant(path.stem)
        except (BoardDriverError, EngineError, ValueError, OSError):
            continue
        out.append({"name": v.name, "description": v.description, "family": v.family,
                    "files": v.geometry.files, "ranks": v.geometry.ranks})
    out.append({"name": "random", "family": "chess", "files": 12, "ranks": 8,
                "description": "Random Variant Chess: three dice choose one of the variants of tomorrow's chess"})
    return out


def price_design(design: str, session: Any) -> dict:
    """The ``cost`` command's figures for a design, priced as this game prices it."""
    from engine.csipgs_cost import Cost, breakdown, cost_of, decimal
    g = session.game
    c: Cost
    cost_fn: Callable[[str], Cost] | None = getattr(g, "cost", None)
    if g.family == "csipgs" and callable(cost_fn):
        try:
            c = cost_fn(design)
        except (EngineError, ValueError) as exc:
            raise ApiError(400, f"{design}: {exc}") from None
    else:
        from board_driver.config import load_variant
        from engine.csipgs import CsipgsRules
        try:
            c = cost_of(design, CsipgsRules.from_variant(load_variant("csipgs")).price_list(), g.geometry)
        except (EngineError, ValueError) as exc:
            raise ApiError(400, f"{design}: {exc}") from None
    return {"design": c.design, "lines": list(breakdown(c)), "exact": decimal(c.exact), "price": decimal(c.price)}
