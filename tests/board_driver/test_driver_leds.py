"""The LED scene, the board layout and the settings that shape them."""

import pytest
from drivertools import Table

from board_driver.referee.runner import pump

from board_driver.devices import FAST, STEADY, LedImage
from board_driver.errors import ConfigError
from board_driver.referee.layout import BoardProfile, Layout, LedOrder
from board_driver.referee.scene import Palette, SceneState, render
from board_driver.settings import load_settings
from engine.geometry import Geometry


def test_an_8x8_game_sits_on_files_c_to_j_and_the_rest_stays_dark():
    t = Table()
    t.lift("g1")
    lay = t.session.layout
    assert lay.physical(t.session.game.geometry.parse("a1")) == 2        # physical c1
    frame = t.board.last_frame
    for phys in range(96):
        if lay.game_square(phys) is None:
            assert frame.colors[phys] == (0, 0, 0)
    assert t.led("f3") == "target" and t.led("h3") == "target"


def test_the_block_of_a_small_game_is_configurable():
    prof = BoardProfile.from_dict({"files": 12, "ranks": 8, "small_game": {"first_file": "a"}})
    lay = Layout.place(prof, Geometry(8, 8))
    assert lay.physical(0) == 0 and lay.physical(63) == 7 * 12 + 7
    assert lay.game_square(8) is None                  # physical i1 is off an a..h game
    with pytest.raises(ConfigError, match="small_game.first_file 'g' puts a 8-file game off the board"):
        Layout.place(BoardProfile(first_file="g"), Geometry(8, 8))
    with pytest.raises(ConfigError, match="does not fit"):
        Layout.place(BoardProfile(files=8, ranks=8), Geometry(12, 8))


def test_profile_errors_name_the_key_and_the_value():
    with pytest.raises(ConfigError, match=r"b\.yaml: leds\.order: 'zigzag'"):
        BoardProfile.from_dict({"leds": {"order": "zigzag"}}, "b.yaml")
    with pytest.raises(ConfigError, match=r"b\.yaml: sensors\[1\]: 'z9'"):
        BoardProfile.from_dict({"sensors": ["a1", "z9"]}, "b.yaml")
    with pytest.raises(ConfigError, match=r"b\.yaml: colour: unknown key"):
        BoardProfile.from_dict({"colour": 1}, "b.yaml")


def test_a_calibrated_sensor_map_reaches_the_game():
    names = [f"{'abcdefghijkl'[i % 12]}{i // 12 + 1}" for i in range(96)]
    names[0], names[1] = names[1], names[0]            # sensors 0 and 1 are crossed
    prof = BoardProfile.from_dict({"sensors": names})
    lay = Layout.place(prof, Geometry(12, 8))
    assert lay.occupancy(frozenset({0})) == 1 << 1 and lay.sensor_of(0) == 1


def test_led_chain_orders():
    row = LedOrder(12, 8, "row-major", "a1")
    assert [row.chain_index(p) for p in (0, 11, 12)] == [0, 11, 12]
    snake = LedOrder(12, 8, "serpentine", "a1")
    assert [snake.chain_index(p) for p in (0, 11, 12, 23)] == [0, 11, 23, 12]
    top = LedOrder(12, 8, "row-major", "l8")
    assert top.chain_index(95) == 0 and top.chain_index(0) == 95
    assert sorted(snake.to_chain(tuple(range(96)))) == list(range(96))


def test_lifted_piece_shows_targets_and_captures():
    t = Table(fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    t.lift("e4")
    assert t.led("e5") == "target" and t.led("d5") == "capture"
    t.place("e4")
    assert t.lit() == {}


def test_victim_lifted_first_shows_the_pieces_that_can_take_it():
    t = Table(fen="4k3/8/8/3p4/4P3/2N5/8/4K3 w - - 0 1")
    t.lift("d5")
    assert t.led("e4") == "source" and t.led("c3") == "source"
    assert t.led("d5") == "capture"


def test_a_held_slide_and_the_move_confirmed():
    t = Table(fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    t.move("a1", "a4")
    assert t.led("a4") == "hold" and t.led("a1") == "hold"
    t.wait(400)
    assert t.led("a1") == "last move" and t.led("a4") == "last move"
    assert not t.blinking("a4")


def test_a_held_move_is_lit_before_its_hold_runs_out_and_only_its_record_waits():
    t = Table(fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    s, board = t.session, t.board
    t.lift("a1")
    in_hand = len(board.frames_shown)
    t.wait(200)
    board.place("a4")
    placed = t.clock()
    shown = []                              # (virtual ms, frame) of every frame from the set-down on
    for ms in range(0, 600, 5):
        t.wait(5) if ms else pump(s, board, t.display, t.clock())
        shown += [(t.clock(), f) for f in board.frames_shown[in_hand + len(shown):]]
        if s.verdict.status == "hold":
            deadline = s.verdict.deadline
    pal = s.settings.palette
    lit = [ms for ms, f in shown if f.colors[t.square("a1")] == f.colors[t.square("a4")] == pal.hold]
    committed = [ms for ms, f in shown if f.colors[t.square("a1")] == f.colors[t.square("a4")] == pal.last_move]
    assert deadline == placed + s.settings.debounce_ms + s.settings.hold_ms
    assert lit and lit[0] == placed + s.settings.debounce_ms < deadline     # shown, as held, once seen
    assert committed and committed[0] == deadline                           # the record waited
    assert t.moves == ["a1a4"]


def test_palette_from_yaml_and_its_errors(tmp_path):
    f = tmp_path / "defaults.yaml"
    f.write_text("driver: {hold_ms: 200}\npalette:\n  target: [1, 2, 3]\n")
    s = load_settings(f)
    assert s.hold_ms == 200 and s.palette.target == (1, 2, 3) and s.palette.check == Palette().check
    t = Table(settings=s)
    t.lift("e2")
    phys = t.session.layout.physical(t.session.game.geometry.parse("e4"))
    assert t.board.last_frame.colors[phys] == (1, 2, 3)
    f.write_text("palette:\n  target: [1, 2, 300]\n")
    with pytest.raises(ConfigError, match=r"defaults\.yaml: palette\.target: \[1, 2, 300\]"):
        load_settings(f)
    f.write_text("driver: {hold: 3}\n")
    with pytest.raises(ConfigError, match=r"driver\.hold: unknown key"):
        load_settings(f)


def test_render_is_pure_and_layers_stack():
    lay = Layout.place(BoardProfile(), Geometry(12, 8))
    pal = Palette()
    st = SceneState(occupancy=0, last=frozenset({0, 1}), checked=(1,))
    f1 = render(lay, pal, st)
    assert f1 == render(lay, pal, st)
    assert f1.colors[0] == pal.last_move and f1.colors[1] == pal.check
    assert f1.blink[0] == STEADY
    with pytest.raises(ValueError, match="3 colours but 2 blink"):
        LedImage(((0, 0, 0),) * 3, (0, 0))


def test_mismatch_squares_blink_fast_and_the_simulator_refuses_wrong_frames():
    t = Table()
    t.move("b1", "b3").settle()
    assert t.led("b3") == "clear" and t.led("b1") == "fill"
    assert t.board.last_frame.blink[t.session.layout.physical(t.session.game.geometry.parse("b3"))] == FAST
    with pytest.raises(ValueError, match="96 entries, not 64"):
        t.board.show(LedImage.dark(64))


def test_stalemate_lights_the_kings_as_the_variant_scores_it():
    t = Table(fen="k7/8/1KQ5/8/8/8/8/8 w - - 0 1")             # orthodox: a draw
    t.move("c6", "c7").settle()
    assert t.session.outcome().reason == "stalemate"
    assert t.led("a8") == "draw" and t.led("b6") == "draw"
    t = Table("tomorrow-1", fen="k11/12/1KQ9/12/12/12/12/12 w - - 0 1")   # White scores 3/5
    t.move("c6", "c7").settle()
    out = t.session.outcome()
    assert (out.reason, out.result) == ("stalemate", "3/5-2/5")
    assert t.led("b6") == "win" and t.led("a8") == "lose" and t.blinking("a8")
