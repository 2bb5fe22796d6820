"""The board never records a move that was not played, whatever noise the players make.

Noisy physical games (board_driver/sim/noise.py): games played by python-chess (orthodox), by
Fairy-Stockfish through pyffish (the 12x8 arrays it can express, Courier Chess) and by the
engine's legal actions (csipgs drops and purchases, Chego drops and removals, Cost Progressive
multi-move turns), made on the simulated board with bounces, slides, knocked pieces, late
victims, hesitations, capturer hesitations, victims set aside, victims set down after the capture and takebacks. After every
segment of events the game recorded must be a prefix of the game played: stopping for a
correction or a prompt is allowed (and counted), a wrong move never. The benchmark
tests/bench/bench_noisy.py runs thousands of these games; here a sample.

Then each noise kind of the reconciler's rules on its own, as a player would make it.
"""

from collections import Counter

import pytest
from drivertools import Table
from noisytools import FAMILIES, noisy_game

from board_driver.sim.noise import KINDS, run_noisy

SAMPLE = [(v, seed) for vs in FAMILIES.values() for v in vs[:2] for seed in range(3)]


@pytest.fixture(scope="module")
def sample():
    pytest.importorskip("pyffish")
    return [(v, seed, noisy_game(v, seed)) for v, seed in SAMPLE]


@pytest.mark.slow
def test_noisy_games_never_record_a_move_that_was_not_played(sample):
    verdicts = Counter()
    for v, seed, ng in sample:
        out = run_noisy(ng)
        assert out.verdict != "wrong", (v, seed, ng.segments[out.where].kind, out.recorded, out.expected)
        verdicts[out.verdict] += 1
    assert verdicts["equal"] >= 0.8 * len(sample), verdicts


@pytest.mark.slow
def test_the_sample_has_every_noise_kind_and_every_source(sample):
    kinds = Counter()
    sources = set()
    for _, _, ng in sample:
        kinds.update(ng.noise)
        sources.add(ng.source)
    assert set(KINDS) <= set(kinds), kinds
    assert sources == {"python-chess", "Fairy-Stockfish", "engine"}


# -- each rule on its own ------------------------------------------------------------------------


def test_a_knocked_piece_put_back_then_the_piece_just_moved_lifted_is_no_capture():
    t = Table(fen="4k3/8/8/1p6/8/8/8/4KB2 w - - 0 1")
    t.move("f1", "e2").wait(600)              # Bf1-e2, held, then committed
    assert t.moves == ["f1e2"]
    t.lift("b5").wait(500).place("b5")        # Black's pawn knocked over and put back
    t.lift("e2").wait(800)                    # the bishop that just moved lifted ...
    assert t.moves == ["f1e2"]                # ... is not Bf1xb5 instead
    t.place("e2").settle()                    # ... and put back
    assert t.moves == ["f1e2"] and t.pending is None


def test_a_piece_knocked_in_the_position_before_is_no_evidence_of_a_capture():
    t = Table()
    t.move("e2", "e4").move("d7", "d5")
    t.lift("d5").wait(600).place("d5")        # Black's pawn knocked over and put back, White to move
    t.move("e4", "e5").wait(500)              # White pushes on
    assert t.moves == ["e2e4", "d7d5", "e4e5"]
    t.lift("e5").wait(800).place("e5").settle()    # the pawn that just moved lifted and put back
    assert t.moves == ["e2e4", "d7d5", "e4e5"] and t.pending is None


def test_a_knock_before_a_takeback_is_no_evidence_after_it():
    t = Table()
    t.move("e2", "e4").move("d7", "d5")
    t.lift("d5").wait(600).place("d5")        # knocked over and put back
    t.move("e4", "e5").wait(500)
    t.move("e5", "e4").settle()               # taken back on the board
    assert t.moves == ["e2e4", "d7d5"]
    t.lift("e4").wait(800).place("e4").settle()    # White hesitates with the pawn
    assert t.moves == ["e2e4", "d7d5"] and t.pending is None


HESITATE = "4k3/8/8/6Q1/8/5n2/8/K7 b - - 0 1"


def test_a_capturer_hesitating_after_lifting_the_piece_just_moved_is_not_a_replacement():
    t = Table(fen=HESITATE)
    t.move("f3", "h4").wait(500)              # Black's knight
    assert t.moves == ["f3h4"]
    t.lift("h4").lift("g5").wait(700).place("g5").wait(1000)   # the victim lifted, the queen hesitates
    assert t.moves == ["f3h4"]                # never f3g5 (the knight taking the queen instead)
    assert t.pending["type"] == "prompt" and t.pending["options"] == ["f3g5"]   # asked, not chosen
    t.lift("g5").place("h4").settle()         # the queen takes after all
    assert t.moves == ["f3h4", "g5h4"] and t.pending is None


def test_a_victim_set_aside_on_an_empty_square_for_a_moment_is_not_a_move():
    t = Table()
    t.move("e2", "e4").move("d7", "d5").wait(500)
    t.lift("d5").place("d6", gap=100)         # the victim set down on d6 (d7-d6 would be legal) ...
    t.lift("d6", gap=100).lift("e4", gap=100).place("d5", gap=100).settle()   # ... and off: exd5
    assert t.moves == ["e2e4", "d7d5", "e4d5"] and t.pending is None


def test_a_victim_set_aside_on_the_capturers_square_is_asked_about_then_decided_by_what_follows():
    t = Table()
    t.move("e2", "e4").move("d7", "d5").wait(500)
    # the pawn lifted, the victim set down on e4, the pawn set on d5, the victim taken off:
    # the board shows only e4 emptied -- a capture, or a pawn in hand after a knocked d5?
    t.lift("e4").lift("d5").place("e4").place("d5").lift("e4").wait(500)
    assert t.moves == ["e2e4", "d7d5"]
    p = t.pending
    assert p["type"] == "prompt" and p["options"] == ["e4d5"] and p["default"] == "e4d5"
    assert t.led("d5") == "prompt"
    t.move("g8", "f6").settle()               # Black moves on: only the capture explains the board
    assert t.moves == ["e2e4", "d7d5", "e4d5", "g8f6"] and t.pending is None


def test_the_same_sequence_then_the_pawn_set_down_elsewhere_is_that_move():
    t = Table()
    t.move("e2", "e4").move("d7", "d5").wait(500)
    t.lift("e4").lift("d5").place("e4").place("d5").lift("e4").wait(500)
    assert t.pending["type"] == "prompt"
    t.place("e5").settle()                    # it was in the hand after all
    assert t.moves == ["e2e4", "d7d5", "e4e5"] and t.pending is None


def test_the_squares_touched_since_an_event_are_the_same_read_either_way():
    # the event log reads a short window off its last events and a long one off its
    # per-square indexes: both must give the squares lifted and placed since any event
    import random

    from board_driver.referee.debounce import SquareEvent
    from board_driver.referee.evidence import EventLog
    rng = random.Random("touched")
    log = EventLog()
    occ = 0
    for i in range(3000):
        sq = rng.randrange(96) if rng.random() < 0.3 else rng.randrange(6)   # a few busy squares
        placed = not occ >> sq & 1
        occ ^= 1 << sq
        log.append(SquareEvent(i * 10, sq, placed), occ)
        if i % 7 == 0:
            for back in (0, 1, 2, 5, 40, 64, 65, 300, 2999):
                index = len(log) - back
                assert log.touched_since(index) == log._touched_by_square(index), (i, back)
    assert log.touched_since(len(log)) == (0, 0)


SET_DOWN = "4k3/8/8/3Q4/8/3r4/8/4K3 w - - 0 1"     # Qd5xd3 legal, and so is Qd5-h1


def test_a_taken_piece_set_down_on_an_empty_square_after_the_capture_is_not_another_move():
    # the rook lifted, the queen lifted and set down on d3, then the rook set down on h1 for a
    # moment: the board shows Qd5-h1 exactly (d3 "put back"), but the rook leaving d3 and a
    # piece landing there is evidence of the capture -- never Qd5-h1 recorded
    t = Table(fen=SET_DOWN)
    t.lift("d3").lift("d5").place("d3").place("h1", gap=100)
    assert t.moves == []
    t.lift("h1", gap=100).settle()            # the rook off the board: the capture
    assert t.moves == ["d5d3"] and t.pending is None


def test_the_taken_piece_left_there_is_asked_about_and_the_capture_taken_when_it_leaves():
    t = Table(fen=SET_DOWN)
    t.lift("d5").lift("d3").place("d3").place("h1").wait(800)    # the queen first this time
    assert t.moves == []
    p = t.pending
    assert p["type"] == "prompt" and sorted(p["options"]) == ["d5d3", "d5h1"] and p["default"] is None
    t.lift("h1").settle()
    assert t.moves == ["d5d3"] and t.pending is None


def test_the_queen_set_down_on_h1_is_chosen_when_the_player_says_so():
    t = Table(fen=SET_DOWN)
    t.lift("d3").lift("d5").place("d3").place("h1").wait(800)   # a rook knocked while the queen moved?
    t.say("choose d5h1")
    t.settle()
    assert t.moves == ["d5h1"] and t.pending is None
