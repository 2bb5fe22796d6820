"""The referee: sensor frames in, the game's verdicts, journal records and LED frames out.

Session (the one owner of a game's state), the reconciler and its inputs, debounce and
evidence, the board layout, the texts a player reads, the LED scene, the command language,
the unwatched-board reading, and the runners that move frames between devices and a session.
"""
