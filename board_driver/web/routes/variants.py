"""What the page offers to play: the variants and computer players (``GET /api/variants``), a
design's price (``GET /api/cost``) and a Random Variant Chess match's schedule
(``GET /api/schedule``)."""

from __future__ import annotations

from functools import partial

from aiohttp import web

from board_driver.web.api import ApiError, json_response
from board_driver.web.catalog import price_design
from board_driver.web.context import CTX, ask


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/api/variants", list_variants)
    r.add_get("/api/cost", cost)
    r.add_get("/api/schedule", schedule)


async def list_variants(request: web.Request) -> web.Response:
    catalog = request.app[CTX].catalog
    return json_response({"variants": await catalog.variants(), **catalog.info})


async def cost(request: web.Request) -> web.Response:
    design = request.query.get("design", "").strip()
    if not design or len(design) > 200:
        raise ApiError(400, "give ?design=BETZA, e.g. ?design=fcFfmW")
    return json_response(await ask(request.app[CTX], partial(price_design, design), changes=False))


async def schedule(request: web.Request) -> web.Response:
    from engine.random_variant import schedule
    try:
        n = int(request.query.get("games", "8"))
    except ValueError:
        raise ApiError(400, "games: a whole number 1-100") from None
    if not 1 <= n <= 100:
        raise ApiError(400, "games: a whole number 1-100")
    return json_response({"games": [{"game": e.game, "white": e.white, "black": "B" if e.white == "A" else "A",
                                     "draw": e.draw, "variant": e.variant} for e in schedule(n)]})
