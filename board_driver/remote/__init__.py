"""Remote play: a game between two boards over the club's broker (docs/remote.md).

- :mod:`.side`: the remote side as the session sees it (an :class:`~board_driver.referee.opponent.Opponent`);
- :mod:`.transport`: the paho link of one game (it only moves messages);
- :mod:`.handshake`: which game both boards start; :mod:`.lobby`: the boards online and the
  invitations to this board; :mod:`.invitations`: the handshakes the page asks for while a game
  is on, and the :class:`~.invitations.RemoteStart` the loop hands to the game host.

Imports point down: this package uses ``referee``, ``opponents`` and ``club``; ``referee``
never imports it, and it never imports ``cli`` or ``web``.
"""
