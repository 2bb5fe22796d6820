"""What the board driver makes of pieces moved on the board: chess-family games."""

from drivertools import Table

OPEN_ROOK = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1"
CASTLE = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
EP = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"
PROMO = "3r3k/4P3/8/8/8/8/8/4K3 w - - 0 1"


def test_an_ordinary_move_commits_as_soon_as_the_piece_is_down():
    t = Table()
    t.lift("e2").place("e4")
    assert t.moves == ["e2e4"]          # 60 ms after the place: no hold for a pawn's move


def test_a_knight_commits_at_once_a_slider_is_held_while_it_could_slide_on():
    t = Table()
    t.move("g1", "f3")
    assert t.moves == ["g1f3"]
    t = Table(fen=OPEN_ROOK)
    t.move("a1", "a3")
    assert t.moves == [] and t.status == "hold"
    t.wait(400)
    assert t.moves == ["a1a3"]


def test_a_slide_over_squares_with_short_stops_is_one_move():
    t = Table(fen=OPEN_ROOK)
    t.lift("a1").place("a2", gap=50).lift("a2", gap=100).place("a3", gap=50).lift("a3", gap=100).place("a6", gap=50)
    t.settle()
    assert t.moves == ["a1a6"]


def test_a_piece_set_down_then_moved_on_replaces_the_move():
    t = Table(fen=OPEN_ROOK)
    t.move("a1", "a3").wait(1000)
    assert t.moves == ["a1a3"]
    t.lift("a3").place("a7").settle()
    assert t.moves == ["a1a7"]
    assert t.pending is None


def test_capture_with_the_victim_lifted_first_or_the_mover_first():
    for order in (("d5", "e4"), ("e4", "d5")):
        t = Table()
        t.move("e2", "e4").move("d7", "d5")
        t.lift(*order).place("d5").settle()
        assert t.moves == ["e2e4", "d7d5", "e4d5"], order


def test_a_capture_is_not_seen_until_the_victim_leaves():
    t = Table()
    t.move("e2", "e4").move("d7", "d5")
    t.lift("e4").settle()               # piece in hand over d5, victim still there
    assert t.moves == ["e2e4", "d7d5"]
    assert t.pending["type"] == "move" and "e4d5" in t.pending["candidates"]


def test_castling_king_first_rook_first_fast_and_rook_first_slow():
    for steps in ((("e1", "g1"), ("h1", "f1")), (("h1", "f1"), ("e1", "g1"))):
        t = Table(fen=CASTLE)
        for frm, to in steps:
            t.move(frm, to)
        t.settle()
        assert t.moves == ["e1g1"], steps
    t = Table(fen=CASTLE)
    t.move("h1", "f1").wait(1500)       # the rook alone is a legal move: held, then committed
    assert t.moves == ["h1f1"]
    t.move("e1", "g1").settle()         # ... and the king joining it makes it castling
    assert t.moves == ["e1g1"]
    t = Table(fen=CASTLE)
    t.move("a1", "d1").move("e1", "c1").settle()
    assert t.moves == ["e1c1"]


def test_en_passant_in_any_order():
    for order in (["lift e5", "place d6", "lift d5"], ["lift d5", "lift e5", "place d6"],
                  ["lift e5", "lift d5", "place d6"]):
        t = Table(fen=EP)
        for step in order:
            kind, sq = step.split()
            getattr(t, kind)(sq)
        t.settle()
        assert t.moves == ["e5d6"], order


def test_promotion_prompts_and_takes_the_queen_when_the_opponent_moves_on():
    t = Table(fen=PROMO)
    t.lift("d8").lift("e7").place("d8").settle()     # exd8, promotion by capture
    p = t.pending
    assert p["type"] == "prompt" and p["default"] == "e7d8q"
    assert set(p["options"]) == {"e7d8q", "e7d8r", "e7d8b", "e7d8n"}
    assert t.moves == []                # nothing is guessed before the opponent moves on
    assert t.led("d8") == "prompt" and t.blinking("d8")
    t.move("h8", "h7").settle()         # Black answers the check: the default queen is taken first
    assert t.moves == ["e7d8q", "h8h7"]


def test_promotion_choice_after_or_before_the_move():
    t = Table(fen=PROMO)
    t.lift("e7").place("e8").settle()
    t.say("choose knight")
    assert t.moves == ["e7e8n"] and t.pending is None
    t = Table(fen=PROMO)
    t.say("choose r")
    t.lift("e7").place("e8").settle()
    assert t.moves == ["e7e8r"]


def test_an_illegal_move_is_a_mismatch_with_a_fix_and_never_a_move():
    t = Table()
    t.move("e2", "e5").settle()
    p = t.pending
    assert t.moves == [] and p["type"] == "mismatch"
    assert p["moves"] == [["e5", "e2"]] and "white pawn" in p["text"]
    assert t.led("e5") == "clear" and t.led("e2") == "fill" and t.blinking("e5")
    t.move("e5", "e2").settle()
    assert t.pending is None and t.moves == []
    t.move("e2", "e4")
    assert t.moves == ["e2e4"]


def test_a_pinned_piece_lifted_is_put_back_not_moved():
    t = Table(fen="4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1")
    t.lift("e2").settle()
    assert t.pending["type"] == "mismatch" and t.pending["fill"] == ["e2"]
    t.place("e2").settle()
    assert t.pending is None and t.moves == []


def test_a_knocked_piece_or_a_glitch_changes_nothing():
    t = Table()
    t.move("e2", "e4")
    t.lift("c7").wait(900).place("c7").settle()          # Black's pawn knocked over, put back
    t.board.bounce("g8", t.clock() + 10, times=3)          # a sensor glitch shorter than the debounce
    t.wait(200).settle()
    assert t.moves == ["e2e4"] and t.pending is None
    t.move("e7", "e5")
    assert t.moves == ["e2e4", "e7e5"]


def test_restoring_the_previous_position_takes_back_and_again():
    t = Table()
    t.move("e2", "e4").move("d7", "d5").lift("d5").lift("e4").place("d5").settle()
    assert t.moves == ["e2e4", "d7d5", "e4d5"]
    t.lift("d5").place("e4").place("d5").settle()         # the capture undone, the victim back
    assert t.moves == ["e2e4", "d7d5"]
    t.move("d5", "d7").settle()
    assert t.moves == ["e2e4"]
    t.move("e4", "e2").settle()
    assert t.moves == []


def test_takeback_command_then_the_board_is_restored_as_the_leds_show():
    t = Table()
    t.move("g1", "f3")
    reply = t.say("takeback")
    assert t.moves == [] and "Put the pieces back" in reply[0]
    assert t.pending["type"] == "mismatch" and t.pending["moves"] == [["f3", "g1"]]
    t.move("g8", "f6").settle()                           # nothing counts until the board matches
    assert t.moves == []
    t.move("f6", "g8").move("f3", "g1").settle()
    assert t.pending is None
    t.move("d2", "d4")
    assert t.moves == ["d2d4"]


def test_check_lights_the_royal_piece():
    t = Table(fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    t.move("a1", "a8").settle()
    assert t.moves == ["a1a8"]
    assert t.led("e8") == "check"


def test_mate_ends_the_game_and_lights_both_kings():
    t = Table()
    for frm, to in (("f2", "f3"), ("e7", "e5"), ("g2", "g4"), ("d8", "h4")):
        t.move(frm, to)
    t.settle()
    assert t.session.outcome().reason == "checkmate"
    assert t.led("e1") == "lose" and t.led("e8") == "win"


def test_commands_the_game_does_not_have_say_so():
    t = Table()
    import pytest

    from board_driver.referee.session import CommandError
    for cmd in ("buy N", "end", "pass"):
        with pytest.raises(CommandError, match="not possible now in orthodox"):
            t.say(cmd)
    with pytest.raises(CommandError, match="unknown command 'fly'"):
        t.say("fly away")
    assert t.moves == []


def test_resign_and_take_the_resignation_back():
    t = Table()
    t.move("e2", "e4")
    assert t.say("resign") == ["Black resigns: 1-0."]
    assert t.session.outcome().reason == "resignation"
    assert t.say("takeback") == ["The resignation is taken back: play on."]
    assert t.session.outcome() is None and t.moves == ["e2e4"]
    t.move("e7", "e5")
    assert t.moves == ["e2e4", "e7e5"]


def test_a_draw_agreed_at_the_board_ends_the_game_and_is_resumed_drawn(tmp_path):
    from board_driver.host import lifecycle
    from board_driver.journal import load_any
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    assert t.say("draw") == ["Drawn by agreement: 1/2-1/2."]
    out = t.session.outcome()
    assert (out.result, out.reason) == ("1/2-1/2", "agreement")
    gid = t.session.game_id
    rec = load_any(t.store.path(gid))
    assert (rec.result, rec.reason) == ("1/2-1/2", "agreement")
    t.session.close()
    again = lifecycle.resume(t.store, gid, profile=t.profile, settings=t.settings)
    assert (again.outcome().result, again.outcome().reason) == ("1/2-1/2", "agreement")
    assert again.command("takeback") == ["The draw is taken back: play on."] and again.outcome() is None
    again.close()
