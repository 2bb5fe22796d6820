"""One board of a remote game, as a process of its own: the real game host on the simulated
board, its remote player over a real broker, and a player at the board who carries out what
the LEDs show for the remote side and plays its own side (a scripted line, else seeded random
actions). Writes a JSON report when the game is over, and the latency samples as it goes.

python tests/remote/side.py --data DIR --port P --name b1 --password pw-b1 --white remote:b2 ...
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import signal
import sys
import threading
import time
from pathlib import Path


def main() -> int:
    import faulthandler
    faulthandler.register(signal.SIGUSR1)
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--white")
    ap.add_argument("--black")
    ap.add_argument("--variant")
    ap.add_argument("--clock", help="a time control (300+3 ...)")
    ap.add_argument("--moves", default="", help="this side's actions, in order (then random ones)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resign-after", type=int, default=400, help="resign once the game has this many actions")
    ap.add_argument("--report", required=True)
    ap.add_argument("--debug", action="store_true")
    ap.add_argument("--latency", help="append {seq, event|led: wall time} lines here")
    ap.add_argument("--commands", help="a file the test appends console commands to (run in order)")
    ap.add_argument("--hold-at", type=int, default=-1, help="before this side's action at this ply ...")
    ap.add_argument("--hold-for", type=float, default=0.0, help="... wait this many seconds")
    ap.add_argument("--keepalive", type=int, default=3, help="the MQTT keepalive (s)")
    ap.add_argument("--no-previews", action="store_true", help="send no previews of tentative moves")
    ap.add_argument("--records-only", action="store_true",
                    help="the player carries out the peer's moves only once their records arrive (not previews)")
    args = ap.parse_args()

    from board_driver.club.broker import BrokerConfig
    from board_driver.host.game_host import GameHost, GameRequest, SimSeat
    from board_driver.journal import GameStore
    from board_driver.referee.reconcile import Explanation, VerdictStatus
    from board_driver.referee.scene import movers, victims
    from board_driver.settings import load_profile, load_settings
    from board_driver.web.service import monotonic_ms
    from engine.contract import ActionKind

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    store = GameStore(Path(args.data))
    settings = load_settings()
    cfg = BrokerConfig(host="127.0.0.1", name=args.name, port=args.port, username=args.name,
                       password=args.password, keepalive=args.keepalive)
    lat = open(args.latency, "a", buffering=1) if args.latency else None

    def say(line: str) -> None:
        print(f"[{args.name}] {line}", flush=True)

    seat = SimSeat(store, monotonic_ms)
    host = GameHost(store, settings=settings, profile=load_profile("sim"), seat=seat, clock=monotonic_ms,
                    say=say, background=True, broker=cfg, stopping=stop.is_set)
    host.open(GameRequest(variant=args.variant, white=args.white, black=args.black, clock=args.clock))
    if args.no_previews and host.session is not None and host.session.computer is not None:
        host.session.computer.previews = False
    script = args.moves.split()
    rng = random.Random(args.seed)
    commands: queue.Queue = queue.Queue()
    st = {"acted": None, "at": 0.0, "done_at": None, "logged": set(), "commands": 0, "held": None}

    def console(session) -> None:
        """The test's console commands, each once, in order (the answers are said)."""
        if not args.commands or not Path(args.commands).exists():
            return
        lines = Path(args.commands).read_text().splitlines()
        for line in lines[st["commands"]:]:
            st["commands"] += 1
            try:
                for answer in session.command(line, monotonic_ms()):
                    say(f"{line}: {answer}")
            except Exception as exc:        # a refused command is said, as on the console
                say(f"{line}: error: {exc}")

    def board():
        return seat.board

    def carry(session, a, note=None) -> None:
        """Lift the victims and the movers now, set the pieces down once the lifts are seen
        (the debounce), as a hand would."""
        lifts = [session.name(sq) for sq in sorted(victims(a)) + sorted(movers(a))]
        places = [session.name(sq) for sq in sorted(a.places)]
        b = board()
        for sq in lifts:
            b.lift(sq, monotonic_ms())
        st["later"] = (time.monotonic() + (0.12 if lifts else 0.0), places, note)

    def later() -> bool:
        due = st.get("later")
        if due is None:
            return False
        if time.monotonic() < due[0]:
            return True
        st["later"] = None
        b = board()
        for sq in due[1]:
            b.place(sq, monotonic_ms())
        if args.debug:
            say(f"placed {due[1]}")
        if due[2] is not None and lat is not None:
            lat.write(json.dumps({"board": args.name, "seq": due[2], "event": time.time()}) + "\n")
        return True

    def job(session) -> None:
        g = session.game
        remote = session.computer
        n = len(g.history)
        console(session)
        if session.outcome() is not None:
            if st["done_at"] is None:
                st["done_at"] = time.monotonic()
            if time.monotonic() - st["done_at"] > 1.5:      # the last word has gone out
                stop.set()
            return
        if remote is None or remote.stopped or later():
            return
        if getattr(remote, "agreed", None) is not None:     # told to wait for the other board
            return
        if session.recover:                 # the player puts the pieces as the LEDs show
            board().setup(session.layout.closed_sensors(g.occupancy()), monotonic_ms())
            return
        key = (n, session.verdict.status.name, len(session.events))
        if st["acted"] == key and time.monotonic() - st["at"] < 2.0:
            return
        if session.verdict.status == VerdictStatus.PROMPT:
            session.command("choose 1", monotonic_ms())
            st["acted"], st["at"] = key, time.monotonic()
            return
        if session.recover or session.tentative is not None or session.verdict.status != VerdictStatus.SETTLED:
            if time.monotonic() - st.get("dbg", 0) > 2:
                st["dbg"] = time.monotonic()
                say(f"waiting: recover={session.recover} tentative={session.tentative is not None} "
                    f"verdict={session.verdict.status.name} pending={session.pending()}")
            return
        if args.no_previews:
            remote.previews = False
        shown = remote.shown if args.records_only else remote.hint()
        if shown is not None:
            carry(session, shown)
            st["acted"], st["at"] = key, time.monotonic()
            return
        if remote.plays(g.turn):
            return
        if n == args.hold_at:               # the player thinks a while
            if st["held"] is None:
                st["held"] = time.monotonic()
            if time.monotonic() - st["held"] < args.hold_for:
                return
        if n >= args.resign_after:
            session.command("resign", monotonic_ms())
            return
        legal = g.legal_actions()
        a = None
        while script and a is None:
            text = script.pop(0)
            a = next((x for x in legal if x.text == text), None)
        if a is None:
            plain = [x for x in legal if x.kind not in (ActionKind.PROMOTION, ActionKind.DESIGN, ActionKind.INVENT)]
            a = rng.choice(plain or legal)
        if a.silent:
            session.commit(Explanation(0, (a,)), len(session.events))
            session.update(monotonic_ms())
        else:
            if a.kind is ActionKind.DROP and a.piece:   # which reserve piece: the board cannot see it
                session.command(f"choose {a.piece}", monotonic_ms())
            carry(session, a, note=n)
        st["acted"], st["at"] = key, time.monotonic()

    def feeder() -> None:
        while not stop.is_set():
            if commands.empty():
                commands.put(job)
            time.sleep(0.02)
    threading.Thread(target=feeder, daemon=True).start()

    class Watch:
        """The LED sink, noting when the first frame that shows the peer's action goes out (its
        preview, or its record when no preview came first)."""

        def __init__(self, session, sink):
            self.session, self.sink = session, sink

        def show(self, frame) -> None:
            self.sink.show(frame)
            r = self.session.computer
            if lat is not None and r is not None and r.hint() is not None:
                seq = len(self.session.game.history)
                if seq not in st["logged"]:
                    st["logged"].add(seq)
                    lat.write(json.dumps({"board": args.name, "seq": seq, "led": time.time(),
                                          "preview": r.shown is None}) + "\n")

        def close(self) -> None:
            self.sink.close()

    session = host.run(commands=commands, stop=stop.is_set,
                       wrap=lambda s, source, sink: (source, Watch(s, sink)))
    out = session.outcome()
    r = session.computer
    if lat is not None and r is not None:
        for seq, t in r.sent_at.items():
            lat.write(json.dumps({"board": args.name, "seq": seq, "sent": t}) + "\n")
        for seq, t in r.shown_at.items():       # the record taken in: from here the board accepts the move
            lat.write(json.dumps({"board": args.name, "seq": seq, "taken": t}) + "\n")
        for seq, t in r.received_at.items():    # the record heard (on the link's thread)
            lat.write(json.dumps({"board": args.name, "seq": seq, "heard": t}) + "\n")
        for seq, t in r.preview_sent_at.items():
            lat.write(json.dumps({"board": args.name, "seq": seq, "previewed": t}) + "\n")
    Path(args.report).write_text(json.dumps({
        "game": session.game_id, "moves": [a.text for a in session.game.history],
        "result": out.result if out else None, "reason": out.reason if out else None,
        "fork": getattr(session.computer, "fork", None)}))
    host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
