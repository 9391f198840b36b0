"""The layers as one test: who may import whom (docs/architecture.md, "Layers").

The packages stand in an order: the core (``headd`` without its daemon: the record, the memory
file formats, the store, the head, the wire) under the SQLite plane (``headd_plane``) under the
daemon (``headd.daemon``), with the client (``headd_client``) beside the daemon, talking to it
over the wire. A layer imports only what stands below it, and nothing anywhere imports in a
circle, counting the imports inside functions too (a function-local import that closes a circle
is still a circle, only a slower one to find). The imports are read from the source (``ast``), so
the test sees every module, including ones no other test imports.

Seen red: with ``headd/memfile/vocabulary.py`` importing ``headd.record`` again (the circle this
layout removed), with ``headd/remote/replay.py`` importing ``headd_plane.sidecar``, with
``headd_plane/calls.py`` importing ``headd.daemon.plane_service`` and with
``headd_client/mcp/tools.py`` importing ``headd_plane.recall``, and with ``headd/wire/answers.py``
importing ``headd.remote.sync`` for ``sync``'s answer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "headd": ROOT / "headd",
    "headd_plane": ROOT / "sqlite_plane" / "headd_plane",
    "headd_client": ROOT / "client" / "headd_client",
}

#: What each layer must not import.
FORBIDDEN = {
    "core": {"plane", "daemon", "client"},
    "plane": {"daemon", "client"},
    "daemon": {"client"},
    "client": {"daemon"},
}

#: Outside the plane itself, the modules that compose it into a running program: the daemon
#: (every module of ``headd.daemon``), and headctl's no-daemon path, which answers through the
#: plane's one dispatcher as the daemon does. The set only ever shrinks.
PLANE_USERS = {"headd_client.plane_local"}

#: The client talks to the store through the daemon or the core's own functions, never to git or
#: SQLite itself (the set of exceptions is empty, and stays so).
STORAGE_LIBRARIES = {"pygit2", "sqlite3"}
CLIENT_STORAGE_USERS: set[str] = set()


def layer_of(module: str) -> str:
    if module.startswith("headd_client"):
        return "client"
    if module.startswith("headd_plane"):
        return "plane"
    if module == "headd.daemon" or module.startswith("headd.daemon."):
        return "daemon"
    return "core"


@cache
def modules() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    found: dict[str, Path] = {}
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported_names(module: str, path: Path) -> Iterator[str]:
    """Every dotted name ``module`` imports, anywhere in its body (``from p import sub`` names
    the submodule ``p.sub``, not the package: that is the idiom, not a dependency on ``p``)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                yield f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules() else source


@cache
def graph() -> dict[str, frozenset[str]]:
    """Module to the modules of the three packages it imports."""
    known = modules()
    edges: dict[str, frozenset[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in _imported_names(module, path):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        edges[module] = frozenset(targets)
    return edges


def circles(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_the_three_packages_are_read() -> None:
    names = modules()
    assert {"headd.record", "headd.daemon.handlers", "headd_plane.plane"} <= names.keys()
    assert "headd_client.protocol" in names


def test_no_layer_imports_one_above_it() -> None:
    crossings = [
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in graph().items()
        for target in sorted(targets)
        if layer_of(target) in FORBIDDEN[layer_of(module)]
    ]
    assert crossings == []


def test_the_plane_imports_no_daemon_and_no_client() -> None:
    """The plane stands under the daemon and beside nothing of the client: its Structs come from
    the wire below it, and a plane importing the daemon would close a circle through it."""
    crossings = {
        f"{module} imports {target}"
        for module, targets in graph().items()
        if layer_of(module) == "plane"
        for target in targets
        if layer_of(target) in ("daemon", "client")
    }
    assert crossings == set()


def test_only_the_composition_roots_import_the_plane() -> None:
    users = {
        module
        for module, targets in graph().items()
        if layer_of(module) not in ("plane", "daemon")
        and any(layer_of(t) == "plane" for t in targets)
    }
    assert users <= PLANE_USERS


def test_the_client_imports_neither_git_nor_sqlite() -> None:
    users = {
        module
        for module, path in modules().items()
        if layer_of(module) == "client"
        and any(name.split(".")[0] in STORAGE_LIBRARIES for name in _imported_names(module, path))
    }
    assert users <= CLIENT_STORAGE_USERS


def test_the_wire_imports_neither_the_remote_nor_git() -> None:
    """The wire is what both ends of the socket share: the remote's answers are Structs of the
    wire that the remote builds, never the other way round, so a client that reads
    ``status.remote`` or ``sync``'s answer loads no git (function-local imports count too)."""
    users = {
        f"{module} imports {name}"
        for module, path in modules().items()
        if module.startswith("headd.wire.")
        for name in _imported_names(module, path)
        if name.split(".")[0] in STORAGE_LIBRARIES or name.startswith("headd.remote")
    }
    assert users == set()


def test_no_module_imports_in_a_circle() -> None:
    assert circles(graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    """The check bites: a three-module circle and a two-module one are both reported."""
    edges = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a", "d"}),
        "d": frozenset({"e"}),
        "e": frozenset({"d"}),
        "f": frozenset(),
    }
    assert sorted(circles(edges)) == [["a", "b", "c"], ["d", "e"]]
