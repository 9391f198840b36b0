"""memhtml 0.15.1's command line in ``headctl``: ``write``, ``apply``, ``correct``, ``link``,
``archive``, ``list`` and ``neighbors``, with memhtml's arguments, flags and JSON keys.

One implementation: each command builds the arguments of the MCP bridge's tool of the same job
and runs that tool's handler (``headd_client.mcp.tools.Tools``) over the daemon, so a write is
one daemon session committed with ``rebase: auto`` exactly as an agent's is, and the listing,
the neighbourhood and every refusal are the daemon's (``list``, ``neighbors``), shared with the
bridge. What differs is the surface only: memhtml's command line names its JSON keys in
camelCase (``commitSha``, ``memoryType``, ``nextCursor``) where its MCP tools use snake_case,
and prints a person's summary without ``--json``.

Without a daemon, a write says how to start one rather than starting one: ``headctl`` is run by
people and scripts that expect a command to leave no process behind, while the MCP bridge starts
one because an agent has no way to run a command first.

Each command reads the tool's answer through a Struct of the fields it uses (so a missing or
mistyped field fails there, not in a format string) and answers a ``TypedDict`` of memhtml's
output shape: what ``--json`` prints and what the person's summary reads.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TextIO, TypedDict, TypeVar

import msgspec

from headd.errors import DaemonUnavailable
from headd.memfile.vocabulary import MEMORY_RELS, MEMORY_TYPES, TASK_RELS
from headd.wire.browse import LIST_DEFAULT, LIST_MAX, NEIGHBORS_MAX, NeighborNode
from headd_client.headctl_commands import EXIT_OK, Command, Context, UsageError
from headd_client.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from headd_client.mcp.tools import Tools

#: The rels ``link`` takes (memhtml's: the memory rels, and the task rels between two tasks),
#: and those ``neighbors --rel`` narrows to (the memory rels).
RELS = (*MEMORY_RELS, *TASK_RELS)

Out = TypeVar("Out")
S = TypeVar("S")
V = TypeVar("V")


def _read(answer: object, shape: type[S]) -> S:
    """The fields of a tool's answer a command uses, checked against ``shape``."""
    return msgspec.convert(answer, shape, from_attributes=True)


def camel(name: str) -> str:
    """``commit_sha`` as memhtml's command line names it: ``commitSha``."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_keys(row: Mapping[str, V], keys: Sequence[str] | None = None) -> dict[str, V]:
    return {camel(k): row[k] for k in (keys if keys is not None else list(row))}


# -- running one command --------------------------------------------------------------------


def runner(
    answer: Callable[[Tools, argparse.Namespace, Context], Out],
    human: Callable[[Out, TextIO], None],
    plain: Callable[[Out], object] | None = None,
) -> Callable[[argparse.Namespace, Context], int]:
    """The ``local`` runner of a command: the tool's answer over the daemon, shown; ``--json``
    prints ``plain`` of it (the answer itself by default)."""

    def run(args: argparse.Namespace, ctx: Context) -> int:
        from headd_client.mcp.failures import ToolFailure
        from headd_client.mcp.spawn import DaemonLink
        from headd_client.mcp.tools import Tools

        link = DaemonLink(ctx.store, ctx.socket, spawn=False, timeout=args.timeout)
        try:
            result = answer(Tools(link, ctx.store), args, ctx)
        except DaemonUnavailable as exc:
            raise DaemonUnavailable(
                f"no daemon answers on {ctx.socket}", {"socket": str(ctx.socket)}
            ) from exc
        except ToolFailure as failure:
            return _report(failure.code, failure.message, failure.details, args, ctx)
        except OpLineError as exc:
            return _report(exc.code, f"apply: {exc}", {}, args, ctx, usage=True)
        finally:
            link.close()
        if args.json:
            shown = result if plain is None else plain(result)
            ctx.stdout.write(json.dumps(shown, ensure_ascii=False) + "\n")
        else:
            human(result, ctx.stdout)
        return EXIT_OK

    return run


def _report(
    code: str,
    message: str,
    details: Mapping[str, object],
    args: argparse.Namespace,
    ctx: Context,
    *,
    usage: bool = False,
) -> int:
    from headd_client.headctl_commands import EXIT_FAILURE, EXIT_USAGE, Failure

    status = EXIT_USAGE if usage or code == "ERR_INVALID_PARAMS" else EXIT_FAILURE
    return Failure(code, message, status, details).report(args.json, ctx.stdout, ctx.stderr)


def _content_hash(tools: Tools, path: str | None) -> str | None:
    from headd_client import calls

    if path is None:
        return None
    record = tools.link.run(calls.read(path)).record
    return None if record is None else record.content_hash


def provenance(args: argparse.Namespace) -> dict[str, str | None]:
    return {"session_id": args.session_id, "prompt_id": args.prompt_id, "turn_uuid": args.turn_uuid}


def provenance_flags(p: argparse.ArgumentParser, what: str = "Stamped into the head") -> None:
    p.add_argument("--session-id", metavar="ID", help=f"the agent session that wrote this ({what})")
    p.add_argument("--prompt-id", metavar="ID", help="the prompt within that session")
    p.add_argument("--turn-uuid", metavar="ID", help="the turn within that session")


def _content_flags(p: argparse.ArgumentParser, *, type_required: bool) -> None:
    p.add_argument("--title", required=True, help="the memory's title (and its file name's slug)")
    p.add_argument(
        "--claim",
        help="the one load-bearing sentence (the <mark>); exactly one of --claim or --article-html",
    )
    p.add_argument(
        "--body",
        action="append",
        metavar="TEXT",
        help="a prose paragraph after the claim (repeatable, one <p> each)",
    )
    p.add_argument(
        "--article-html",
        metavar="HTML",
        help="raw <article> markup in place of --claim/--body: exactly one <mark> in the first "
        "<p> or <li>",
    )
    p.add_argument(
        "--type",
        dest="memory_type",
        choices=MEMORY_TYPES,
        required=type_required,
        metavar="TYPE",
        help=f"the memory type: {', '.join(MEMORY_TYPES)}"
        + ("" if type_required else " (default: the target's)"),
    )


def _content(args: argparse.Namespace) -> JsonObject:
    """The claim, body and markup of a write or a correction; memhtml's refusals of both or
    neither are the bridge's (``ERR_INVALID_MEMORY``)."""
    if args.claim is None and args.article_html is None:
        raise UsageError("exactly one of --claim or --article-html is required")
    out: JsonObject = {"title": args.title, "claim": args.claim}
    if args.article_html is not None:
        out["article_html"] = args.article_html
    else:
        out["body"] = list(args.body or ())
    return out


# -- write ----------------------------------------------------------------------------------


def _write_args(p: argparse.ArgumentParser) -> None:
    _content_flags(p, type_required=True)
    p.add_argument(
        "--path",
        metavar="PATH",
        help="an explicit path; an unusable one is ignored (placement decides) unless "
        "--strict-path, an occupied one is refused (ERR_WRITE_CONFLICT)",
    )
    p.add_argument(
        "--strict-path",
        action="store_true",
        help="refuse an unusable --path (ERR_INVALID_MEMORY) instead of placing the memory",
    )
    p.add_argument("--workspace", metavar="SLUG", help="route the memory to projects/<slug>/")
    p.add_argument(
        "--tag",
        action="append",
        metavar="TAG",
        help="a tag (repeatable; the first routes an unplaced resource memory)",
    )
    p.add_argument(
        "--entity",
        action="append",
        metavar="TYPE:NAME",
        help="an entity reference such as service:checkout-api (repeatable)",
    )
    p.add_argument("--importance", type=int, metavar="1-10", help="a display ordinal, 1-10")
    p.add_argument("--confidence", type=float, metavar="0-1", help="1.0 is unqualified")
    provenance_flags(p)


class WriteDone(msgspec.Struct):
    """What ``write`` and ``task add`` read of the bridge's ``memory_write`` answer."""

    path: str
    created: bool
    deduped: bool
    existing_path: str | None = None
    commit_sha: str | None = None


class Written(TypedDict):
    """memhtml's ``write --json``."""

    path: str
    created: bool
    deduped: bool
    existingPath: NotRequired[str | None]
    commitSha: str | None
    contentHash: str | None


def _write(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Written:
    answer = tools.memory_write(
        {
            **_content(args),
            "memory_type": args.memory_type,
            "path": args.path,
            "strict_path": args.strict_path,
            "workspace": args.workspace,
            "tags": args.tag,
            "entities": args.entity,
            "importance": args.importance,
            "confidence": args.confidence,
            **provenance(args),
        }
    )
    written = _read(answer, WriteDone)
    content_hash = _content_hash(tools, written.path)
    if written.deduped:
        return {
            "path": written.path,
            "created": written.created,
            "deduped": written.deduped,
            "existingPath": written.existing_path,
            "commitSha": written.commit_sha,
            "contentHash": content_hash,
        }
    return {
        "path": written.path,
        "created": written.created,
        "deduped": written.deduped,
        "commitSha": written.commit_sha,
        "contentHash": content_hash,
    }


def _show_written(result: Written, out: TextIO) -> None:
    if result["deduped"]:
        out.write(f"already held at {result.get('existingPath')} (nothing written)\n")
        return
    out.write(f"wrote {result['path']}  commit {str(result['commitSha'])[:12]}\n")


# -- apply ----------------------------------------------------------------------------------

APPLY_EPILOG = """\
The op stream is JSON Lines: one complete object per line, each a write:

  {"op":"write","title":"Pool size is forty","type":"semantic","body":"The pool size is forty."}

Fields: op ("write"), title, type, body (prose: its first sentence is the claim) or
article_html, path, strict_path, workspace, tag, tags, entity, entities, importance,
confidence, status and due (tasks), session_id, prompt_id, turn_uuid. Every line is checked
before any op runs; by default the first refused op aborts the batch and nothing is written.
"""

#: The fields an ``apply`` line may carry (memhtml's).
OP_FIELDS = frozenset(
    {
        "article_html",
        "body",
        "confidence",
        "due",
        "entities",
        "entity",
        "importance",
        "op",
        "path",
        "prompt_id",
        "session_id",
        "status",
        "strict_path",
        "tag",
        "tags",
        "title",
        "turn_uuid",
        "type",
        "workspace",
    }
)


def _apply_args(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = APPLY_EPILOG
    p.add_argument("source", nargs="?", metavar="-", help="`-` reads the stream from stdin")
    p.add_argument("--file", metavar="F", help="the JSONL file (`-` or omitted: stdin)")
    p.add_argument(
        "--continue-on-error",
        action="store_true",
        help="best effort: report and skip a refused op, land the rest in the one commit",
    )
    p.add_argument(
        "--detect-conflicts",
        action="store_true",
        help="report each op's claim-slot clash with an active memory as its `conflict`",
    )
    p.add_argument(
        "--detect-near-duplicates",
        action="store_true",
        help="report each op's near duplicates (cosine >= 0.92 against active memories and earlier"
        " ops, through the daemon's embedder; near_duplicates_degraded when none runs)",
    )
    p.add_argument(
        "--consolidate",
        choices=("last-wins",),
        help="resolve claim-slot matches: the later op's value wins the slot (written at the first"
        " index that claimed it, each restatement answering `consolidated_into`) and a stored"
        " active memory holding the slot is archived as superseded (`superseded_path`)",
    )
    provenance_flags(p, "for every op that names none")


def _read_stream(args: argparse.Namespace, stdin: TextIO) -> str:
    if args.source not in (None, "-"):
        raise UsageError(f"unexpected argument: {args.source!r}; apply reads --file or stdin")
    if args.file not in (None, "-") and args.source == "-":
        raise UsageError("stdin beside a real --file is refused: pass one of them")
    if args.file in (None, "-"):
        return stdin.read()
    try:
        with open(args.file, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{args.file} is not UTF-8 text") from None


class OpLineError(UsageError):
    """A line of an op stream that is not a write op: a usage error with memhtml's code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse_op_lines(text: str) -> list[JsonObject]:
    """Every line of the stream as a bridge write op, or UsageError naming the first bad line:
    the whole stream is checked before any op runs."""
    ops: list[JsonObject] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise OpLineError(
                "ERR_INVALID_FLAG",
                f"line {number}: not valid JSON ({exc.msg}); every line is one complete JSON "
                "object",
            ) from None
        if not isinstance(raw, dict):
            raise OpLineError("ERR_INVALID_FLAG", f"line {number}: not a JSON object")
        unknown = sorted(set(raw) - OP_FIELDS)
        if unknown:
            raise OpLineError(
                "ERR_INVALID_FLAG",
                f"line {number}: unknown field `{unknown[0]}`. "
                f"Fields: {', '.join(sorted(OP_FIELDS))}",
            )
        if raw.get("op") != "write":
            raise OpLineError(
                "ERR_MISSING_ARGUMENT", f"line {number}: missing required field `op`. One of: write"
            )
        for field in ("title", "type"):
            if not isinstance(raw.get(field), str):
                raise OpLineError(
                    "ERR_MISSING_ARGUMENT", f"line {number}: missing required field `{field}`"
                )
        ops.append(_bridge_op(raw))
    return ops


def _many(value: JsonValue) -> list[JsonValue]:
    """A list field of an op line (``tags``, ``entities``) as a list; one value is a list of one."""
    if isinstance(value, list):
        return value
    return [value] if value else []


def _bridge_op(raw: JsonObject) -> JsonObject:
    tags = [*_many(raw.get("tags")), *([raw["tag"]] if raw.get("tag") else [])]
    entities = [*_many(raw.get("entities")), *([raw["entity"]] if raw.get("entity") else [])]
    op: JsonObject = {
        "title": raw["title"],
        "memory_type": raw["type"],
        "tags": tags or None,
        "entities": entities or None,
        "task_status": raw.get("status"),
    }
    for field in (
        "body",
        "article_html",
        "path",
        "strict_path",
        "workspace",
        "importance",
        "confidence",
        "due",
    ):
        if raw.get(field) is not None:
            op[field] = raw[field]
    return op


def _apply(tools: Tools, args: argparse.Namespace, ctx: Context) -> JsonObject:
    ops: list[JsonValue] = [*parse_op_lines(_read_stream(args, ctx.stdin))]
    if not ops:
        raise UsageError("the op stream is empty: one JSON object per line")
    result: JsonObject = tools.memory_write_batch(
        {
            "ops": ops,
            "continue_on_error": args.continue_on_error,
            "detect_conflicts": args.detect_conflicts,
            "detect_near_duplicates": args.detect_near_duplicates,
            "consolidate": args.consolidate,
            **provenance(args),
        }
    )
    return result


class _Summary(msgspec.Struct):
    written: int
    deduped: int
    failed: int
    skipped: int


class _BatchRow(msgspec.Struct):
    index: int
    path: str | None = None
    deduped: bool = False
    code: str | None = None
    error: str | None = None
    skipped: bool = False


class _Batch(msgspec.Struct):
    """What the summary of ``apply`` reads of the bridge's batch answer."""

    summary: _Summary
    results: list[_BatchRow]
    commit_sha: str | None = None


def _show_applied(result: JsonObject, out: TextIO) -> None:
    batch = _read(result, _Batch)
    summary = batch.summary
    out.write(
        f"{summary.written} written, {summary.deduped} deduped, {summary.failed} "
        f"failed, {summary.skipped} skipped"
        + (f"  commit {batch.commit_sha[:12]}" if batch.commit_sha else "")
        + "\n"
    )
    for row in batch.results:
        if row.code:
            out.write(f"  {row.index:>4}  {row.code}: {row.error}\n")
        elif row.path and not row.skipped:
            note = "  (deduped)" if row.deduped else ""
            out.write(f"  {row.index:>4}  {row.path}{note}\n")


# -- correct, link, archive -------------------------------------------------------------------


def _correct_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help="the memory being corrected")
    _content_flags(p, type_required=False)
    p.add_argument("--reason", help="why the correction was made (in the commit message)")
    provenance_flags(p, "records a `corrected` session link")


class _CorrectDone(msgspec.Struct):
    path: str
    archived: list[str]
    commit_sha: str | None = None


class Corrected(TypedDict):
    """memhtml's ``correct --json``."""

    path: str
    archivedPath: str
    commitSha: str | None
    contentHash: str | None


def _correct(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Corrected:
    answer = tools.memory_correct(
        {
            **_content(args),
            "target_path": args.target,
            "memory_type": args.memory_type,
            "reason": args.reason,
            **provenance(args),
        }
    )
    corrected = _read(answer, _CorrectDone)
    return {
        "path": corrected.path,
        "archivedPath": corrected.archived[0],
        "commitSha": corrected.commit_sha,
        "contentHash": _content_hash(tools, corrected.path),
    }


def _show_corrected(result: Corrected, out: TextIO) -> None:
    out.write(
        f"wrote {result['path']}, archived {result['archivedPath']}  "
        f"commit {str(result['commitSha'])[:12]}\n"
    )


def _link_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", metavar="SRC", help="the memory the link is written in")
    p.add_argument("rel", metavar="REL", choices=RELS, help=f"the relation: {', '.join(RELS)}")
    p.add_argument("dst", metavar="DST", help="the memory it points at")


class _LinkDone(msgspec.Struct):
    rel: str
    src_path: str
    dst_path: str
    commit_sha: str | None = None


class Linked(TypedDict):
    """memhtml's ``link --json``."""

    commitSha: str | None
    srcPath: str
    dstPath: str
    rel: str


def _link(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Linked:
    answer = tools.memory_link({"src_path": args.src, "rel": args.rel, "dst_path": args.dst})
    linked = _read(answer, _LinkDone)
    return {
        "commitSha": linked.commit_sha,
        "srcPath": linked.src_path,
        "dstPath": linked.dst_path,
        "rel": linked.rel,
    }


def _show_linked(result: Linked, out: TextIO) -> None:
    sha = result["commitSha"]
    tail = f"  commit {str(sha)[:12]}" if sha else "  (already linked: nothing committed)"
    out.write(f"{result['srcPath']} -{result['rel']}-> {result['dstPath']}{tail}\n")


def _archive_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="the memory to archive")
    p.add_argument("--reason", required=True, help="why (in the commit message)")


class _ArchiveDone(msgspec.Struct):
    path: str
    archive_path: str
    commit_sha: str | None = None


class Archived(TypedDict):
    """memhtml's ``archive --json``."""

    path: str
    archivePath: str
    commitSha: str | None


def _archive(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Archived:
    answer = tools.memory_archive({"path": args.path, "reason": args.reason})
    moved = _read(answer, _ArchiveDone)
    return {"path": moved.path, "archivePath": moved.archive_path, "commitSha": moved.commit_sha}


def _show_archived(result: Archived, out: TextIO) -> None:
    out.write(
        f"archived {result['path']} -> {result['archivePath']}  "
        f"commit {str(result['commitSha'])[:12]}\n"
    )


# -- list and neighbors ----------------------------------------------------------------------


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--type",
        dest="memory_type",
        choices=MEMORY_TYPES,
        metavar="TYPE",
        help=f"only this type: {', '.join(MEMORY_TYPES)} (default every type, tasks included)",
    )
    p.add_argument("--workspace", metavar="SLUG", help="only this workspace")
    p.add_argument("--tag", metavar="TAG", help="only memories with this tag")
    p.add_argument("--entity", metavar="TYPE:NAME", help="only memories naming this entity")
    p.add_argument(
        "--facet",
        action="append",
        metavar="NAME=VALUE",
        help="only memories with this facet (repeatable: values of one name broaden, names narrow)",
    )
    p.add_argument(
        "--para",
        choices=("projects", "areas", "resources", "archive"),
        help="only this PARA bucket (archive lists archived memories)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=LIST_DEFAULT,
        metavar="N",
        help=f"at most N rows (default {LIST_DEFAULT}, at most {LIST_MAX})",
    )
    p.add_argument("--cursor", metavar="PATH", help="the nextCursor of the previous page")
    p.add_argument("--include-archived", action="store_true", help="list archived memories too")


ListCell = str | int | float | bool | list[str] | None
"""One value of a listed row (``headd.wire.browse.ListedFile``'s fields: text, numbers, flags,
tags and entities)."""


class Listing(TypedDict):
    """memhtml's ``list --json``: the bridge's rows with camelCase keys, and the next page's
    cursor."""

    files: list[dict[str, ListCell]]
    nextCursor: str | None


class _ListPage(msgspec.Struct):
    files: list[dict[str, ListCell]]
    next_cursor: str | None = None


class _ListedRow(msgspec.Struct, rename="camel"):
    """What the summary of ``list`` shows of a row."""

    path: str
    title: str
    memory_type: str
    archived: bool = False


def _list(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Listing:
    answer = tools.memory_list(
        {
            "memory_type": args.memory_type,
            "workspace": args.workspace,
            "tag": args.tag,
            "entity": args.entity,
            "facets": args.facet,
            "para": args.para,
            "limit": args.limit,
            "cursor": args.cursor,
            "include_archived": args.include_archived,
        }
    )
    page = _read(answer, _ListPage)
    return {"files": [camel_keys(row) for row in page.files], "nextCursor": page.next_cursor}


def _show_list(result: Listing, out: TextIO) -> None:
    files = _read(result["files"], list[_ListedRow])
    width = max((len(f.memory_type) for f in files), default=0)
    for row in files:
        mark = "  (archived)" if row.archived else ""
        out.write(f"{row.memory_type:<{width}}  {row.path}  {row.title}{mark}\n")
    if result["nextCursor"]:
        out.write(f"more: --cursor {result['nextCursor']}\n")
    elif not files:
        out.write("no memories\n")


def _neighbors_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="the memory at the centre")
    p.add_argument("--depth", type=int, default=1, choices=(1, 2), help="hops (1 or 2)")
    p.add_argument(
        "--limit",
        type=int,
        default=NEIGHBORS_MAX,
        metavar="N",
        help=f"at most N nodes (default and ceiling {NEIGHBORS_MAX})",
    )
    p.add_argument(
        "--rel",
        action="append",
        choices=MEMORY_RELS,
        metavar="REL",
        help=f"only links of this relation (repeatable): {', '.join(MEMORY_RELS)}",
    )


class _Neighborhood(msgspec.Struct):
    nodes: list[NeighborNode]
    edges: int
    node_limit: int
    dropped_node_count: int
    scan_saturated: bool = False


class Neighborhood(TypedDict):
    """memhtml's ``neighbors --json``."""

    center: str
    depth: int
    limit: int
    nodes: list[JsonObject]
    edges: int
    nodesDropped: int
    scanSaturated: bool


def _neighbors(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Neighborhood:
    center = args.path.strip().lstrip("/")
    answer = tools.memory_neighbors(
        {"path": center, "depth": args.depth, "limit": args.limit, "rels": args.rel}
    )
    found = _read(answer, _Neighborhood)
    return {
        "center": center,
        "depth": args.depth,
        "limit": found.node_limit,
        "nodes": [msgspec.to_builtins(node) for node in found.nodes],
        "edges": found.edges,
        "nodesDropped": found.dropped_node_count,
        "scanSaturated": found.scan_saturated,
    }


def _show_neighbors(result: Neighborhood, out: TextIO) -> None:
    nodes = _read(result["nodes"], list[NeighborNode])
    for node in nodes:
        out.write(f"{node.hop}  {node.rel:<18}  {node.path}  {node.title}\n")
    if not nodes:
        out.write(f"no neighbours of {result['center']}\n")


# -- the table ------------------------------------------------------------------------------


def commands() -> list[Command]:
    def command(
        word: str,
        help_: str,
        arguments: Callable[[argparse.ArgumentParser], None],
        local: Callable[[argparse.Namespace, Context], int],
    ) -> Command:
        return Command((word,), help_, arguments, local=local)

    return [
        command(
            "write",
            "write one memory: one session, one commit (a duplicate returns its path)",
            _write_args,
            runner(_write, _show_written),
        ),
        command(
            "apply",
            "write many memories from a JSONL op stream: one commit, per-op results",
            _apply_args,
            runner(_apply, _show_applied),
        ),
        command(
            "correct",
            "supersede a memory: write the new one and archive the target in one commit",
            _correct_args,
            runner(_correct, _show_corrected),
        ),
        command(
            "link",
            "add a typed link between two memories (idempotent)",
            _link_args,
            runner(_link, _show_linked),
        ),
        command(
            "archive",
            "move a memory to archive/<year>/ with its archive stamps",
            _archive_args,
            runner(_archive, _show_archived),
        ),
        command(
            "list",
            "page through memories in path order, by type, workspace, tag, entity, facet",
            _list_args,
            runner(_list, _show_list),
        ),
        command(
            "neighbors",
            "the memories linked to a memory, either way, one or two hops out",
            _neighbors_args,
            runner(_neighbors, _show_neighbors),
        ),
    ]
