"""The board's screen: a page and a small JSON API served from the board service's process.

* :mod:`.state` -- the snapshot of a session the page and ``GET /api/state`` read;
* :mod:`.bridge` -- the seam to the board loop: callables queued into the loop (the session's
  one owner runs them), snapshots published back, pairing by lifting a piece;
* :mod:`.server` -- the aiohttp application (HTTP and WebSocket) on its own thread;
* :mod:`.service` -- ``--web`` for ``play`` (the simulated board) and ``serve``.

The built front-end files sit in ``static/`` (package data); their sources in ``frontend/``.
docs/web.md documents the API.
"""
