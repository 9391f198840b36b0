"""Code-mode scripts, each under a fresh QuickJS runtime, in a worker process of their own.

``python -m headd.codemode.worker`` reads a :class:`Job` line (and the commit's corpus, JSON,
unless it holds that commit's already) from stdin, runs the script, and writes a :class:`Started`
line, a :class:`Chunk` line per write the script makes, then one :class:`Outcome` line, to
stdout; then it waits for the next job, up to :data:`MAX_JOBS`. The time bound is the runner's:
the engine cannot interrupt a script that calls into Python, so the runner kills the worker at
the deadline, and what the script printed until then has already reached it.

Each script gets a new engine context (its own runtime: its own heap, globals and prototypes),
so nothing a script does to its world outlives it; the worker process is the wall around the
daemon: a memory cap, a crash or a kill at the deadline costs the daemon nothing, and the
daemon's event loop and its search never share an interpreter lock with a running script. The
worker runs at the lowest priority, so a search outranks every script.

The script reaches the host through five functions, installed on the context's global object
and removed from it by the guest's prelude (``guest.js``) once it has captured them:

* ``__host_fs(op, path)``: ``list``, ``stat``, ``read``, ``read-bytes`` over the commit's tree,
  mounted at ``/mnt/memhtml``; any other path is ENOENT (``/etc/passwd``, a ``..`` escape, the
  store's ``.git``, which no commit's tree holds).
* ``__host_out(stream, text)``: stdout and stderr, each capped at ``output_bytes``.
* ``__host_corpus()``: the version's corpus as built by :mod:`headd.codemode.corpus`.
* ``__host_memory(path)``: one file's helper fields (``memoryAt``).
* ``__host_query(file, id, how, selector)``: the ``document`` escape hatch's selectors.

Each answers a JSON string, an error as ``{"error": code}``: a Python exception raised inside a
host function would reach the engine as a half-set error, so none is ever raised there.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import posixpath
import sys
from collections.abc import Callable
from importlib import resources
from typing import Any

import msgspec

from headd.codemode.imports import rewrite_imports
from headd.codemode.projection import fields_of

ROOT = "/mnt/memhtml"
EXIT_TIMEOUT = 124
#: Scripts one worker runs before it exits and the runner starts another: whatever the host
#: side holds on to across scripts stays bounded.
MAX_JOBS = 200


class Job(msgspec.Struct, frozen=True):
    """What the runner sends: the script and the bounds it runs within, then ``corpus_bytes``
    of the commit's corpus (0: the same commit's corpus as this worker's last job)."""

    script: str
    git_dir: str
    sha: str
    timeout_ms: int
    memory_bytes: int
    output_bytes: int
    corpus_bytes: int = 0


class Started(msgspec.Struct, frozen=True, tag=True):
    """The script is about to run: its deadline counts from here, not from the process start."""


class Chunk(msgspec.Struct, frozen=True, tag=True):
    """A write to stdout or stderr, sent as it happens."""

    stream: str
    text: str


class Outcome(msgspec.Struct, frozen=True, tag=True):
    """How the script ended, the worker's last line: ``failure`` is what goes to stderr."""

    exit_code: int
    timed_out: bool = False
    failure: str = ""


@functools.cache
def guest_source() -> str:
    return resources.files("headd.codemode").joinpath("guest.js").read_text("utf-8")


def _answer(value: object) -> str:
    return json.dumps({"value": value})


def _error(code: str) -> str:
    return json.dumps({"error": code})


@functools.cache
def _repository(git_dir: str) -> Any:
    """The store's object database, opened once per worker (a commit's objects never change)."""
    import pygit2

    return pygit2.Repository(git_dir)


class Tree:
    """The commit's tree as the guest's read-only file system under :data:`ROOT`."""

    def __init__(self, git_dir: str, sha: str) -> None:
        import pygit2

        self._repo = _repository(git_dir)
        self._root = self._repo[sha].peel(pygit2.Tree)
        self._tree_type = pygit2.Tree

    def entry(self, path: str) -> Any | None:
        """The tree or blob at a guest path, or None when the path is not in the commit."""
        if not path.startswith("/"):
            return None
        path = posixpath.normpath(path)
        if path == ROOT:
            return self._root
        if not path.startswith(ROOT + "/"):
            return None
        try:
            return self._root[path[len(ROOT) + 1 :]]
        except (KeyError, ValueError):
            return None

    def is_dir(self, entry: Any) -> bool:
        return isinstance(entry, self._tree_type)

    def call(self, op: str, path: str) -> str:
        entry = self.entry(path)
        if entry is None:
            return _error("ENOENT")
        directory = self.is_dir(entry)
        match op:
            case "list":
                if not directory:
                    return _error("ENOTDIR")
                return _answer(sorted(item.name for item in entry))
            case "stat":
                return _answer(["dir", 0] if directory else ["file", entry.size])
            case "read" | "read-bytes":
                if directory:
                    return _error("EISDIR")
                data = bytes(entry.data)
                if op == "read":
                    return _answer(data.decode("utf-8", errors="replace"))
                return _answer(data.decode("latin-1"))
        return _error("EINVAL")


class Documents:
    """The ``document`` escape hatch: each file parsed once, when a script first asks."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree
        self._nodes: dict[str, list[Any]] = {}

    def _root(self, file: str) -> list[Any] | None:
        nodes = self._nodes.get(file)
        if nodes is None:
            entry = self._tree.entry(file)
            if entry is None or self._tree.is_dir(entry):
                return None
            from selectolax.lexbor import LexborHTMLParser

            nodes = [LexborHTMLParser(bytes(entry.data).decode("utf-8", errors="replace"))]
            self._nodes[file] = nodes
        return nodes

    def _describe(self, nodes: list[Any], node: Any) -> dict[str, Any]:
        nodes.append(node)
        return {
            "id": len(nodes) - 1,
            "tag": node.tag,
            "attributes": {k: v or "" for k, v in node.attributes.items()},
            "text": node.text(deep=True) or "",
            "inner": node.inner_html or "",
            "outer": node.html or "",
        }

    def call(self, file: str, node_id: float, how: str, selector: str) -> str:
        nodes = self._root(file)
        if nodes is None:
            return _error("ENOENT")
        # The engine hands a number over as a float once it has been through JSON.
        if not isinstance(node_id, int | float) or node_id != int(node_id):
            return _error("no such element")
        node_id = int(node_id)
        if not 0 <= node_id < len(nodes):
            return _error("no such element")
        node = nodes[node_id]
        try:
            match how:
                case "all" | "first":
                    found = node.css(selector)
                    if how == "first":
                        found = found[:1]
                case "next":
                    found = [_next_element(node)]
                case "parent":
                    found = [node.parent] if node_id != 0 else []
                case "children":
                    found = [c for c in node.iter(include_text=False)]
                case _:
                    return _error("unknown query")
        except Exception as exc:  # a selector Lexbor cannot parse
            return _error(str(exc) or type(exc).__name__)
        return _answer([self._describe(nodes, n) for n in found if n is not None])


def _next_element(node: Any) -> Any | None:
    sibling = node.next
    while sibling is not None and (not isinstance(sibling.tag, str) or sibling.tag[0] in "-!"):
        sibling = sibling.next
    return sibling


class Output:
    """stdout and stderr, each capped, each write sent on to the runner as it happens.

    A write goes out at once as a ``{"stream", "text"}`` line, so what a script printed before
    it was killed at its deadline still reaches the caller. Past the cap a write is cut to what
    fits and refused.
    """

    def __init__(self, limit: int, sink: Callable[[bytes], object] | None = None) -> None:
        self.limit = limit
        self.sizes = {"stdout": 0, "stderr": 0}
        self._sink = sink

    def write(self, stream: str, text: str) -> str:
        if stream not in self.sizes:
            return "unknown stream"
        data = text.encode("utf-8", errors="replace")
        room = self.limit - self.sizes[stream]
        refused = len(data) > room
        if refused:
            data = data[: max(room, 0)]
            text = data.decode("utf-8", errors="ignore")
        self.sizes[stream] += len(data)
        if text and self._sink is not None:
            self._sink(msgspec.json.encode(Chunk(stream, text)) + b"\n")
        return "limit" if refused else ""


def _guarded(fn: Callable[..., str]) -> Callable[..., str]:
    """``fn``, answering an error string instead of raising (see the module docstring)."""

    def call(*args: Any) -> str:
        try:
            return fn(*args)
        except Exception as exc:  # pragma: no cover - every host function handles its own
            return _error(type(exc).__name__)

    return call


def run(job: Job, corpus_json: str, sink: Callable[[bytes], object] | None = None) -> Outcome:
    """Run ``job``'s script in a fresh context; what it prints goes to ``sink`` as it does."""
    import quickjs

    tree = Tree(job.git_dir, job.sha)
    documents = Documents(tree)
    output = Output(job.output_bytes, sink)

    def memory(path: str) -> str:
        entry = tree.entry(path)
        if entry is None:
            return _error("ENOENT")
        if tree.is_dir(entry):
            return _error("EISDIR")
        return _answer(fields_of(bytes(entry.data).decode("utf-8", errors="replace")))

    context = quickjs.Context()
    context.set_memory_limit(job.memory_bytes)
    context.add_callable("__host_fs", _guarded(tree.call))
    context.add_callable("__host_out", _guarded(output.write))
    context.add_callable("__host_corpus", lambda: corpus_json)
    context.add_callable("__host_memory", _guarded(memory))
    context.add_callable("__host_query", _guarded(documents.call))
    context.eval(guest_source())
    if sink is not None:
        sink(msgspec.json.encode(Started()) + b"\n")
    failure: str | None = None
    try:
        promise = context.module(rewrite_imports(job.script))
        context.set("__run", promise)
        context.eval(
            'globalThis.__state = "pending";'
            "__run.then(() => { __state = 'done' }, (e) => {"
            "  __state = 'failed';"
            "  globalThis.__failure = e instanceof Error ? `${e}\\n${e.stack ?? ''}` : `${e}`;"
            "})"
        )
        while context.execute_pending_job():
            pass
        state = context.eval("__state")
        if state == "failed":
            failure = str(context.eval("__failure"))
        elif state == "pending":
            failure = "Error: the script's top-level await never settled\n"
    except quickjs.JSException as exc:
        failure = str(exc)
    except quickjs.StackOverflow as exc:
        failure = f"RangeError: {exc}\n"
    if failure is None:
        return Outcome(0)
    if failure.startswith("InternalError: out of memory"):
        failure = f"code-mode: the script exceeded its {job.memory_bytes} byte memory cap\n"
    return Outcome(1, False, failure)


def main() -> None:
    with contextlib.suppress(OSError):
        os.nice(19)
    # Imported before the first job arrives: a worker started ahead has them loaded.
    import pygit2  # noqa: F401
    import quickjs  # noqa: F401
    import selectolax.lexbor  # noqa: F401

    guest_source()
    source, out = sys.stdin.buffer, sys.stdout.buffer

    def sink(line: bytes) -> None:
        out.write(line)
        out.flush()

    corpus_sha, corpus_json = "", "[]"
    for _ in range(MAX_JOBS):
        header = source.readline()
        if not header:  # the runner closed the pipe: the daemon is stopping
            return
        job = msgspec.json.decode(header, type=Job)
        if job.corpus_bytes or job.sha != corpus_sha:
            corpus_sha, corpus_json = job.sha, source.read(job.corpus_bytes).decode("utf-8")
        sink(msgspec.json.encode(run(job, corpus_json, sink)) + b"\n")
        gc.collect()  # the script's context and every host object it held, before the next


if __name__ == "__main__":
    main()
