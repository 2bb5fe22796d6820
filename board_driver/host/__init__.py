"""The game host: one owner of a game's life on a board (open or resume it, attach the players
and the computer, run the loop, replace the game on new, report the link), for every front
end: play, play --web, serve.
"""
