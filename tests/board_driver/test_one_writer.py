"""Only ``board_driver/referee/`` changes a game's state (DESIGN.md, *One writer*): every other
module calls the session's intents (``take_back``, ``adopt``, ``resign``, ``agree_draw``,
``pause_clock``, ``expect_only``, ``notify`` ...) and never writes the session's parts.

Read from the source with :mod:`ast`. A *session* is a name ``session``, an attribute
``.session`` (``self.session``, ``host.session``), a parameter annotated ``Session``, or a name
bound to what a call returns that makes a session (``Session(...)``, or any function of the
package annotated ``-> Session``: ``s = resume(...)``); a *part*
is an attribute reached through one (``session.game``, ``session.time.clock``) or a local name
bound to such an attribute (``g = session.game``). The check fails on

* an assignment, augmented assignment or ``del`` whose target is an attribute or item of a
  session or of a part (``session.recover = True``, ``session.bases.only = x``,
  ``session.time.paused = True``), or ``setattr(session, ...)``;
* a call of a mutating method on a part (``session.marks.pop()``, ``session.journal.write(...)``,
  ``g.resign(side)``, ``session.notices.append(...)``, ``session.clock.start(...)``).

Calls of the session's own methods (``session.commit``, ``session.take_back``) are its intents
and are allowed; so is reading any part.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "board_driver" / "referee"

MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "popleft", "clear", "update", "add", "discard",
    "setdefault", "write", "write_all", "sync", "flush", "push", "resign", "unresign", "start", "stop",
    "adjust", "switch", "restore", "record", "invalidate", "seed", "attach", "close", "feed", "advance",
    "forget_before",
})


def _is_session(node: ast.AST, sessions: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in sessions
    return isinstance(node, ast.Attribute) and node.attr == "session"


def _root_part(node: ast.AST, sessions: set[str], parts: set[str]) -> bool:
    """``node`` is a session or reached from one (through attributes and items), or a part's alias."""
    while True:
        if _is_session(node, sessions):
            return True
        if isinstance(node, ast.Name):
            return node.id in parts
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
            continue
        return False


def _is_part(node: ast.AST, sessions: set[str], parts: set[str]) -> bool:
    """``node`` is a part of a session (not the session itself)."""
    if isinstance(node, ast.Name):
        return node.id in parts
    if isinstance(node, (ast.Attribute, ast.Subscript)) and not _is_session(node, sessions):
        return _root_part(node.value, sessions, parts)
    return False


def _own_nodes(scope: ast.AST):
    """The nodes of one function (or of the module), not those of the functions inside it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _session_makers() -> frozenset[str]:
    """The package's functions annotated to return a Session."""
    out = {"Session"}
    for path in (ROOT / "board_driver").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None \
                    and ast.unparse(node.returns).strip("'\"").split(".")[-1] == "Session":
                out.add(node.name)
    return frozenset(out)


MAKERS = _session_makers()


def _makes_session(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    if isinstance(f, ast.BoolOp):           # (cls or Session)(...)
        return any(isinstance(v, ast.Name) and v.id in MAKERS for v in f.values)
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return name in MAKERS


def _writes(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                          ast.ClassDef))]
    scopes.append(tree)                 # module level
    for scope in scopes:
        sessions = {"session"}
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for a in scope.args.args + scope.args.kwonlyargs + scope.args.posonlyargs:
                ann = ast.unparse(a.annotation) if a.annotation is not None else ""
                if ann.strip("'\"").split(".")[-1] == "Session":
                    sessions.add(a.arg)
        parts: set[str] = set()
        body = list(_own_nodes(scope))
        for node in body:               # s = Session(...), s = resume(...)
            if isinstance(node, ast.Assign) and _makes_session(node.value):
                sessions.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in body:               # aliases: g = session.game, bases = session.bases
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Attribute, ast.Subscript)) \
                    and _root_part(node.value, sessions, parts) and not _is_session(node.value, sessions):
                parts.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in body:
            targets: list[ast.AST] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = list(node.targets)
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, (ast.Attribute, ast.Subscript)) and _root_part(el.value, sessions, parts):
                        out.append((node.lineno, ast.unparse(el)))
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Name) and f.id == "setattr" and node.args \
                        and _root_part(node.args[0], sessions, parts):
                    out.append((node.lineno, ast.unparse(node)))
                elif isinstance(f, ast.Attribute) and f.attr in MUTATORS and _is_part(f.value, sessions, parts):
                    out.append((node.lineno, ast.unparse(f)))
    return sorted(set(out))


def _violations() -> list[str]:
    out = []
    for path in sorted((ROOT / "board_driver").rglob("*.py")):
        if OWNER in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT)
        out.extend(f"{rel}:{line}: {what}" for line, what in _writes(tree))
    return out


def test_no_module_outside_the_referee_writes_a_sessions_state():
    assert _violations() == []


SAMPLE = '''
def helper(session, host, s: "Session"):
    session.recover = True
    session.bases.only = None
    host.session.time.paused = True
    session.marks.pop()
    session.journal.write({"type": "pop"}, sync=False)
    g = session.game
    g.resign(0)
    s.notices.append("x")
    session.marks[-1] = 3
    setattr(session, "choice", "q")
    session.take_back(1)
    copy = session.game.copy()
    copy.pop()
    self.session = session
    made = resume(store, "id")
    made.players = {}
    fresh = (cls or Session)(game)
    fresh.marks[:] = []
'''


def test_the_check_sees_each_kind_of_write_and_allows_intents_and_copies():
    found = [what for _, what in _writes(ast.parse(SAMPLE))]
    assert found == [
        "session.recover", "session.bases.only", "host.session.time.paused", "session.marks.pop",
        "session.journal.write", "g.resign", "s.notices.append", "session.marks[-1]",
        "setattr(session, 'choice', 'q')", "made.players", "fresh.marks[:]",
    ]
