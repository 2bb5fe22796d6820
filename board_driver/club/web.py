"""``fairyboard recorder --web HOST:PORT``: every board on one page, and the PGN feeds.

==========================  ===============================================================
``/``                       every board: its position, last move and when, result, presence
``/boards.html``            the same boards as an HTML fragment (the page reloads it each second)
``/boards.json``            the same as JSON
``/board/NAME.pgn``         the board's latest game (the live feed broadcast sites poll)
``/board/NAME/GAME.pgn``    one game of the board
``/board/NAME/GAME.jsonl``  the game's journal as the board wrote it (its contiguous part)
``/round/NAME.pgn``         every game of round NAME (``fairyboard round NAME`` starts one)
``/rounds.json``            the rounds and their games
==========================  ===============================================================

The page draws each board with the board page's own component (``board_driver/web/frontend/
src/board.js``, bundled into ``static/club.js`` by ``board_driver/club/frontend``) and refreshes
from ``/boards.json`` every second; the first answer (and a browser without scripts) has the
boards drawn on the server, one table per board. A PGN holds the contiguous part of a game:
records past a hole wait for the re-send.
"""

from __future__ import annotations

import html
import json
import logging
import math
import socket
import threading
import time
import urllib.parse
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, cast

from board_driver.club.store import RecorderStore
from board_driver.journal import GameRecord, record_from
from board_driver.connections import RefusalLog, WebLimits, client_key, open_files, room_for

if TYPE_CHECKING:
    from engine.contract import Game

SYMBOLS = {("K", 0): "\u2654", ("Q", 0): "\u2655", ("R", 0): "\u2656", ("B", 0): "\u2657", ("N", 0): "\u2658",
           ("P", 0): "\u2659", ("K", 1): "\u265a", ("Q", 1): "\u265b", ("R", 1): "\u265c", ("B", 1): "\u265d",
           ("N", 1): "\u265e", ("P", 1): "\u265f"}


def game_record(board: str, game: str, records: list[dict]) -> GameRecord | None:
    """A GameRecord from a game's stored records, folded as ``journal.load_record`` folds a
    file (the store's records are the journal's lines in order, so record i is line i + 1)."""
    if not records or records[0].get("type") != "game":
        return None
    return record_from(Path(board) / f"{game}.jsonl", records, lines=list(range(1, len(records) + 1)))


def club_game_id(board: str, game: str) -> str:
    """A game's id in the club: ``BOARD/GAME``. A board's own ids are its start times to the
    second, so boards started together share one; with the board's name (which has no ``/``,
    nor has a game id) it is unique in the club and reads back unambiguously."""
    return f"{board}/{game}"


def pgn(board: str, rec: GameRecord, round_name: str | None = None, game: str | None = None) -> str:
    """The game's PGN (``fairyboard games export``'s), with the club's Event, Site and Round,
    and ``GameId`` the club's id ``BOARD/GAME``."""
    from board_driver.pgn import pgn_of
    text = pgn_of(rec)
    tags = {"Event": round_name or "fairyboard club", "Site": board, "Round": round_name or "-",
            "GameId": club_game_id(board, game or rec.id)}
    out = []
    for line in text.split("\n"):
        for k, v in tags.items():
            if line.startswith(f"[{k} "):
                line = f'[{k} "{_tag(v)}"]'
        out.append(line)
    return "\n".join(out)


def _tag(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"')


class Positions:
    """Replays games to their positions and PGN, remembering the last answer per game (until
    more of it arrives)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], tuple[tuple, dict]] = {}
        self._pgn: dict[tuple[str, str], tuple[tuple, str | None, str | None]] = {}
        self._lock = threading.Lock()

    def pgn(self, store: RecorderStore, g: dict, round_name: str | None) -> str | None:
        """The game's PGN, None while its header is missing."""
        key = (g["board"], g["game"])
        with self._lock:
            hit = self._pgn.get(key)
        version = (g["contig"], g["updated_at"])
        if hit is not None and hit[:2] == (version, round_name):
            return hit[2]
        rec = game_record(g["board"], g["game"], store.records(g["board"], g["game"]))
        text = pgn(g["board"], rec, round_name, g["game"]) if rec is not None else None
        with self._lock:
            self._pgn[key] = (version, round_name, text)
        return text

    def of(self, store: RecorderStore, g: dict) -> dict:
        key = (g["board"], g["game"])
        with self._lock:
            hit = self._cache.get(key)
        version = (g["contig"], g["updated_at"])     # a replaced line folds the game again
        if hit is not None and hit[0] == version:
            return hit[1]
        out: dict = {}
        try:
            rec = game_record(g["board"], g["game"], store.records(g["board"], g["game"]))
            if rec is None:
                raise ValueError("its header has not arrived yet")
            from board_driver.config import load_variant
            from engine.game import new_game
            game = new_game(load_variant(rec.variant), rec.header.get("start_fen"))
            for text in rec.actions:
                game.push(game.parse(text))
            geo = game.geometry
            out = {"fen": game.fen(), "files": geo.files, "ranks": geo.ranks,
                   "holes": [geo.name(sq) for sq in sorted(getattr(geo, "holes", ()) or ())],
                   "pieces": {geo.name(sq): letter.upper() if colour == 0 else letter.lower()
                              for sq, (letter, colour) in game.piece_map().items()},
                   "catalog": _catalog(game)}
            clock = clock_of(rec)
            if clock is not None:
                out["clock"] = clock
        except Exception as exc:         # an unknown variant, a bad record: say so on the page
            out = {"error": f"{type(exc).__name__}: {exc}"}
        with self._lock:
            self._cache[key] = (version, out)
        return out


def clock_of(rec) -> dict | None:
    """The game's time control and both clocks as its last timed record left them (the board
    journals them with every action: ``clk`` is [white ms, black ms]), or None without a clock."""
    tc = (rec.header.get("clock") or {}).get("tc") if isinstance(rec.header.get("clock"), dict) else None
    if not tc or tc == "-":
        return None
    for r in reversed(rec.records):
        clk = r.get("clk")
        if isinstance(clk, list) and len(clk) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in clk):
            return {"tc": str(tc), "white_ms": max(0, clk[0]), "black_ms": max(0, clk[1])}
    return {"tc": str(tc)}


def _hms(ms: int) -> str:
    s = ms // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" + (f".{ms % 1000 // 100}" if ms < 10_000 else "")


def clock_html(clock: dict | None) -> str:
    if not clock:
        return ""
    if "white_ms" not in clock:
        return f'<p class="clocks">time control {html.escape(clock["tc"])}</p>'
    return (f'<p class="clocks">clocks after the last move: white <b class="clk-white">{_hms(clock["white_ms"])}</b>'
            f' &middot; black <b class="clk-black">{_hms(clock["black_ms"])}</b> ({html.escape(clock["tc"])})</p>')


def _catalog(game: Game) -> list[dict]:
    """The game's pieces for the drawing (as the board's own page gives them)."""
    try:
        from board_driver.referee.texts import catalog
        return catalog(game, {})
    except ImportError:
        return [{"letter": p.letter, "name": p.name.replace("-", " "), "royal": bool(getattr(p, "royal", False))}
                for p in game.variant.pieces]


def _when(t: float | None) -> str:
    if t is None:
        return "-"
    ago = max(0, int(time.time() - t))
    clock = datetime.fromtimestamp(t).strftime("%H:%M:%S")
    return f"{clock} ({ago // 60} min {ago % 60} s ago)" if ago >= 60 else f"{clock} ({ago} s ago)"


def board_html(pos: dict) -> str:
    if "error" in pos:
        return f'<p class="err">position unavailable: {html.escape(pos["error"])}</p>'
    files, ranks, pieces, holes = pos["files"], pos["ranks"], pos["pieces"], set(pos.get("holes") or ())
    rows = []
    for r in range(ranks - 1, -1, -1):
        cells = []
        for f in range(files):
            name = f"{chr(97 + f)}{r + 1}"
            p = pieces.get(name)
            shade = "d" if (f + r) % 2 == 0 else "l"
            if name in holes:
                cells.append('<td class="hole"></td>')
            elif p is None:
                cells.append(f'<td class="{shade}"></td>')
            else:
                colour = 0 if p.isupper() else 1
                sym = SYMBOLS.get((p.upper(), colour)) or p
                side = "w" if colour == 0 else "b"
                cells.append(f'<td class="{shade} {side}" title="{name}">{html.escape(sym)}</td>')
        rows.append(f'<tr><th>{r + 1}</th>{"".join(cells)}</tr>')
    rows.append("<tr><th></th>" + "".join(f"<th>{chr(97 + f)}</th>" for f in range(files)) + "</tr>")
    return f'<table class="board" data-fen="{html.escape(pos["fen"])}">{"".join(rows)}</table>'


def boards_data(store: RecorderStore, positions: Positions) -> list[dict]:
    out = []
    for b in store.boards():
        d = {"board": b["board"], "online": b["online"], "health": b["health"]}
        g = b.get("game")
        if g is not None:
            d["game"] = {k: g[k] for k in ("game", "variant", "players", "date", "actions", "last_action",
                                           "last_move_at", "result", "reason", "contig", "known")}
            d["game"]["id"] = club_game_id(b["board"], g["game"])
            d["game"]["missing"] = max(0, g["known"] - g["contig"], g["max_seq"] + 1 - g["contig"])
            d["position"] = positions.of(store, g)
        out.append(d)
    return out


def boards_fragment(data: list[dict]) -> str:
    if not data:
        return '<p>No board has reported yet.</p>'
    parts = []
    for d in data:
        name = html.escape(d["board"])
        online = {True: "online", False: "OFFLINE", None: "?"}[d["online"]]
        g = d.get("game")
        if g is None:
            parts.append(f'<section class="card"><h2>{name} <small>{online}</small></h2><p>no game yet</p></section>')
            continue
        pl = g["players"] or {}
        result = g["result"] or "playing"
        if g["reason"]:
            result += f" ({g['reason']})"
        missing = f' <span class="err">{g["missing"]} record(s) awaited</span>' if g["missing"] else ""
        parts.append(
            f'<section class="card" id="board-{name}"><h2>{name} <small class="{online.lower()}">{online}</small></h2>'
            f'<p class="players">{html.escape(str(pl.get("white", "?")))} - {html.escape(str(pl.get("black", "?")))}'
            f' &middot; {html.escape(str(g["variant"]))}</p>'
            f'{board_html(d.get("position") or {"error": "no position"})}'
            f'{clock_html((d.get("position") or {}).get("clock"))}'
            f'<p>last move: <b class="last">{html.escape(str(g["last_action"] or "-"))}</b> at '
            f'<span class="clock">{_when(g["last_move_at"])}</span>, {g["actions"]} actions</p>'
            f'<p>result: <b class="result">{html.escape(result)}</b>{missing}</p>'
            f'<p class="links"><a href="/board/{urllib.parse.quote(d["board"])}.pgn">PGN</a> '
            f'&middot; game {html.escape(g["game"])}</p></section>')
    return "\n".join(parts)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fairyboard club</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/club.css">
<style>
.board { border-collapse: collapse; }
.board td { width: 1.6em; height: 1.6em; text-align: center; font-size: 1.2em; line-height: 1; padding: 0; }
.board th { font-size: .65em; font-weight: normal; color: #666; }
.board td.l { background: #eed9b4; } .board td.d { background: #b58863; } .board td.hole { background: #3a3a3a; }
</style></head>
<body><header><span id="conn" class="conn" title="live updates"></span> <b>fairyboard club</b>
<span class="spacer"></span><small>{rounds}</small></header>
<main class="club"><div id="boards">{boards}</div></main>
<script type="module" src="/static/club.js"></script>
</body></html>
"""


# The page's script and style: built from board_driver/club/frontend (the board drawing is the
# board page's own component), committed and shipped as package data.
STATIC = {"/static/club.js": "text/javascript; charset=utf-8", "/static/club.css": "text/css; charset=utf-8"}


class Handler(BaseHTTPRequestHandler):
    server_version = "fairyboard-recorder"
    store: RecorderStore
    positions: Positions

    def log_message(self, fmt, *args) -> None:
        pass

    def _send(self, code: int, body: str, ctype: str) -> None:
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(data)

    def _missing(self, what: str) -> None:
        self._send(404, f"{what}\n", "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        store, positions = self.store, self.positions
        try:
            if path == "/":
                rounds = store.rounds()
                links = " ".join(f'<a href="/round/{urllib.parse.quote(n)}.pgn">{html.escape(n)}</a>'
                                 for n, _ in rounds)
                page = PAGE.replace("{rounds}", f"Rounds (PGN): {links}" if rounds else "No round started.")
                page = page.replace("{boards}", boards_fragment(boards_data(store, positions)))
                self._send(200, page, "text/html; charset=utf-8")
            elif path in STATIC:
                data = (Path(__file__).with_name("static") / path.rsplit("/", 1)[1]).read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", STATIC[path])
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "max-age=300")
                self.end_headers()
                self.wfile.write(data)
            elif path == "/boards.html":
                self._send(200, boards_fragment(boards_data(store, positions)), "text/html; charset=utf-8")
            elif path == "/boards.json":
                self._send(200, json.dumps(boards_data(store, positions)), "application/json")
            elif path == "/rounds.json":
                out = [{"round": n, "started_at": t, "games": [{"board": g["board"], "game": g["game"],
                                                                "id": club_game_id(g["board"], g["game"])}
                                                               for g in store.round_games(n) or []]}
                       for n, t in store.rounds()]
                self._send(200, json.dumps(out), "application/json")
            elif path.startswith("/round/") and path.endswith(".pgn"):
                name = path[len("/round/"):-4]
                games = store.round_games(name)
                if games is None:
                    known = ", ".join(n for n, _ in store.rounds()) or "none yet"
                    return self._missing(f"no round {name!r} (rounds: {known})")
                texts = []
                for g in games:         # a game that does not replay leaves out itself only
                    try:
                        t = positions.pgn(store, g, name)
                    except Exception:
                        t = None
                    if t is not None:
                        texts.append(t)
                self._send(200, "\n".join(texts), "application/x-chess-pgn; charset=utf-8")
            elif path.startswith("/board/") and path.endswith(".jsonl") and path.count("/") == 3:
                board, game = path[len("/board/"):-len(".jsonl")].split("/")
                lines = store.journal_lines(board, game)
                if not lines:
                    return self._missing(f"board {board!r} has no game {game!r}")
                self._send(200, "\n".join(lines) + "\n", "application/x-ndjson; charset=utf-8")
            elif path.startswith("/board/") and path.endswith(".pgn"):
                rest = path[len("/board/"):-4]
                board, _, game = rest.partition("/")
                games = store.games(board)
                if not games:
                    return self._missing(f"no board {board!r} has reported")
                if game:
                    match = [g for g in games if g["game"] == game]
                    if not match:
                        return self._missing(f"board {board!r} has no game {game!r}")
                    g = match[0]
                else:
                    g = max(games, key=lambda g: (g["date"] or "", g["first_seen"]))
                text = positions.pgn(store, g, _round_of(store, g))
                if text is None:
                    return self._missing(f"game {g['game']!r} of board {board!r}: its header has not arrived yet")
                self._send(200, text, "application/x-chess-pgn; charset=utf-8")
            else:
                self._missing(f"no page {path!r}: try /, /boards.json, /board/NAME.pgn or /round/NAME.pgn")
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:        # a game that does not replay: say which, keep serving
            self._send(500, f"{path}: {type(exc).__name__}: {exc}\n", "text/plain; charset=utf-8")


def _round_of(store: RecorderStore, g: dict) -> str | None:
    name = None
    for n, t in store.rounds():
        if t <= g["first_seen"]:
            name = n
    return name


class LimitedServer(ThreadingHTTPServer):
    """A thread per connection, as many as ``limits`` allow (docs/club.md, *The page's
    connections*): ``per_client`` from one client and ``connections`` in total (cut down to
    what the open-file limit leaves, as the board's page does); over either a connection is
    answered 503 and closed unread, one log line per kind a minute. A connection that sends
    nothing for ``header_timeout`` is closed (each request is one connection: HTTP/1.0)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], limits: WebLimits,
                 refusals: RefusalLog | None = None):
        self.limits = limits
        self.total = room_for(limits, open_files())
        self.per_client = min(limits.per_client, self.total)
        self.refusals = refusals if refusals is not None else RefusalLog(logging.getLogger("board_driver.club"))
        self._lock = threading.Lock()
        self._open: dict[object, str] = {}          # socket -> client
        self._by_client: dict[str, int] = {}
        super().__init__(address, handler)

    def verify_request(self, request, client_address) -> bool:
        key = client_key(str(client_address[0]) if client_address else None)
        with self._lock:
            mine = self._by_client.get(key, 0)
            if mine >= self.per_client:
                kind, error = "per_client", f"too many connections from your address ({self.per_client} at most)"
            elif len(self._open) >= self.total:
                kind, error = "total", f"the page has too many connections ({self.total} at most)"
            else:
                self._open[request] = key
                self._by_client[key] = mine + 1
                return True
        self.refusals.note(kind, f"the recorder's page refused a connection from {key}: {error}")
        body = json.dumps({"error": error + ": try again shortly"}).encode()
        try:
            sock = cast(socket.socket, request)     # a TCP server's request is its socket
            sock.setblocking(False)
            sock.send(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                         b"Retry-After: %d\r\nContent-Length: %d\r\n\r\n%s"
                         % (max(1, math.ceil(self.limits.header_timeout)), len(body), body))
        except OSError:
            pass
        return False

    def shutdown_request(self, request) -> None:
        with self._lock:
            key = self._open.pop(request, None)
            if key is not None:
                left = self._by_client.get(key, 1) - 1
                if left > 0:
                    self._by_client[key] = left
                else:
                    self._by_client.pop(key, None)
        super().shutdown_request(request)


def serve(store: RecorderStore, host: str, port: int, limits: WebLimits = WebLimits()) -> ThreadingHTTPServer:
    """Start the page's server in a thread; ``shutdown()`` it to stop."""
    handler = type("BoundHandler", (Handler,), {"store": store, "positions": Positions(),
                                                "timeout": limits.header_timeout})
    srv = LimitedServer((host, port), handler, limits)
    threading.Thread(target=srv.serve_forever, name="recorder-web", daemon=True).start()
    return srv
