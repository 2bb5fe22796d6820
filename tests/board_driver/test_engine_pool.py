"""One engine process per board (board_driver/opponents/engine_pool.py, docs/engine.md): the
computer, the hint and the live evaluation share one real Fairy-Stockfish, the computer's move
first; a killed engine is started again, the computer still moves and says so; the service
runs one engine child through a game with hints and the live evaluation on."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from webtools import pair_when_ready, start_serve, until

from board_driver.config import load_variant
from board_driver.opponents.engine_pool import ANALYSIS, EVAL, HINT, MOVE, EnginePool
from board_driver.opponents.players import PlayerError, find_fairy_stockfish, find_fsf_wasm
from engine.game import new_game


def _native() -> str:
    path = find_fairy_stockfish()
    if path is None:
        pytest.skip("Fairy-Stockfish is not installed (apt install fairy-stockfish)")
    return path


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"    # a zombie: ended, not yet reaped


def _events(pool: EnginePool) -> list[tuple[str, int]]:
    return [e for eng in pool.engines() for e in eng.log]


def test_the_computers_move_preempts_an_evaluation_and_the_evaluation_is_searched_again():
    _native()
    v = load_variant("orthodox")
    g = new_game(v)
    pool = EnginePool()
    ev = pool.player("fsf", v, priority=EVAL)
    move = pool.player("fsf:3", v, priority=MOVE)
    try:
        assert len(pool.pids()) == 1                        # fsf and fsf:3 share one process
        done: list[str] = []
        results: dict = {}

        def evaluate() -> None:
            results["eval"] = ev.evaluate(g, 30.0)          # far longer than the test waits for the move
            done.append("eval")
        t = threading.Thread(target=evaluate)
        t.start()
        until(lambda: ("started", EVAL) in _events(pool), what="the evaluation's search")
        results["move"] = move.turn(g, 0.2)
        done.append("move")
        assert done == ["move"]                             # the move did not wait for the 30 s evaluation
        events = _events(pool)
        assert events[:6] == [("started", EVAL), ("preempted", EVAL), ("preempted-done", EVAL),
                              ("requeued", EVAL), ("started", MOVE), ("done", MOVE)], events
        until(lambda: ("started", EVAL) in _events(pool)[6:], what="the evaluation searched again")
        pool.engines()[0].holder.handle.stop()             # no need to wait 30 s for it
        t.join(30)
        assert done == ["move", "eval"]
        # each search had its own Skill Level: the move its 3, the evaluation full strength
        assert list(pool.engines()[0].skills) == [(EVAL, 20), (MOVE, 3), (EVAL, 20)]
        legal = set(g.legal_actions())
        assert results["move"][0] in legal and results["eval"].best[0] in legal
    finally:
        ev.close()
        move.close()


def test_requests_wait_in_priority_order_behind_the_one_searching():
    _native()
    v = load_variant("orthodox")
    g = new_game(v)
    pool = EnginePool()
    players = {p: pool.player("fsf", v, priority=p) for p in (MOVE, HINT, EVAL, ANALYSIS)}
    order: list[int] = []
    try:
        first = threading.Thread(target=lambda: (players[MOVE].turn(g, 1.0), order.append(MOVE)))
        first.start()
        until(lambda: ("started", MOVE) in _events(pool), what="the move's search")
        waiting = [threading.Thread(target=lambda p=p: (players[p].evaluate(g, 0.05), order.append(p)))
                   for p in (ANALYSIS, EVAL, HINT)]         # asked least urgent first
        for w in waiting:
            w.start()
        until(lambda: len(pool.engines()[0].queue) == 3, what="three requests queued")
        for w in [first, *waiting]:
            w.join(30)
        assert order == [MOVE, HINT, EVAL, ANALYSIS]         # none preempted the move; then by priority
        assert ("preempted", MOVE) not in _events(pool)
    finally:
        for p in players.values():
            p.close()
    assert pool.pids() == []


def test_a_killed_engine_is_started_again_and_the_search_tried_once_more():
    _native()
    v = load_variant("orthodox")
    g = new_game(v)
    notices: list[str] = []
    pool = EnginePool(on_notice=notices.append)
    move = pool.player("fsf:5", v, priority=MOVE)
    ev = pool.player("fsf", v, priority=EVAL)
    try:
        # killed between searches: the next one starts a new process
        (old,) = pool.pids()
        os.kill(old, signal.SIGKILL)
        until(lambda: _gone(old), what="the engine's end")
        assert move.turn(g, 0.1)[0] in g.legal_actions()
        (new,) = pool.pids()
        assert new != old
        said = move.take_notices()
        assert len(said) == 1 and "stopped (killed by signal 9); it was started again." in said[0], said
        assert move.take_notices() == [] and ev.take_notices() == []        # said once
        # killed during a search: the search is tried again on a new process
        got: dict = {}
        t = threading.Thread(target=lambda: got.update(ev=ev.evaluate(g, 1.0)))
        t.start()
        until(lambda: ("started", EVAL) in _events(pool), what="the evaluation's search")
        os.kill(new, signal.SIGKILL)
        t.join(60)
        assert got["ev"].best and got["ev"].best[0] in g.legal_actions()
        assert len(pool.pids()) == 1 and pool.pids()[0] not in (old, new)
        assert [n for n in notices if "killed by signal 9" in n] and len(notices) == 2
    finally:
        move.close()
        ev.close()



def test_an_engine_that_stops_answering_is_ended_and_started_again(monkeypatch):
    from board_driver.opponents import engine_pool
    _native()
    monkeypatch.setattr(engine_pool, "HANG_SECONDS", 1.0)      # silent 1 s past its time: taken for dead
    v = load_variant("orthodox")
    g = new_game(v)
    pool = EnginePool()
    p = pool.player("fsf", v, priority=HINT)
    try:
        (frozen,) = pool.pids()
        got: dict = {}
        t = threading.Thread(target=lambda: got.update(ev=p.evaluate(g, 0.3)))
        t.start()
        until(lambda: ("started", HINT) in _events(pool), what="the search")
        os.kill(frozen, signal.SIGSTOP)                     # it answers nothing from now on
        t.join(60)
        _ended_and_started_again(pool, p, frozen, got["ev"], g)
    finally:
        p.close()


def _ended_and_started_again(pool, p, frozen: int, ev, g) -> None:
    """The search answered all the same, on a new process, the frozen one ended, and said once."""
    assert ev.best[0] in g.legal_actions()
    assert ("hung", HINT) in _events(pool) and pool.pids() and pool.pids()[0] != frozen
    until(lambda: _gone(frozen), what="the frozen engine's end")
    said = p.take_notices()
    assert len(said) == 1 and "stopped answering (it was ended); it was started again." in said[0], said

def test_an_engine_that_cannot_be_started_again_is_said_clearly(tmp_path):
    native = _native()
    copy = tmp_path / "fsf"
    copy.write_bytes(Path(native).read_bytes())
    copy.chmod(0o755)
    v = load_variant("orthodox")
    pool = EnginePool()
    p = pool.player(f"uci:{copy}", v, priority=MOVE)
    try:
        (pid,) = pool.pids()
        copy.unlink()
        os.kill(pid, signal.SIGKILL)
        until(lambda: _gone(pid), what="the engine's end")
        with pytest.raises(PlayerError, match=r"stopped \(killed by signal 9\); it cannot be started again: .*cannot start"):
            p.turn(new_game(v), 0.1)
    finally:
        p.close()


def test_the_last_user_closing_ends_the_process():
    _native()
    v = load_variant("orthodox")
    pool = EnginePool()
    a = pool.player("fsf", v, priority=HINT)
    b = pool.player("fsf:1", v, priority=MOVE)
    (pid,) = pool.pids()
    a.close()
    assert pool.pids() == [pid] and not _gone(pid)
    b.close()
    until(lambda: _gone(pid), what="the engine's end")
    assert pool.pids() == []


def test_builtin_and_random_players_are_their_own():
    v = load_variant("orthodox")
    pool = EnginePool()
    for spec in ("builtin:1", "random"):
        with pool.player(spec, v, priority=MOVE) as p:
            assert p.spec.text == spec and p.turn(new_game(v), 0.05)
    assert pool.engines() == []


# -- the service --------------------------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


class _Sampler(threading.Thread):
    """The service's child processes, looked at all along the game."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.most = 0
        self.seen: dict[int, str] = {}
        self.done = threading.Event()
        self.phase = "start"

    def run(self) -> None:
        while not self.done.wait(0.02):
            try:
                kids = _children(self.pid)
            except OSError:
                return
            self.most = max(self.most, len(kids))
            for k in kids - set(self.seen):
                try:
                    self.seen[k] = self.phase + " " + Path(f"/proc/{k}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    self.seen[k] = "?"



def _play(s, text: str, st: dict) -> None:
    frm, to = text[:2], text[2:4]
    s.move(frm, to, capture=to in st["pieces"])


def _env(tmp_path) -> dict:
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)
    env.pop("FAIRYBOARD_ENGINE_POOL", None)
    return env


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["orthodox", "tomorrow-3"])
def test_a_game_against_the_computer_with_hints_and_the_evaluation_runs_one_engine(tmp_path, variant):
    _native()
    if variant != "orthodox" and isinstance(find_fsf_wasm(), str):
        pytest.skip(str(find_fsf_wasm()))
    proc, s, _ = start_serve(["--board", "sim", "--web", "127.0.0.1:0", "--new", "--variant", variant,
                              "--black", "fsf:5", "--move-time", "0.3"], _env(tmp_path))
    sampler = _Sampler(proc.pid)
    sampler.start()
    try:
        token = pair_when_ready(s)
        assert s.post("/api/eval", {"on": True, "seconds": 0.5}, token=token)[0] == 200
        (engine,) = until(lambda: _children(proc.pid), what="the engine")
        for ply in (0, 2):
            sampler.phase = f"ply {ply}"
            st = until(lambda: (x := s.wait_state())["eval"] and x["eval"]["state"] == "done" and x,
                       timeout=90, what="the evaluation")
            assert st["eval"]["engine"] == "fsf" and st["eval"]["ply"] == ply
            assert s.post("/api/command", {"text": "hint"}, token=token)[0] == 200
            st = until(lambda: (x := s.wait_state())["hint"] and x, timeout=90, what="the hint")
            _play(s, st["hint"]["move"], st)
            st = until(lambda: (x := s.wait_state())["computer"] and x, timeout=90, what="the computer's move")
            _play(s, st["computer"]["move"], st)
            until(lambda: len(s.wait_state()["moves"]) == ply + 2, timeout=30, what="the computer's move made")
        assert _children(proc.pid) == {engine}
    finally:
        sampler.done.set()
        sampler.join()
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    # never two at once; from the first hint on, one engine throughout (before it, the game's
    # opening may have asked the native binary its version: a child that ends at once)
    assert sampler.most == 1, sampler.seen
    assert len([k for k, what in sampler.seen.items() if not what.startswith("start")]) <= 1, sampler.seen
    assert engine in sampler.seen, sampler.seen


@pytest.mark.slow
def test_a_killed_engine_in_the_service_is_started_again_and_the_computer_still_moves(tmp_path):
    _native()
    proc, s, _ = start_serve(["--board", "sim", "--web", "127.0.0.1:0", "--new", "--black", "fsf:5",
                              "--move-time", "0.3"], _env(tmp_path))
    try:
        token = pair_when_ready(s)
        assert s.post("/api/eval", {"on": True, "seconds": 0.5}, token=token)[0] == 200
        until(lambda: (x := s.wait_state())["eval"] and x["eval"]["state"] == "done", timeout=60, what="the evaluation")
        (engine,) = _children(proc.pid)
        os.kill(engine, signal.SIGKILL)
        s.move("e2", "e4")
        st = until(lambda: (x := s.wait_state())["computer"] and x, timeout=60, what="the computer's move")
        _play(s, st["computer"]["move"], st)
        st = until(lambda: (x := s.wait_state())["moves"][1:] and x, timeout=30, what="the computer's move made")
        said = [n["text"] for n in st["notices"]]
        assert [n for n in said if "stopped (killed by signal 9); it was started again." in n], said
        assert not [n for n in said if "Computer (black) cannot move" in n], said      # the engine never failed the game
        kids = _children(proc.pid)
        assert len(kids) == 1 and engine not in kids
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


@pytest.mark.slow
def test_an_engine_that_stops_answering_before_a_search_starts_is_ended_and_started_again():
    """Stopped before the search's options are answered: python-chess gives up on the command
    after its timeout (10 s), and that is a hang like any other, not the caller's error."""
    _native()
    v = load_variant("orthodox")
    g = new_game(v)
    pool = EnginePool()
    p = pool.player("fsf", v, priority=HINT)
    try:
        (frozen,) = pool.pids()
        os.kill(frozen, signal.SIGSTOP)                     # frozen before the search is asked for
        _ended_and_started_again(pool, p, frozen, p.evaluate(g, 0.3), g)
    finally:
        p.close()
