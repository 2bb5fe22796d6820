"""The board's screen: a page and a small JSON API served from the board service's process.

* :mod:`.state` -- the snapshot of a session the page and ``GET /api/state`` read;
* :mod:`.bridge` -- the seam to the board loop: callables queued into the loop (the session's
  one owner runs them), snapshots published back, the page's notices;
* :mod:`.auth`, :mod:`.pairing`, :mod:`.board_io` -- tokens and the password limiter, pairing
  by lifting a piece, the LED overlay and the watched sensor source;
* :mod:`.app` and :mod:`.routes` -- the aiohttp application, its routes by feature, reading
  their dependencies from :mod:`.context`; :mod:`.server` runs it on its own thread;
* :mod:`.service` -- ``--web`` for ``play`` (the simulated board) and ``serve``: the objects
  made and handed to each other.

The built front-end files sit in ``static/`` (package data); their sources in ``frontend/``.
docs/web.md documents the API.
"""
