"""``fairyboard recorder``: record every board's games from the broker (and show them with
``--web``); ``fairyboard round NAME``: start a round of the recorder's store; ``fairyboard
conflicts``: the lines a board sent again with another body, and the correction."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from board_driver.errors import BoardDriverError


def register(sub) -> None:
    p = sub.add_parser(
        "recorder", help="record every board's games from the club's MQTT broker (--web: show them)",
        description="Subscribes to every board on the broker, stores every game record once in an SQLite "
                    "file, asks boards to re-send what is missing, and with --web shows every board's "
                    "position and serves PGN per board and per round. Runs until SIGTERM or Ctrl-C; "
                    "restarting it loses nothing. See docs/club.md.")
    p.add_argument("--broker", default=os.environ.get("FAIRYBOARD_BROKER", "localhost:1883"),
                   help="the broker, HOST[:PORT]: an address, or a host name of at most 253 characters in labels "
                        "of 1 to 63 (default $FAIRYBOARD_BROKER, else localhost:1883)")
    p.add_argument("--user", default="recorder", help="broker user name (default recorder)")
    p.add_argument("--password-file", help="file whose first line is the broker password "
                                           "(default $FAIRYBOARD_BROKER_PASSWORD, else none)")
    p.add_argument("--tls", action="store_true", help="connect with TLS (system CAs unless --ca)")
    p.add_argument("--ca", help="CA certificate file for TLS")
    p.add_argument("--db", help="the store (default: club.sqlite in the data folder)")
    p.add_argument("--web", metavar="HOST:PORT", help="serve the boards' page and the PGN feeds here")
    p.add_argument("--round", metavar="NAME", help="start round NAME now (games first seen from now on belong to it)")
    p.add_argument("--prefix", default="fairyboard", help="topic prefix (default fairyboard)")
    p.add_argument("--client-id", default="fairyboard-recorder",
                   help="MQTT client id (default fairyboard-recorder); a second recorder needs its own")
    p.set_defaults(handler=cmd_recorder)

    p = sub.add_parser("round", help="start a round in the recorder's store (games first seen from now on)",
                       description="Marks the start of round NAME in the recorder's store; /round/NAME.pgn serves "
                                   "its games. Works while the recorder runs.")
    p.add_argument("name")
    p.add_argument("--db", help="the store (default: club.sqlite in the data folder)")
    p.set_defaults(handler=cmd_round)

    p = sub.add_parser("conflicts", help="the lines a board sent again with another body (--take ID: the correction)",
                       description="Lists, one per line, every body the recorder heard for a line it had already "
                                   "stored with another (the first body stays; see docs/club.md). --take ID puts "
                                   "that body in the line's place (the stored one is kept as a conflict instead). "
                                   "Works while the recorder runs.")
    p.add_argument("--db", help="the store (default: club.sqlite in the data folder)")
    p.add_argument("--take", type=int, metavar="ID", help="the correction: conflict ID's body replaces its line")
    p.set_defaults(handler=cmd_conflicts)


def _db(args) -> Path:
    from board_driver.journal import data_dir
    return Path(args.db) if args.db else data_dir() / "club.sqlite"


def _round_name(name: str) -> str:
    from board_driver.club.broker import NAME_RE
    if not NAME_RE.match(name):
        raise BoardDriverError(f"round {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
    return name


def cmd_round(args) -> int:
    from board_driver.club.store import RecorderStore
    store = RecorderStore(_db(args))
    try:
        store.start_round(_round_name(args.name))
    finally:
        store.close()
    print(f"Round {args.name} started in {_db(args)}.")
    return 0


def cmd_conflicts(args) -> int:
    from board_driver.club.store import RecorderStore
    if not _db(args).exists():
        raise BoardDriverError(f"{_db(args)}: no recorder's store there")
    store = RecorderStore(_db(args))
    try:
        if args.take is not None:
            try:
                line = store.take_conflict(args.take)
            except LookupError as exc:
                raise BoardDriverError(str(exc.args[0])) from None
            print(f"{line['board']}'s game {line['game']}, line {line['seq']}: conflict {args.take}'s body is "
                  f"stored now; the body it replaced is kept as a conflict.")
            return 0
        rows = store.conflicts()
        for c in rows:
            print(f"{c['id']}  {c['board']}/{c['game']} line {c['seq']}: stored {_short(c['stored'])}; "
                  f"also heard {_short(c['body'])}")
        print(f"{len(rows)} conflict{'s' if len(rows) != 1 else ''} in {store.path}.")
    finally:
        store.close()
    return 0


def _short(body: str | None, width: int = 100) -> str:
    if body is None:
        return "(nothing)"
    return body if len(body) <= width else body[:width - 3] + "..."


def cmd_recorder(args) -> int:
    from board_driver.club.broker import Tls, parse_address
    from board_driver.club.recorder import Recorder, RecorderConfig
    from board_driver.club.store import RecorderStore

    tls = Tls(ca=args.ca) if (args.tls or args.ca) else None
    from board_driver.errors import ConfigError
    try:
        host, port = parse_address(args.broker, 8883 if tls else 1883)
    except ConfigError as exc:
        raise ConfigError(f"--broker {exc}") from None
    try:
        web = parse_address(args.web, 8080) if args.web else None
    except ConfigError as exc:
        raise ConfigError(f"--web {exc}") from None
    try:
        import paho.mqtt.client  # noqa: F401
    except ImportError:
        raise BoardDriverError("the recorder needs paho-mqtt: pip install paho-mqtt") from None
    password = os.environ.get("FAIRYBOARD_BROKER_PASSWORD")
    if args.password_file:
        try:
            password = Path(args.password_file).read_text(encoding="utf-8").splitlines()[0].strip()
        except (OSError, IndexError) as exc:
            raise BoardDriverError(f"--password-file {args.password_file}: cannot read a password: {exc}") from None
    store = RecorderStore(_db(args))
    if args.round:
        store.start_round(_round_name(args.round))
    stop = threading.Event()

    def on_signal(signum, frame) -> None:
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def say(line: str) -> None:
        print(line, flush=True)
    cfg = RecorderConfig(host=host, port=port, username=args.user, password=password, tls=tls, prefix=args.prefix,
                         client_id=args.client_id)
    rec = Recorder(cfg, store, log=say).start()
    srv = None
    try:
        if web is not None:
            from board_driver.club.web import serve
            try:
                srv = serve(store, *web)
            except OSError as exc:
                raise BoardDriverError(f"--web {args.web}: cannot listen: {exc.strerror or exc}") from None
            say(f"recorder: the boards' page is at http://{web[0]}:{srv.server_address[1]}/")
        say(f"recorder: storing into {store.path}; broker {host}:{port}")
        while not stop.wait(1.0):
            pass
    finally:
        if srv is not None:
            srv.shutdown()
        rec.close()
        store.close()
    say(f"recorder: stopped ({rec.stored} records stored this run).")
    return 0
