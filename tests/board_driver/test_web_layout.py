"""The page's code by job, read from the source and the application (issue 40, *The page's
server by feature*):

* nothing in ``board_driver/cli/`` or ``board_driver/web/`` wires objects by setting their
  attributes after they were made: read with :mod:`ast`, every attribute an assignment sets
  (``x.a = ...``, ``x.a += ...``, ``x.a: T = ...``, in tuple targets too, or
  ``setattr(x, ...)``) must be one of ``self``'s or ``cls``'s. ``front.server.tools = ...``, ``self.bridge.lobby = ...``,
  ``host.say = ...`` or ``prompter.stopping = ...`` all fail, whether the object was made in
  the same function or handed in; a handful of exceptions are listed below with their reason.
  Calls are not checked: a method that changes its own object is that object's business;
* every route is registered by the feature module that serves it, through ``init_app``, and
  the server's table of URLs and methods is the documented one (docs/web.md);
* ``web/bridge.py`` holds the bridge alone: the tokens and login limiter, pairing and the
  devices live in modules of their own.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("board_driver/cli", "board_driver/web")

# (file, target) -> why the attribute may be set there
ALLOWED = {
    ("board_driver/cli/__init__.py", "sub.required"):
        "argparse's sub-parsers object, made on the line before (its documented idiom)",
    ("board_driver/cli/games_cmds.py", "gsub.required"):
        "argparse's sub-parsers object, made on the line before (its documented idiom)",
    ("board_driver/web/service.py", "state['script'].inner"):
        "--events: the script goes on on the next game's board (sim/events.py's ScriptedSource)",
}


def _targets(node: ast.AST) -> list[ast.expr]:
    todo: list[ast.expr]
    if isinstance(node, ast.Assign):
        todo = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        todo = [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        todo = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        todo = [item.optional_vars for item in node.items if item.optional_vars is not None]
    else:
        return []
    out = []
    while todo:
        t = todo.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            todo.extend(t.elts)
        elif isinstance(t, ast.Starred):
            todo.append(t.value)
        else:
            out.append(t)
    return out


def _own(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def foreign_attribute_writes(source: str) -> list[tuple[int, str]]:
    """(line, target) of every assignment to an attribute of anything but ``self`` or ``cls``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and node.args and not _own(node.args[0]):
            out.append((node.lineno, ast.unparse(node)))
        for t in _targets(node):
            if not isinstance(t, ast.Attribute):
                continue
            if _own(t.value):
                continue
            out.append((t.lineno, ast.unparse(t)))
    return sorted(out)


def test_the_scan_sees_wiring_after_construction():
    code = """
def serve(front, stop):
    host = GameHost(store)
    host.say = front.speaker(say)
    front.server.tools = SimTools(profile)
    self.bridge.lobby = invitations.status
    a, front.bridge.link = 1, host.link
    x.n += 1
    setattr(host, "stopping", stop.is_set)

class Thing:
    def __init__(self, inner):
        self.inner = inner
        self.count: int = 0
    def bump(self):
        self.count += 1
        setattr(self, "count", 0)
        self.inner.show(1)
"""
    assert [t for _, t in foreign_attribute_writes(code)] == [
        "host.say", "front.server.tools", "self.bridge.lobby", "front.bridge.link", "x.n",
        "setattr(host, 'stopping', stop.is_set)"]


def test_the_front_ends_wire_nothing_after_construction():
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, target in foreign_attribute_writes(path.read_text(encoding="utf-8")):
                if (rel, target) not in ALLOWED:
                    found.append(f"{rel}:{line}: {target} = ...")
    assert found == [], ("set through the constructor instead (the composition root makes the objects in "
                         "order and hands each what it needs):\n" + "\n".join(found))


# -- the routes, by feature ------------------------------------------------------------------------

ROUTES = {
    "files": {("GET", "/"), ("GET", "/static/{name}")},
    "game": {("GET", "/api/state"), ("GET", "/api/ws"), ("POST", "/api/command"), ("POST", "/api/new"),
             ("POST", "/api/sim")},
    "variants": {("GET", "/api/variants"), ("GET", "/api/cost"), ("GET", "/api/schedule")},
    "board_tools": {("GET", "/api/hardware"), ("POST", "/api/hardware/selftest"), ("GET", "/api/calibrate"),
              ("POST", "/api/calibrate/start"), ("POST", "/api/calibrate/answer"), ("POST", "/api/calibrate/stop")},
    "games": {("GET", "/api/games"), ("GET", "/api/games/{id}"), ("GET", "/api/games/{id}/pgn"),
              ("POST", "/api/games/{id}/analyse"), ("GET", "/api/games/{id}/analysis"), ("POST", "/api/eval")},
    "remote_lobby": {("GET", "/api/remote/boards"), ("POST", "/api/remote/invite"), ("POST", "/api/remote/accept"),
               ("POST", "/api/remote/decline"), ("POST", "/api/remote/cancel")},
    "login": {("POST", "/api/pair"), ("GET", "/api/pair/{id}"), ("POST", "/api/login")},
    "tokens": {("GET", "/api/tokens"), ("POST", "/api/tokens/revoke")},
}


def _app(tmp_path):
    from board_driver.journal import GameStore
    from board_driver.web.analyses import GameAnalyses
    from board_driver.web.app import init_app
    from board_driver.web.auth import LoginLimiter
    from board_driver.web.bridge import WebBridge
    from board_driver.web.catalog import Catalog
    from board_driver.web.context import AppContext, Sockets, ToolDesk
    from board_driver.web.hosts import HostNames
    store = GameStore(tmp_path)
    ctx = AppContext(bridge=WebBridge(), store=store, hosts=HostNames(), sockets=Sockets(),
                     analyses=GameAnalyses(store), logins=LoginLimiter(), desk=ToolDesk(),
                     catalog=Catalog([], {"computer": []}), static=tmp_path)
    return init_app(ctx)


def test_every_route_is_registered_by_its_feature_module(tmp_path):
    app = _app(tmp_path)
    served: dict[str, set[tuple[str, str]]] = {}
    for route in app.router.routes():
        if route.method == "HEAD":
            continue                        # aiohttp's own, beside every GET
        info = route.resource.get_info() if route.resource is not None else {}
        path = str(info.get("path") or info.get("formatter"))
        module = route.handler.__module__
        assert module.startswith("board_driver.web.routes."), (route.method, path, module)
        served.setdefault(module.rsplit(".", 1)[1], set()).add((route.method, path))
    assert served == ROUTES
    assert sum(len(r) for r in ROUTES.values()) == 32


def test_the_server_module_registers_no_route_itself():
    tree = ast.parse((ROOT / "board_driver/web/server.py").read_text(encoding="utf-8"))
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not calls & {"add_get", "add_post", "add_route", "add_routes"}


def test_the_bridge_module_holds_the_bridge_alone():
    tree = ast.parse((ROOT / "board_driver/web/bridge.py").read_text(encoding="utf-8"))
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert classes == {"Notices", "WebBridge"}
    from board_driver.web import auth, board_io, pairing
    assert {"TokenStore", "Backoff", "LoginLimiter"} <= set(vars(auth))
    assert {"Pairings", "Pairing", "PairingBusy"} <= set(vars(pairing))
    assert {"OverlaySink", "WebSource"} <= set(vars(board_io))
