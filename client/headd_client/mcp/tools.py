"""The fifteen tools, with memhtml 0.15.1's names, arguments and result fields, over the daemon;
and ``memory_exec``, code-mode (``exec_tool.py``).

Reads answer from the head at the branch tip (the daemon advances before answering), so a memory
committed by plain git is found by the next call. Writes are daemon sessions that commit to the
branch (``write_tools.py`` over ``writes.py``); each write result names its commit
(``commit_sha``), a field memhtml's results lack. Arguments are checked against the tool's input schema before anything runs: an
unknown argument, a missing one or a value outside an enum (an ``arc`` memory type, which memhtml
refuses too) is an ``ERR_INVALID_PARAMS`` tool failure naming the argument.

The catalog (``catalog.json``) holds each tool's input schema exactly as memhtml publishes it,
its output schema relaxed to admit the fields we add, and annotations that say which tools only
read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import msgspec

from headd.errors import DaemonUnavailable
from headd.limits import MAX_CLAIM_CHARS, bounded
from headd.wire.answers import SleepStatusAnswer, WireRecord
from headd.wire.browse import LIST_DEFAULT, LIST_MAX, NEIGHBORS_MAX, ListRequest, NeighborsRequest
from headd.wire.filter import Filter
from headd.wire.plane_answers import RecallFold, SessionMemory
from headd_client import calls
from headd_client.json_types import JsonInObject, JsonObject, JsonValue
from headd_client.mcp.arguments import (
    ListArgs,
    NeighborsArgs,
    PathArgs,
    RecallArgs,
    ReinforceArgs,
    SearchArgs,
    TraceLinksArgs,
    TraceSearchArgs,
    parse,
)
from headd_client.mcp.exec_tool import memory_exec
from headd_client.mcp.failures import ToolFailure, from_exception, path_not_found
from headd_client.mcp.shapes import (
    check_arguments_against,
    read_result,
    search_hit,
    strip_path,
)
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.write_tools import WriteTools

__all__ = ["Tools", "catalog", "check_arguments_against", "list_request", "tool_definitions"]


HOP_LIMIT = 64
#: The fields of a ``list`` row that memhtml's ``memory_list`` names.
LIST_FIELDS = (
    "path",
    "title",
    "memory_type",
    "gist",
    "workspace",
    "para",
    "confidence",
    "importance",
    "archived",
    "updated_at",
)


@functools.cache
def catalog() -> JsonObject:
    text = resources.files("headd_client.mcp").joinpath("catalog.json").read_text("utf-8")
    loaded: JsonObject = json.loads(text)
    return loaded


def tool_definitions() -> list[JsonValue]:
    tools = catalog()["tools"]
    return list(tools) if isinstance(tools, list) else []


@functools.cache
def _schemas() -> dict[str, JsonInObject]:
    return {
        str(t["name"]): schema
        for t in tool_definitions()
        if isinstance(t, dict) and isinstance(schema := t.get("inputSchema"), dict)
    }


# -- the tools ------------------------------------------------------------------------------


class Tools(WriteTools):
    """The tool handlers over one daemon link; ``call`` never raises for a tool failure."""

    def __init__(
        self, link: DaemonLink, store: Path, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.link = link
        self.store = store
        self.clock = clock or (lambda: datetime.now(UTC))
        self._handlers: dict[str, Callable[[JsonInObject], JsonObject]] = {
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
            "memory_exec": functools.partial(memory_exec, self.link),
        }

    def call(self, name: str, arguments: JsonInObject) -> JsonObject:
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

    # -- search and reads ----------------------------------------------------------------

    def memory_search(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, SearchArgs)
        scope = (
            args.memory_types,
            args.workspace,
            args.tags,
            args.entity,
            args.facets,
            args.include_archived,
            args.as_of,
        )
        filter_ = None
        if any(given is not None for given in scope):
            filter_ = Filter(
                types=args.memory_types,
                workspace=args.workspace,
                tags=args.tags,
                entity=args.entity,
                facets=args.facets,
                include_archived=bool(args.include_archived),
                as_of=args.as_of,
            )
        limit = max(1, min(args.limit or 10, 100))
        found = self.link.run(calls.search(args.query, limit=limit, filter=filter_, records=True))
        sha = str(found.sha)
        out_hits: list[JsonValue] = [search_hit(hit) for hit in found.hits]
        scope_empty = not out_hits and args.narrows()
        archived: list[JsonValue] = []
        matches = 0
        if scope_empty and not args.as_of:
            matches, archived = self._archived_in_scope(args, sha, limit)
        return {
            "hits": out_hits,
            "degraded": found.degraded,
            "vector_coverage": float(found.vectors.coverage),
            "arms": list(found.arms),
            "entity_scope": args.entity,
            "scope_empty": scope_empty,
            "archived_matches": matches,
            "archived": archived,
            "sha": sha,
            "took_ms": found.took_ms,
        }

    def _archived_in_scope(
        self, args: SearchArgs, sha: str, limit: int
    ) -> tuple[int, list[JsonValue]]:
        """memhtml's pointer when a narrowing scope emptied a search: how many archived memories
        the same scope admits (whatever the query), and the first ``limit`` by path with their
        successors, so the agent knows a retry with ``include_archived`` finds something."""
        types = list(args.memory_types or ()) or None
        tags = [t for t in args.tags or () if t.strip()] or None
        facets = [f for f in args.facets or () if "=" in f] or None
        request: ListRequest | None = ListRequest(
            types=types,
            workspace=args.workspace or None,
            tags=tags,
            entity=args.entity or None,
            facets=facets,
            para="archive",
            include_archived=True,
            limit=LIST_MAX,
            at=sha,
        )
        paths: list[str] = []
        while request is not None:
            page = self.link.run(calls.listing(request))
            # memhtml's search leaves tasks out unless a type names them
            paths += [row.path for row in page.files if types or row.memory_type != "task"]
            cursor = page.next_cursor
            request = None if cursor is None else msgspec.structs.replace(request, cursor=cursor)
        found: list[JsonValue] = []
        for path in paths[:limit]:
            record, _ = self._read(path, sha)
            successor = None if record is None else record.superseded_by
            found.append(
                {"path": path, "superseded_by": strip_path(successor) if successor else None}
            )
        return len(paths), found

    def memory_read(self, arguments: JsonInObject) -> JsonObject:
        path = strip_path(parse(arguments, PathArgs).path)
        record, sha = self._read(path)
        if record is None:
            raise path_not_found(path)
        return read_result(record, sha)

    def memory_recall(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, RecallArgs)
        workspace = args.workspace
        pack = self.link.run(
            calls.recall(
                args.query,
                budget_chars=args.budget_chars,
                filter=Filter(workspace=workspace) if workspace else None,
            )
        )

        def disclosed(fold: RecallFold) -> list[JsonValue]:
            return [
                {"path": e.path, "title": e.title, "gist": bounded(e.claim), "body": e.body}
                for e in fold.disclosed
            ]

        # The lateral section names each index line by path and title; its gist stays empty.
        lateral: list[JsonValue] = [
            {"path": e.path, "title": e.title, "gist": ""} for e in pack.index_lines
        ]
        return {
            "sections": {
                "arcs": disclosed(pack.arcs),
                "memories": disclosed(pack.memories),
                "lateral": lateral,
            },
            "spent_chars": pack.spent,
            "truncated": pack.truncated,
            "degraded": pack.degraded,
            "vector_coverage": pack.vector_coverage,
        }

    def memory_resolve(self, arguments: JsonInObject) -> JsonObject:
        requested = strip_path(parse(arguments, PathArgs).path)
        sha = str(self.link.run(calls.status()).sha)
        try:
            answer = self.link.run(calls.resolve(requested))
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

        chain = answer.chain or [requested]
        sha = str(answer.sha or sha)
        steps: list[JsonValue] = []
        for before, after in zip(chain, chain[1:], strict=False):
            via = "archive_move" if original_path(after) == before else "supersedes"
            steps.append({"from": before, "to": after, "via": via})
        final = answer.path or chain[-1]
        record, _ = self._read(final, sha)
        if len(steps) >= HOP_LIMIT:
            stop = "hop_limit"
        elif record is not None and record.archived:
            stop = "cycle" if self._supersedes_back(record, chain) else "archived"
        else:
            stop = "live"
        return {
            "requested": requested,
            "path": final,
            "hops": len(steps),
            "steps": steps,
            "stop_reason": stop,
            "title": None if record is None else record.title,
            "indexed_commit": sha,
            "pinned_uri": f"memhtml://at/{sha}/{final}",
        }

    @staticmethod
    def _supersedes_back(record: WireRecord, chain: Sequence[str]) -> bool:
        """A final node that names a chain member as its successor: two memories superseding
        each other, an authoring defect the walk stops on."""
        successor = record.superseded_by
        return bool(successor) and strip_path(str(successor)) in chain

    def memory_neighbors(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, NeighborsArgs)
        request = NeighborsRequest(
            path=strip_path(args.path),
            depth=max(1, min(args.depth or 1, 2)),
            limit=max(1, min(args.limit or NEIGHBORS_MAX, NEIGHBORS_MAX)),
            rels=args.rels or None,
        )
        found: JsonObject = msgspec.to_builtins(self.link.run(calls.neighbors(request)))
        return {key: found[key] for key in _NEIGHBOR_FIELDS}

    def memory_list(self, arguments: JsonInObject) -> JsonObject:
        answer = self.link.run(calls.listing(list_request(arguments)))
        files: list[JsonValue] = [
            {
                **{key: getattr(row, key) for key in LIST_FIELDS},
                "gist": bounded(row.gist or "", MAX_CLAIM_CHARS),
            }
            for row in answer.files
        ]
        return {"files": files, "next_cursor": answer.next_cursor, "sha": answer.sha}

    def memory_status(self, args: JsonInObject) -> JsonObject:
        status, counted = self.link.batch_run(calls.status(), calls.census())
        return {
            "head_sha": counted.sha,
            "dirty": bool(counted.dirty),
            "counts_by_type": {**counted.counts_by_type},
            "archived_count": counted.archived_count,
            "edges": counted.edges,
            # the SQLite index (recall's) reflects the tip; recall itself catches it up first
            "index_fresh": status.index is not None and status.index.indexed_sha == counted.sha,
            "embedder_up": status.embedder not in (None, "off"),
            "vector_coverage": status.vectors.coverage,
            "vector_coverage_floor": counted.vector_coverage_floor,
            "last_sleep": _last_sleep(status.last_sleep),
            "ref": status.ref,
            "records": status.records,
            "skipped": status.skipped,
            "daemon_pid": status.pid,
            # ahead/behind, last error and open conflicts (paths, refs) of the followed remote
            "remote": msgspec.to_builtins(status.remote),
            # Why the followed remote's last round failed (a refused tip, an unreachable host),
            # so an agent sees that the memory no longer follows: status.remote.last_error.
            "remote_error": msgspec.to_builtins(status.remote and status.remote.last_error),
        }

    # -- usage state and traces --------------------------------------------------------------

    def memory_reinforce(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, ReinforceArgs)
        paths = [strip_path(p) for p in args.paths]
        result = self.link.run(calls.reinforce(paths, signal=args.signal))
        return {"bumped": [*result.bumped], "cooled_down": [*result.cooled_down]}

    def trace_search(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, TraceSearchArgs)
        limit = max(1, min(args.limit or 10, 100))
        found = self.link.run(calls.traces_search(args.query, limit=limit))
        cwd = args.cwd
        since = args.since
        sessions: list[JsonValue] = []
        for hit in found.hits:
            if cwd is not None and hit.cwd != cwd:
                continue
            if since is not None and (hit.started_at or "") < since:
                continue
            sessions.append(
                {
                    "session_id": hit.session_id,
                    "slug": hit.slug,
                    "cwd": hit.cwd,
                    "started_at": hit.started_at,
                    "prompt_count": hit.prompt_count,
                    "first_prompt": hit.first_prompt,
                    "ai_title": hit.ai_title,
                }
            )
        return {"sessions": sessions}

    def trace_links(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, TraceLinksArgs)
        session_id, path = args.session_id, args.path
        if session_id is None and path is None:
            raise ToolFailure("ERR_INVALID_MEMORY", "trace links needs a session_id or a path")
        links: list[JsonObject] = []
        if session_id is not None:
            try:
                memories = self.link.run(calls.traces_show(session_id)).memories
            except Exception as exc:
                if getattr(exc, "code", None) != "ERR_PATH_NOT_FOUND":
                    raise
                memories = []
            links.extend(_link_row(m, session_id) for m in memories)
        else:
            links.extend(self._links_for_path(strip_path(str(path))))
        if session_id is not None and path is not None:
            links = [row for row in links if row["path"] == strip_path(str(path))]
        return {"links": [*links]}

    def _links_for_path(self, path: str) -> list[JsonObject]:
        """The state plane's ``memory_session_links`` rows for ``path``, read by the daemon."""
        links = self.link.run(calls.traces_links(path)).links
        return [msgspec.to_builtins(row) for row in links]


def list_request(arguments: JsonInObject) -> ListRequest:
    """memhtml's ``memory_list`` arguments as the daemon's ``list`` request."""
    args = parse(arguments, ListArgs)
    return ListRequest(
        types=None if args.memory_type is None else [args.memory_type],
        workspace=args.workspace,
        tags=None if args.tag is None else [args.tag],
        entity=args.entity,
        facets=args.facets or None,
        para=args.para,
        include_archived=bool(args.include_archived),
        limit=max(1, min(args.limit or LIST_DEFAULT, LIST_MAX)),
        cursor=args.cursor,
    )


_NEIGHBOR_FIELDS = ("nodes", "edges", "node_limit", "dropped_node_count", "scan_saturated")


def _link_row(m: SessionMemory, session_id: str) -> JsonObject:
    return {
        "path": m.path,
        "session_id": session_id,
        "prompt_id": m.prompt_id,
        "turn_uuid": m.turn_uuid,
        "link_kind": m.link_kind,
        "at": m.at,
    }


def _last_sleep(latest: SleepStatusAnswer | None) -> JsonObject | None:
    """The daemon's ``status.last_sleep`` in memhtml's ``memory_status`` shape."""
    if latest is None or not latest.run_id:
        return None
    return {"run_id": latest.run_id, "status": latest.status, "started_at": latest.started_at}
