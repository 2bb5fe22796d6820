"""Many boards in one hall: each board publishes its games live to an MQTT broker, one recorder
keeps them all (see docs/club.md).

Topics (``PREFIX`` is ``fairyboard`` unless the profile says otherwise; ``BOARD`` a board's name,
``GAME`` a game id; every payload is JSON):

``PREFIX/BOARD/game/GAME/record``  QoS 1
    ``{"seq": n, "t": time, "rec": {...}}``: the game's journal record on line ``n`` (the header
    is 0), exactly as in the board's journal; ``t`` on live records of the game's course only.
    Records are idempotent by (board, game, seq); another body for a stored line replaces it.
``PREFIX/BOARD/game/GAME/state``   QoS 1, retained
    the game's current state: ``seq`` (its last record), variant, players, date, actions,
    last action, result and reason. Cleared (an empty retained message) once a newer game has
    started on the board and every record of this one is acknowledged.
``PREFIX/BOARD/health``            QoS 1, retained
    ``{"link": ..., "sensors": ..., "t": unix seconds}``.
``PREFIX/BOARD/presence``          QoS 1, retained
    ``{"board": BOARD, "online": true, "t": ...}``; the broker publishes ``"online": false``
    (the board's last will) when the board vanishes.
``PREFIX/BOARD/resend``            QoS 1, recorder to board
    ``{"game": GAME, "from": n}``: send the game's records from line ``n`` again.
``PREFIX/BOARD/ack``               QoS 1, recorder to board
    ``{"game": GAME, "have": n}``: the recorder's store holds the game's first ``n`` records;
    only this counts a record as delivered on the board.

In the PGN feeds a game is ``BOARD/GAME`` (``GameId``): a board's ids are unique on the board only.
"""
