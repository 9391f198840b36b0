"""The fifteen tools, with memhtml 0.15.1's names, arguments and result fields, over the daemon.

Reads answer from the head at the branch tip (the daemon advances before answering), so a memory
committed by plain git is found by the next call. Writes are daemon sessions that commit to the
branch (``writes.py``); each write result names its commit (``commit_sha``), a field memhtml's
results lack. Arguments are checked against the tool's input schema before anything runs: an
unknown argument, a missing one or a value outside an enum (an ``arc`` memory type, which memhtml
refuses too) is an ``ERR_INVALID_PARAMS`` tool failure naming the argument.

The catalog (``catalog.json``) holds each tool's input schema exactly as memhtml publishes it,
its output schema relaxed to admit the fields we add, and annotations that say which tools only
read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from headd.errors import DaemonUnavailable
from headd.limits import MAX_CLAIM_CHARS, bounded
from headd_client.mcp.failures import ToolFailure, from_exception, path_not_found
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.writes import Provenance, WriteSession, violation_failure

SNIPPET_CHARS = 280
LIST_DEFAULT = 50
LIST_MAX = 200
NEIGHBORS_MAX = 200
READ_CHUNK = 200
HOP_LIMIT = 64
PARA = ("projects", "areas", "resources", "archive")


@functools.cache
def catalog() -> dict[str, Any]:
    text = resources.files("headd_client.mcp").joinpath("catalog.json").read_text("utf-8")
    return dict(json.loads(text))


def tool_definitions() -> list[dict[str, Any]]:
    return list(catalog()["tools"])


@functools.cache
def _schemas() -> dict[str, dict[str, Any]]:
    return {t["name"]: t["inputSchema"] for t in tool_definitions()}


# -- argument checking -------------------------------------------------------------------------


def _type_ok(value: Any, schema: Mapping[str, Any]) -> bool:
    if "anyOf" in schema:
        return any(_type_ok(value, s) for s in schema["anyOf"])
    kind = schema.get("type")
    ok = {
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "null": value is None,
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }.get(str(kind), True)
    if not ok:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind == "array" and "items" in schema:
        return all(_type_ok(v, schema["items"]) for v in value)
    if kind == "object" and "properties" in schema:
        return not check_arguments_against(value, schema)
    return True


def check_arguments_against(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Every way ``arguments`` breaks ``schema`` (the subset of JSON Schema the catalog uses)."""
    props = schema.get("properties", {})
    problems = [
        f"missing required argument `{k}`" for k in schema.get("required", ()) if k not in arguments
    ]
    query = arguments.get("query")
    if "query" in props and isinstance(query, str) and not query.strip():
        problems.append("argument `query` is empty; give the words to search for")
    for key, value in arguments.items():
        if key not in props:
            if schema.get("additionalProperties") is False:
                problems.append(f"unknown argument `{key}`")
            continue
        if not _type_ok(value, props[key]):
            problems.append(f"argument `{key}` does not match {_describe(props[key])}")
    return problems


def _describe(schema: Mapping[str, Any]) -> str:
    for option in schema.get("anyOf", [schema]):
        if "enum" in option:
            return "one of " + ", ".join(str(v) for v in option["enum"])
        items = option.get("items")
        if isinstance(items, Mapping) and "enum" in items:
            return "a list of " + ", ".join(str(v) for v in items["enum"])
    kinds = [str(s.get("type")) for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    return " or ".join(kinds) or "the schema"


# -- record shapes -------------------------------------------------------------------------


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


_META_NAMES = (
    ("memory_type", "memoryType"),
    ("status", "status"),
    ("created_at", "createdAt"),
    ("updated_at", "updatedAt"),
    ("content_hash", "contentHash"),
    ("event_at", "eventAt"),
    ("valid_from", "validFrom"),
    ("valid_until", "validUntil"),
    ("archived_at", "archivedAt"),
    ("superseded_by", "supersededBy"),
    ("importance", "importance"),
    ("confidence", "confidence"),
    ("author", "author"),
    ("session_id", "sessionId"),
    ("prompt_id", "promptId"),
    ("turn_uuid", "turnUuid"),
    ("task_status", "taskStatus"),
    ("due", "due"),
)


def record_meta(record: Mapping[str, Any]) -> dict[str, str]:
    """The head metadata as memhtml's ``memory_read`` names it (camelCase, string values)."""
    out: dict[str, str] = {}
    for field, name in _META_NAMES:
        value = record.get(field)
        if value is None or (field == "author" and value == "agent"):
            continue
        out[name] = _js_string(value)
    for tag in record.get("tags") or ():
        out[f"tag:{tag}"] = "true"
    for entity in record.get("entities") or ():
        out[f"entity:{entity}"] = "true"
    return out


def _js_string(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_result(record: Mapping[str, Any], sha: str) -> dict[str, Any]:
    return {
        "path": record["path"],
        "title": record.get("title") or "",
        "body": record.get("body_text") or "",
        "gist": bounded(record.get("claim") or "", MAX_CLAIM_CHARS),
        "memory_type": record.get("memory_type") or "",
        "meta": record_meta(record),
        "links": [{"rel": link["rel"], "href": link["href"]} for link in record.get("links") or ()],
        "archived": bool(record.get("archived")),
        "warnings": list(record.get("warnings") or ()),
        "sha": sha,
        # the record's other fields: its text is the body and gist above, once
        "record": {k: v for k, v in record.items() if k not in ("body_text", "claim")},
    }


def _confidence(record: Mapping[str, Any]) -> float:
    value = record.get("confidence")
    return 1.0 if value is None else float(value)


def _importance(record: Mapping[str, Any]) -> int:
    value = record.get("importance")
    return 5 if value is None else int(value)


def _strip(path: str) -> str:
    return path.strip().lstrip("/")


def _body_or_markup(args: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(body, article_html) of a write or a correction, refused unless exactly one is given:
    memhtml's tools take prose or markup, never both."""
    body = args.get("body")
    markup = args.get("article_html")
    if (body is None) == (markup is None):
        which = "both were supplied" if body is not None else "neither was supplied"
        raise ToolFailure(
            "ERR_INVALID_MEMORY",
            f"invalid memory: exactly one of body or article_html is required, and {which}",
        )
    return body, markup


# -- the tools ------------------------------------------------------------------------------


class Tools:
    """The tool handlers over one daemon link; ``call`` never raises for a tool failure."""

    def __init__(
        self, link: DaemonLink, store: Path, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.link = link
        self.store = store
        self.clock = clock or (lambda: datetime.now(UTC))
        self._handlers: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            "memory_write": self.memory_write,
            "memory_write_batch": self.memory_write_batch,
            "memory_read": self.memory_read,
            "memory_search": self.memory_search,
            "memory_recall": self.memory_recall,
            "memory_correct": self.memory_correct,
            "memory_link": self.memory_link,
            "memory_neighbors": self.memory_neighbors,
            "memory_resolve": self.memory_resolve,
            "memory_archive": self.memory_archive,
            "memory_reinforce": self.memory_reinforce,
            "memory_list": self.memory_list,
            "memory_status": self.memory_status,
            "trace_search": self.trace_search,
            "trace_links": self.trace_links,
        }

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The ``tools/call`` result: structured content and its JSON text, or an error."""
        handler = self._handlers.get(name)
        try:
            if handler is None:
                raise ToolFailure("ERR_UNKNOWN_TOOL", f"no tool named {name}")
            problems = check_arguments_against(arguments, _schemas()[name])
            if problems:
                raise ToolFailure("ERR_INVALID_PARAMS", f"{name}: " + "; ".join(problems))
            result = handler(arguments)
        except DaemonUnavailable as exc:
            failure = ToolFailure("ERR_DAEMON_UNAVAILABLE", exc.message)
            return {"content": [{"type": "text", "text": failure.text()}], "isError": True}
        except Exception as exc:
            failure = from_exception(exc)
            return {"content": [{"type": "text", "text": failure.text()}], "isError": True}
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": result,
            "isError": False,
        }

    # -- helpers ------------------------------------------------------------------------

    def _read(self, path: str, at: str | None = None) -> tuple[Any, str]:
        answer = self.link.call("read", {"path": _strip(path), "at": at})
        return answer.get("record"), str(answer.get("sha"))

    def _live(self, path: str) -> Mapping[str, Any]:
        record, _ = self._read(path)
        if record is None or record.get("archived"):
            raise path_not_found(_strip(path))
        return dict(record)

    def _records(self, paths: Sequence[str], at: str | None) -> list[Any]:
        """The records at ``paths`` (None where none), in batches of ``READ_CHUNK``."""
        out: list[Any] = []
        for start in range(0, len(paths), READ_CHUNK):
            chunk = paths[start : start + READ_CHUNK]
            results = self.link.batch_results([("read", {"path": p, "at": at}) for p in chunk])
            out.extend(r.get("record") for r in results)
        return out

    def _now(self) -> datetime:
        return self.clock()

    # -- search and reads ----------------------------------------------------------------

    def memory_search(self, args: Mapping[str, Any]) -> dict[str, Any]:
        filter_: dict[str, Any] = {}
        for ours, theirs in (
            ("types", "memory_types"),
            ("workspace", "workspace"),
            ("tags", "tags"),
            ("entity", "entity"),
            ("facets", "facets"),
            ("include_archived", "include_archived"),
            ("as_of", "as_of"),
        ):
            if args.get(theirs) is not None:
                filter_[ours] = args[theirs]
        limit = max(1, min(int(args.get("limit") or 10), 100))
        found = self.link.call(
            "search",
            {"query": args["query"], "limit": limit, "filter": filter_ or None, "records": True},
        )
        sha = str(found["sha"])
        hits = found.get("hits") or []
        records = [h.get("record") for h in hits]
        out_hits = []
        for hit, record in zip(hits, records, strict=True):
            record = record or {}
            superseded_by = record.get("superseded_by")
            if superseded_by:
                superseded_by = _strip(superseded_by)
            out_hits.append(
                {
                    "path": hit["path"],
                    "title": hit.get("title") or record.get("title") or "",
                    "gist": bounded(hit.get("claim") or record.get("claim") or ""),
                    "memory_type": record.get("memory_type") or "",
                    "score": hit["score"],
                    "confidence": _confidence(record),
                    "updated_at": record.get("updated_at") or record.get("created_at") or "",
                    "snippet": _snippet(record.get("body_text") or hit.get("claim") or ""),
                    "entities": list(record.get("entities") or ()),
                    "superseded_by": superseded_by or None,
                    "arms": list(hit.get("arms") or ()),
                }
            )
        entity = args.get("entity")
        scope_empty = not out_hits and _scope_narrows(args)
        archived: list[dict[str, Any]] = []
        matches = 0
        if scope_empty and not args.get("as_of"):
            matches, archived = self._archived_in_scope(args, sha, limit)
        return {
            "hits": out_hits,
            "degraded": bool(found.get("degraded")),
            "vector_coverage": float((found.get("vectors") or {}).get("coverage", 0.0)),
            "arms": list(found.get("arms") or ()),
            "entity_scope": entity,
            "scope_empty": scope_empty,
            "archived_matches": matches,
            "archived": archived,
            "sha": sha,
            "took_ms": found.get("took_ms"),
        }

    def _archived_in_scope(
        self, args: Mapping[str, Any], sha: str, limit: int
    ) -> tuple[int, list[dict[str, Any]]]:
        """memhtml's pointer when a narrowing scope emptied a search: how many archived memories
        the same scope admits (whatever the query), and the first ``limit`` by path with their
        successors, so the agent knows a retry with ``include_archived`` finds something."""
        paths = [p for p in self._tip_paths(sha) if p.startswith("archive/")]
        found: list[dict[str, Any]] = []
        for start in range(0, len(paths), READ_CHUNK):
            chunk = paths[start : start + READ_CHUNK]
            for path, record in zip(chunk, self._records(chunk, sha), strict=True):
                if record is not None and _in_search_scope(record, args):
                    successor = record.get("superseded_by")
                    found.append(
                        {"path": path, "superseded_by": _strip(successor) if successor else None}
                    )
        found.sort(key=lambda entry: str(entry["path"]))
        return len(found), found[:limit]

    def memory_read(self, args: Mapping[str, Any]) -> dict[str, Any]:
        path = _strip(args["path"])
        record, sha = self._read(path)
        if record is None:
            raise path_not_found(path)
        return read_result(record, sha)

    def memory_recall(self, args: Mapping[str, Any]) -> dict[str, Any]:
        workspace = args.get("workspace")
        pack = self.link.call(
            "recall",
            {
                "query": args["query"],
                "budget_chars": args.get("budget_chars"),
                "filter": {"workspace": workspace} if workspace else None,
            },
        )

        def disclosed(fold: Mapping[str, Any] | None) -> list[dict[str, Any]]:
            return [
                {
                    "path": e.get("path", ""),
                    "title": e.get("title", ""),
                    "gist": bounded(e.get("gist", e.get("claim", ""))),
                    "body": e.get("body", ""),
                }
                for e in (fold or {}).get("disclosed", [])
            ]

        lateral = [
            {
                "path": e.get("path", ""),
                "title": e.get("title", ""),
                "gist": bounded(e.get("gist", "")),
            }
            for e in pack.get("index_lines") or ()
        ]
        return {
            "sections": {
                "arcs": disclosed(pack.get("arcs")),
                "memories": disclosed(pack.get("memories")),
                "lateral": lateral,
            },
            "spent_chars": int(pack.get("spent") or 0),
            "truncated": bool(pack.get("truncated")),
            "degraded": bool(pack.get("degraded", True)),
            "vector_coverage": float(pack.get("vector_coverage") or 0.0),
        }

    def memory_resolve(self, args: Mapping[str, Any]) -> dict[str, Any]:
        requested = _strip(args["path"])
        status = self.link.call("status")
        sha = str(status["sha"])
        try:
            answer = self.link.call("resolve", {"path": requested})
        except Exception as exc:
            if getattr(exc, "code", None) != "ERR_PATH_NOT_FOUND":
                raise
            return {
                "requested": requested,
                "path": requested,
                "hops": 0,
                "steps": [],
                "stop_reason": "unindexed",
                "title": None,
                "indexed_commit": sha,
                "pinned_uri": None,
            }
        from headd.memfile.archive import original_path

        chain = [str(p) for p in answer.get("chain") or [requested]]
        sha = str(answer.get("sha") or sha)
        steps = []
        for before, after in zip(chain, chain[1:], strict=False):
            via = "archive_move" if original_path(after) == before else "supersedes"
            steps.append({"from": before, "to": after, "via": via})
        final = str(answer.get("path") or chain[-1])
        record, _ = self._read(final, sha)
        if len(steps) >= HOP_LIMIT:
            stop = "hop_limit"
        elif record is not None and record.get("archived"):
            stop = "cycle" if self._supersedes_back(record, chain) else "archived"
        else:
            stop = "live"
        return {
            "requested": requested,
            "path": final,
            "hops": len(steps),
            "steps": steps,
            "stop_reason": stop,
            "title": None if record is None else record.get("title"),
            "indexed_commit": sha,
            "pinned_uri": f"memhtml://at/{sha}/{final}",
        }

    @staticmethod
    def _supersedes_back(record: Mapping[str, Any], chain: Sequence[str]) -> bool:
        """A final node that names a chain member as its successor: two memories superseding
        each other, an authoring defect the walk stops on."""
        successor = record.get("superseded_by")
        return bool(successor) and _strip(str(successor)) in chain

    def memory_neighbors(self, args: Mapping[str, Any]) -> dict[str, Any]:
        start = _strip(args["path"])
        depth = max(1, min(int(args.get("depth") or 1), 2))
        node_limit = max(1, min(int(args.get("limit") or NEIGHBORS_MAX), NEIGHBORS_MAX))
        rels = set(args.get("rels") or ())
        record, sha = self._read(start)
        if record is None:
            raise path_not_found(start)
        seen = {start}
        frontier = [(start, record)]
        nodes: list[dict[str, Any]] = []
        edges: set[tuple[str, str, str]] = set()
        dropped = 0
        for hop in range(1, depth + 1):
            found: list[tuple[str, str]] = []
            inbound = self.link.batch_results(
                [("inbound", {"href": "/" + p, "at": sha}) for p, _ in frontier]
            )
            for (path, rec), into in zip(frontier, inbound, strict=True):
                for link in (rec or {}).get("links") or ():
                    if rels and link["rel"] not in rels:
                        continue
                    other = _strip(link["href"])
                    edges.add((path, link["rel"], other))
                    found.append((other, link["rel"]))
                for other in into.get("paths") or ():
                    found.append((other, "?" + path))
            candidates = [p for p, _ in found if p not in seen]
            records = dict(zip(candidates, self._records(candidates, sha), strict=True))
            next_frontier = []
            for other, rel in found:
                if other in seen:
                    continue
                rec = records.get(other)
                if rel.startswith("?"):
                    target = "/" + rel[1:]
                    matching = [
                        lk
                        for lk in (rec or {}).get("links") or ()
                        if lk["href"] == target and (not rels or lk["rel"] in rels)
                    ]
                    if not matching:
                        continue
                    rel = matching[0]["rel"]
                    edges.add((other, rel, target[1:]))
                seen.add(other)
                if len(nodes) >= node_limit:
                    dropped += 1
                    continue
                title = (rec or {}).get("title") or ""
                nodes.append(
                    {"path": other, "title": title, "hop": hop, "rel": rel, "derived": False}
                )
                next_frontier.append((other, rec))
            frontier = next_frontier
        return {
            "nodes": nodes,
            "edges": len(edges),
            "node_limit": node_limit,
            "dropped_node_count": dropped,
            "scan_saturated": False,
        }

    def _tip_paths(self, sha: str) -> list[str]:
        """Every memory-shaped path in the tree of ``sha``, sorted (a git tree walk)."""
        import pygit2

        repo = pygit2.Repository(str(self.store))
        commit = repo.get(sha)
        if not isinstance(commit, pygit2.Commit):
            raise path_not_found(sha)
        tree = commit.tree
        out: list[str] = []

        def walk(node: Any, prefix: str) -> None:
            for entry in node:
                name = prefix + entry.name
                if entry.type_str == "tree":
                    walk(entry, name + "/")
                elif name.endswith(".html"):
                    out.append(name)

        for bucket in PARA:
            if bucket in tree:
                walk(repo.get(tree[bucket].id), bucket + "/")
        out.sort()
        return out

    def memory_list(self, args: Mapping[str, Any]) -> dict[str, Any]:
        limit = max(1, min(int(args.get("limit") or LIST_DEFAULT), LIST_MAX))
        sha = str(self.link.call("status")["sha"])
        para = args.get("para")
        cursor = args.get("cursor")
        paths = [
            p
            for p in self._tip_paths(sha)
            if (para is None or p.startswith(para + "/")) and (cursor is None or p > cursor)
        ]
        wanted_type = args.get("memory_type")
        workspace = args.get("workspace")
        tag = args.get("tag")
        entity = args.get("entity")
        facets = list(args.get("facets") or ())
        files: list[dict[str, Any]] = []
        next_cursor = None
        for start in range(0, len(paths), READ_CHUNK):
            chunk = paths[start : start + READ_CHUNK]
            for path, record in zip(chunk, self._records(chunk, sha), strict=True):
                if record is None or (record.get("archived") and para != "archive"):
                    continue
                if wanted_type is not None and record.get("memory_type") != wanted_type:
                    continue
                if workspace is not None and record.get("workspace") != workspace:
                    continue
                if tag is not None and tag not in (record.get("tags") or ()):
                    continue
                if entity is not None and entity not in (record.get("entities") or ()):
                    continue
                if facets and not _facets_match(record, facets):
                    continue
                if len(files) == limit:
                    next_cursor = files[-1]["path"]
                    break
                files.append(
                    {
                        "path": path,
                        "title": record.get("title") or "",
                        "memory_type": record.get("memory_type") or "",
                        "gist": bounded(record.get("claim") or "", MAX_CLAIM_CHARS),
                        "workspace": record.get("workspace"),
                        "para": record.get("para") or path.split("/", 1)[0],
                        "confidence": _confidence(record),
                        "importance": _importance(record),
                        "archived": bool(record.get("archived")),
                        "updated_at": record.get("updated_at") or record.get("created_at") or "",
                    }
                )
            if next_cursor is not None:
                break
        return {"files": files, "next_cursor": next_cursor, "sha": sha}

    def memory_status(self, args: Mapping[str, Any]) -> dict[str, Any]:
        status = self.link.call("status")
        sha = str(status["sha"])
        counts: dict[str, int] = {}
        archived = 0
        edges = 0
        paths = self._tip_paths(sha)
        for record in self._records(paths, sha):
            if record is None:
                continue
            edges += len(record.get("links") or ())
            if record.get("archived"):
                archived += 1
                continue
            kind = str(record.get("memory_type"))
            counts[kind] = counts.get(kind, 0) + 1
        vectors = status.get("vectors") or {}
        embedder = status.get("embedder")
        return {
            "head_sha": sha,
            "dirty": self._dirty(),
            "counts_by_type": dict(sorted(counts.items())),
            "archived_count": archived,
            "edges": edges,
            # the SQLite index (recall's) reflects the tip; recall itself catches it up first
            "index_fresh": (status.get("index") or {}).get("indexed_sha") == sha,
            "embedder_up": embedder not in (None, "off"),
            "vector_coverage": float(vectors.get("coverage") or 0.0),
            "vector_coverage_floor": 0.95,
            "last_sleep": _last_sleep(status.get("last_sleep")),
            "ref": status.get("ref"),
            "records": status.get("records"),
            "skipped": status.get("skipped"),
            "daemon_pid": status.get("pid"),
            # ahead/behind, last error and open conflicts (paths, refs) of the followed remote
            "remote": status.get("remote"),
            # Why the followed remote's last round failed (a refused tip, an unreachable host),
            # so an agent sees that the memory no longer follows: status.remote.last_error.
            "remote_error": (status.get("remote") or {}).get("last_error"),
        }

    def _dirty(self) -> bool:
        """Uncommitted edits to tracked files (new untracked files and ignored ones aside)."""
        import pygit2

        quiet = pygit2.GIT_STATUS_IGNORED | pygit2.GIT_STATUS_WT_NEW
        return any(flags & ~quiet for flags in pygit2.Repository(str(self.store)).status().values())

    # -- usage state and traces --------------------------------------------------------------

    def memory_reinforce(self, args: Mapping[str, Any]) -> dict[str, Any]:
        result = self.link.call(
            "reinforce", {"paths": [_strip(p) for p in args["paths"]], "signal": args["signal"]}
        )
        return {
            "bumped": list(result.get("bumped") or ()),
            "cooled_down": list(result.get("cooled_down") or ()),
        }

    def trace_search(self, args: Mapping[str, Any]) -> dict[str, Any]:
        limit = max(1, min(int(args.get("limit") or 10), 100))
        found = self.link.call("traces.search", {"query": args["query"], "limit": limit})
        cwd = args.get("cwd")
        since = args.get("since")
        sessions = []
        for hit in found.get("hits") or ():
            if cwd is not None and hit.get("cwd") != cwd:
                continue
            if since is not None and (hit.get("started_at") or "") < since:
                continue
            sessions.append(
                {
                    "session_id": hit.get("session_id") or "",
                    "slug": hit.get("slug") or "",
                    "cwd": hit.get("cwd"),
                    "started_at": hit.get("started_at"),
                    "prompt_count": int(hit.get("prompt_count") or 0),
                    "first_prompt": hit.get("first_prompt") or "",
                    "ai_title": hit.get("ai_title"),
                }
            )
        return {"sessions": sessions}

    def trace_links(self, args: Mapping[str, Any]) -> dict[str, Any]:
        session_id = args.get("session_id")
        path = args.get("path")
        if session_id is None and path is None:
            raise ToolFailure("ERR_INVALID_MEMORY", "trace links needs a session_id or a path")
        links: list[dict[str, Any]] = []
        if session_id is not None:
            try:
                shown = self.link.call("traces.show", {"session": session_id})
            except Exception as exc:
                if getattr(exc, "code", None) != "ERR_PATH_NOT_FOUND":
                    raise
                shown = {}
            for m in (shown or {}).get("memories") or ():
                links.append(_link_row(m, session_id))
        else:
            links.extend(self._links_for_path(_strip(str(path))))
        if session_id is not None and path is not None:
            links = [row for row in links if row["path"] == _strip(str(path))]
        return {"links": links}

    def _links_for_path(self, path: str) -> list[dict[str, Any]]:
        """Read-only from the state plane the daemon writes (``memory_session_links``)."""
        import sqlite3

        from headd_plane.paths import state_path_of

        db = state_path_of(self.store)
        if not db.exists():
            return []
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            from headd_plane.recorder import links_for_path

            rows = links_for_path(conn, path)
        except sqlite3.Error:
            return []
        finally:
            conn.close()
        return [
            {
                "path": r.path,
                "session_id": r.session_id,
                "prompt_id": r.prompt_id,
                "turn_uuid": r.turn_uuid,
                "link_kind": r.link_kind,
                "at": r.at,
            }
            for r in rows
        ]

    # -- writes ----------------------------------------------------------------------------

    def _write_op(self, op: Mapping[str, Any], taken: Callable[[str], bool]) -> dict[str, Any]:
        """The session op for one memhtml write: the daemon's ``write`` for prose, a ``put``
        rendered here for ``article_html`` (the daemon's write takes prose only)."""
        body, markup = _body_or_markup(op)
        path = op.get("path")
        if path is not None:
            from headd.memfile.placement import normalize_path, unusable_reason

            reason = unusable_reason(path)
            if reason is not None and op.get("strict_path"):
                raise ToolFailure("ERR_INVALID_MEMORY", f"invalid memory: {reason}")
            if reason is None and taken(normalize_path(path)):
                raise ToolFailure(
                    "ERR_WRITE_CONFLICT",
                    f"write conflict on {normalize_path(path)}: the path is occupied",
                )
            if reason is not None:
                path = None
        if markup is None:
            return {
                "op": "write",
                "title": op["title"],
                "type": op["memory_type"],
                "claim": "",
                "body": body,
                "tags": op.get("tags"),
                "entities": op.get("entities"),
                "workspace": op.get("workspace"),
                "path": path,
                "importance": op.get("importance"),
                "confidence": op.get("confidence"),
            }
        html, placed = self._render(op, markup, path, taken)
        return {"op": "put", "path": placed, "html": html}

    def _render(
        self,
        op: Mapping[str, Any],
        markup: str | None,
        path: str | None,
        taken: Callable[[str], bool],
        *,
        body: str | None = None,
    ) -> tuple[str, str]:
        from headd.errors import HeaddError
        from headd.memfile.placement import choose_path
        from headd.memfile.render import check_write, fields_from_write, render_memory

        now = self._now()
        try:
            fields = fields_from_write(
                title=op["title"],
                memory_type=op["memory_type"],
                now=now,
                body=body,
                article_html=markup,
                tags=op.get("tags") or (),
                entities=op.get("entities") or (),
                workspace=op.get("workspace"),
                importance=op.get("importance"),
                confidence=op.get("confidence"),
            )
            check_write(fields, path or "")
            placed = choose_path(
                title=op["title"],
                memory_type=op["memory_type"],
                taken=_Taken(taken),
                now=now,
                entities=op.get("entities") or (),
                tags=op.get("tags") or (),
                workspace=op.get("workspace"),
                path=path,
            )
            html = render_memory(fields)
        except HeaddError as exc:
            raise from_exception(exc) from None
        return html, placed

    def _taken_in(self, session: WriteSession) -> Callable[[str], bool]:
        def taken(path: str) -> bool:
            return session.read(path) is not None

        return taken

    @staticmethod
    def _provenance(args: Mapping[str, Any]) -> Provenance | None:
        if args.get("session_id") is None:
            return None
        return Provenance(args.get("session_id"), args.get("prompt_id"), args.get("turn_uuid"))

    def memory_write(self, args: Mapping[str, Any]) -> dict[str, Any]:
        with WriteSession(self.link) as session:
            op = self._write_op(args, self._taken_in(session))
            applied = session.apply([op])
            if applied.get("violations"):
                v = applied["violations"][0]
                if v.get("kind") == "duplicate" and v.get("existing"):
                    return _deduped(str(v["existing"]))
                raise violation_failure(v)
            for d in applied.get("deduped") or ():
                return _deduped(str(d["existing"]))
            path = str((applied.get("paths") or [op.get("path")])[0])
            landed = session.commit(f"memhtml(write): {args['title']}", self._provenance(args))
        if 0 in landed.deduped:
            return _deduped(landed.deduped[0])
        return {
            "path": path,
            "created": True,
            "deduped": False,
            "existing_path": None,
            "commit_sha": landed.sha,
        }

    def memory_write_batch(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if args.get("consolidate") is not None:
            raise ToolFailure(
                "ERR_UNSUPPORTED",
                "consolidate is not supported by this server; nothing was written",
            )
        ops = list(args["ops"])
        best_effort = bool(args.get("continue_on_error"))
        results: list[dict[str, Any]] = [_batch_row(i) for i in range(len(ops))]
        written: list[int] = []
        with WriteSession(self.link) as session:
            taken = self._taken_in(session)
            for index, op in enumerate(ops):
                try:
                    wire = self._write_op(op, taken)
                    applied = session.apply([wire])
                    if applied.get("violations"):
                        v = applied["violations"][0]
                        if v.get("kind") == "duplicate" and v.get("existing"):
                            results[index].update(
                                path=v["existing"], deduped=True, existing_path=v["existing"]
                            )
                            continue
                        raise violation_failure(v)
                    deduped = applied.get("deduped") or ()
                    if deduped:
                        existing = str(deduped[0]["existing"])
                        results[index].update(path=existing, deduped=True, existing_path=existing)
                        continue
                    results[index]["path"] = str((applied.get("paths") or [None])[0])
                    written.append(index)
                except ToolFailure as failure:
                    results[index].update(ok=False, code=failure.code, error=failure.message)
                    if not best_effort:
                        for later in range(index + 1, len(ops)):
                            results[later].update(ok=False, skipped=True)
                        for earlier in written:
                            results[earlier].update(ok=False, skipped=True)
                        return _batch_answer(results, None)
            sha = None
            if written:
                title = ops[written[0]]["title"]
                more = f" (+{len(written) - 1})" if len(written) > 1 else ""
                landed = session.commit(f"memhtml(apply): {title}{more}", self._provenance(args))
                sha = landed.sha
                if args.get("detect_conflicts"):
                    self._mark_conflicts(results, landed.contradictions)
        return _batch_answer(results, sha)

    def _mark_conflicts(
        self, results: list[dict[str, Any]], contradictions: Iterable[Mapping[str, Any]]
    ) -> None:
        by_path = {str(c["path"]): str(c["against"]) for c in contradictions}
        for row in results:
            against = by_path.get(str(row.get("path")))
            if against:
                record, _ = self._read(against)
                row["conflict"] = {
                    "path": _strip(against),
                    "batch_index": None,
                    "claim": "" if record is None else record.get("claim") or "",
                }

    def memory_correct(self, args: Mapping[str, Any]) -> dict[str, Any]:
        from headd.memfile.archive import (
            archive_path,
            supersede_moment,
            supersede_stamps,
            superseding_stamps,
        )

        target = _strip(args["target_path"])
        record = self._live(target)
        old_html = self._blob(record)
        now = self._now()
        moved_to = archive_path(target, now.year, lambda p: self._read(p)[0] is not None)
        body, markup = _body_or_markup(args)
        with WriteSession(self.link) as session:
            seen = self._taken_in(session)

            def taken(path: str) -> bool:
                return path != target and seen(path)

            spec = {"title": args["title"], "memory_type": record["memory_type"]}
            new_html, new_path = self._render(spec, markup, None, taken, body=body)
            moment = supersede_moment(new_html, _event_at(new_path, new_html), now)
            new_html = superseding_stamps(new_html, old_archive_path=moved_to, moment=moment)
            old_stamped = supersede_stamps(old_html, new_path=new_path, moment=moment, now=now)
            applied = session.apply(
                [
                    {"op": "archive", "path": target, "to": moved_to, "html": old_stamped},
                    {"op": "put", "path": new_path, "html": new_html},
                ]
            )
            if applied.get("violations"):
                raise violation_failure(applied["violations"][0])
            reason = " ".join(str(args.get("reason") or "").split())
            landed = session.commit(
                f"memhtml(correct): {args['title']}\n\n{reason}".rstrip(), self._provenance(args)
            )
        return {
            "path": new_path,
            "superseded": [moved_to],
            "archived": [moved_to],
            "commit_sha": landed.sha,
        }

    def _blob(self, record: Mapping[str, Any]) -> str:
        import pygit2

        repo = pygit2.Repository(str(self.store))
        blob = repo.get(str(record["blob_sha"]))
        if not isinstance(blob, pygit2.Blob):
            raise path_not_found(str(record["path"]))
        return bytes(blob.data).decode("utf-8")

    def memory_link(self, args: Mapping[str, Any]) -> dict[str, Any]:
        src = _strip(args["src_path"])
        dst = _strip(args["dst_path"])
        rel = str(args["rel"])
        record = self._live(src)
        other, _ = self._read(dst)
        if other is None:
            raise path_not_found(dst)
        href = "/" + dst
        sha = None
        if not any(lk["rel"] == rel and lk["href"] == href for lk in record.get("links") or ()):
            with WriteSession(self.link) as session:
                applied = session.apply([{"op": "link", "path": src, "rel": rel, "href": href}])
                if applied.get("violations"):
                    raise violation_failure(applied["violations"][0])
                sha = session.commit(f"memhtml(link): {rel} {src} -> {dst}").sha
        return {"ok": True, "rel": rel, "src_path": src, "dst_path": dst, "commit_sha": sha}

    def memory_archive(self, args: Mapping[str, Any]) -> dict[str, Any]:
        path = _strip(args["path"])
        self._live(path)
        with WriteSession(self.link) as session:
            applied = session.apply([{"op": "archive", "path": path}])
            if applied.get("violations"):
                raise violation_failure(applied["violations"][0])
            moved = str((applied.get("paths") or [""])[-1])
            reason = " ".join(str(args.get("reason") or "").split())
            landed = session.commit(f"memhtml(archive): {path} — {reason}")
        return {"path": path, "archive_path": moved, "commit_sha": landed.sha}


class _Taken(AbstractSet[str]):
    """``choose_path``'s set of occupied paths, asked of the session's view one path at a time
    (placement only ever asks ``in``)."""

    def __init__(self, taken: Callable[[str], bool]) -> None:
        self._taken = taken

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._taken(path)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _event_at(path: str, html: str) -> str | None:
    from headd.memfile.parse import parse_memory

    try:
        return parse_memory(path, html).event_at
    except Exception:  # an unparsable file is refused by the daemon's own check
        return None


def _scope_narrows(args: Mapping[str, Any]) -> bool:
    """Whether a search's scope can empty it (memhtml's ``scopeNarrows``): a type, workspace,
    tag, entity or facet was asked for."""
    return bool(
        args.get("memory_types")
        or args.get("workspace")
        or any(str(tag).strip() for tag in args.get("tags") or ())
        or args.get("entity")
        or any("=" in str(facet) for facet in args.get("facets") or ())
    )


def _in_search_scope(record: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    """Whether a record is in a search's scope, the query aside (memhtml's scope: any of the
    types, the workspace, any of the tags, the entity, the facets)."""
    types = args.get("memory_types")
    if types and record.get("memory_type") not in types:
        return False
    if not types and record.get("memory_type") == "task":
        return False
    if args.get("workspace") and record.get("workspace") != args["workspace"]:
        return False
    tags = [t for t in args.get("tags") or () if str(t).strip()]
    if tags and not set(tags) & set(record.get("tags") or ()):
        return False
    if args.get("entity") and args["entity"] not in (record.get("entities") or ()):
        return False
    facets = list(args.get("facets") or ())
    return not facets or _facets_match(record, facets)


def _facets_match(record: Mapping[str, Any], wanted: Sequence[str]) -> bool:
    """Values under one name broaden, different names narrow (memhtml's composition)."""
    have = {(f.get("name"), f.get("value")) for f in record.get("facets") or ()}
    by_name: dict[str, set[str]] = {}
    for spec in wanted:
        name, _, value = spec.partition("=")
        by_name.setdefault(name, set()).add(value)
    return all(any((n, v) in have for v in values) for n, values in by_name.items())


def _deduped(existing: str) -> dict[str, Any]:
    return {
        "path": existing,
        "created": False,
        "deduped": True,
        "existing_path": existing,
        "commit_sha": None,
    }


def _link_row(m: Mapping[str, Any], session_id: str) -> dict[str, Any]:
    return {
        "path": m.get("path", ""),
        "session_id": session_id,
        "prompt_id": m.get("prompt_id"),
        "turn_uuid": m.get("turn_uuid"),
        "link_kind": m.get("link_kind", ""),
        "at": m.get("at", ""),
    }


def _batch_row(index: int) -> dict[str, Any]:
    return {
        "index": index,
        "ok": True,
        "path": None,
        "deduped": False,
        "existing_path": None,
        "code": None,
        "error": None,
        "skipped": False,
        "conflict": None,
        "near_duplicates": None,
        "consolidated_into": None,
        "superseded_path": None,
    }


def _batch_answer(results: list[dict[str, Any]], sha: str | None) -> dict[str, Any]:
    summary = {
        "total": len(results),
        "written": sum(1 for r in results if r["ok"] and not r["deduped"] and not r["skipped"]),
        "deduped": sum(1 for r in results if r["deduped"]),
        "failed": sum(1 for r in results if not r["ok"] and not r["skipped"]),
        "skipped": sum(1 for r in results if r["skipped"]),
        "consolidated": 0,
    }
    # near-duplicate detection is not run here: memhtml's "unchecked" answer (degraded).
    return {
        "results": results,
        "summary": summary,
        "commit_sha": sha,
        "near_duplicates_degraded": True,
    }


def _last_sleep(latest: Any) -> dict[str, Any] | None:
    """The daemon's ``status.last_sleep`` in memhtml's ``memory_status`` shape."""
    if not isinstance(latest, Mapping) or not latest.get("run_id"):
        return None
    return {key: latest.get(key) for key in ("run_id", "status", "started_at")}
