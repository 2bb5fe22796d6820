"""The shape of ``board_driver``: imports point one way and no module reaches into another's
private names (DESIGN.md, *The third wave*).

Read from the source with :mod:`ast`, so a lazy import inside a function counts as much as one
at the top of a module: a circle hidden in a function is still a circle.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "firmware_bridge", "board_driver")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(mod: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    if node.level > 1:
        base = base[:-(node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _target(name: str) -> str | None:
    """The project module an imported name lives in (a package's module, or the package)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _runtime_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:`` (imports for annotations only)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", getattr(child.test, "attr", "")) == "TYPE_CHECKING":
                todo.extend(child.orelse)
                continue
            todo.append(child)


@functools.lru_cache(maxsize=None)
def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in MODULES.items():
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, path, node)
                names = [f"{base}.{a.name}" for a in node.names]
            for n in names:
                t = _target(n)
                if t is not None and t != mod and not mod.startswith(t + "."):
                    graph[mod].add(t)        # a package's own __init__ is not an edge back
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_anywhere_in_the_packages():
    assert _cycles(_imports()) == []


def test_the_cycle_finder_sees_a_circle_through_a_lazy_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("low, high", [
    ("engine", "board_driver"), ("engine", "firmware_bridge"), ("firmware_bridge", "board_driver"),
    ("firmware_bridge", "engine"),
    ("board_driver.web", "board_driver.cli"), ("board_driver.club", "board_driver.cli"),
    ("board_driver.host", "board_driver.cli"), ("board_driver.referee", "board_driver.cli"),
    ("board_driver.referee", "board_driver.host"), ("board_driver.referee", "board_driver.web"),
    ("board_driver.referee", "board_driver.opponents"), ("board_driver.referee", "board_driver.club"),
    ("board_driver.sim", "board_driver.host"), ("board_driver.opponents", "board_driver.host"),
    ("board_driver.web", "board_driver.club"), ("board_driver.club", "board_driver.web"),
    ("board_driver.maintenance", "board_driver.cli"), ("board_driver.maintenance", "board_driver.host"),
    ("board_driver.remote", "board_driver.cli"), ("board_driver.remote", "board_driver.web"),
    ("board_driver.remote", "board_driver.host"), ("board_driver.referee", "board_driver.remote"),
    ("board_driver.opponents", "board_driver.remote"), ("board_driver.club", "board_driver.remote"),
])
def test_imports_point_down(low, high):
    graph = _imports()
    bad = sorted(f"{m} -> {t}" for m, ts in graph.items() if m == low or m.startswith(low + ".")
                 for t in ts if t == high or t.startswith(high + "."))
    assert bad == []


# -- private names ------------------------------------------------------------------------------
# names with a leading underscore that the standard library gives public meaning to
STDLIB_PRIVATE = {"_replace", "_asdict", "_fields", "_make", "_field_defaults", "_value_", "_name_",
                  "_missing_", "_generate_next_value_", "_member_map_", "_exit"}


def _defined_private(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, methods, attributes set on self."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


def _private_reaches() -> list[str]:
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in MODULES.items()}
    defined = {m: _defined_private(t) for m, t in trees.items()}
    out = []
    for mod, tree in trees.items():
        if not mod.startswith("board_driver"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        out.append(f"{mod}:{node.lineno}: from {node.module} import {a.name}")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and node.attr not in STDLIB_PRIVATE:
                owner = node.value
                if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                    continue
                if node.attr in defined[mod]:
                    continue            # the module's own private name (another instance of its class)
                if any(node.attr in names for m, names in defined.items() if m != mod):
                    out.append(f"{mod}:{node.lineno}: .{node.attr}")
    return out


def test_no_module_reaches_into_another_modules_private_names():
    assert _private_reaches() == []


# -- one name per idea -----------------------------------------------------------------------------

def test_no_two_public_classes_share_a_name_across_the_packages():
    seen: dict[str, list[str]] = defaultdict(list)
    for mod, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen[node.name].append(mod)
    assert {name: mods for name, mods in seen.items() if len(mods) > 1} == {}


def test_no_two_modules_of_board_driver_share_a_file_name():
    seen: dict[str, list[str]] = defaultdict(list)
    for mod, path in MODULES.items():
        if mod.startswith("board_driver") and path.name != "__init__.py":
            seen[path.name].append(mod)
    assert {name: mods for name, mods in seen.items() if len(mods) > 1} == {}
