"""Test vectors for the memory-file writer, read from the anchor corpus.

The corpus records every input memhtml 0.15.1 was given (``build-log.jsonl``, ``ops/*.jsonl``)
and the store's git history records every file it produced, at the commit that produced it. This
module pairs them: each ``WriteVector`` is one successful write with the fields its door built,
the path the tool chose, the paths that were taken at that moment, and the exact text the tool
wrote. The tool's clock is an input like any other: ``now`` is read back from the file it wrote.

The one boundary we fake is highlight.js's guess for an unlabeled fence: ``RecordedDetector``
answers with the language the tool stamped for that exact code (a recorded outcome, like a
deterministic embedder), and nothing else.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pygit2

from headd.memfile.render import Fence, MemoryFields, fields_from_write, split_prose
from support.data import ANCHOR


def instant(stamp: str) -> datetime:
    """A ``YYYY-MM-DDThh:mm:ssZ`` meta value as an aware datetime."""
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def meta_value(html: str, name: str) -> str | None:
    """A meta's content by a plain regex (independent of the code under test)."""
    m = re.search(rf'<meta name="memhtml-{name}" content="([^"]*)">', html)
    return m.group(1) if m else None


@dataclass
class StoreHistory:
    """The anchor store's history: for each path, the commit that first added it and its text."""

    repo: pygit2.Repository
    added: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (commit, text)
    parent_paths: dict[str, frozenset[str]] = field(default_factory=dict)  # commit -> paths

    @classmethod
    def load(cls, store: Path) -> StoreHistory:
        repo = pygit2.Repository(str(store))
        history = cls(repo=repo)
        walker = repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL)
        commits = list(walker)[::-1]
        for commit in commits:
            before = history.tree_paths(commit.parents[0].tree) if commit.parents else frozenset()
            history.parent_paths[str(commit.id)] = before
            for path in history.tree_paths(commit.tree) - before:
                if path not in history.added:
                    history.added[path] = (str(commit.id), history.text_at(commit.tree, path))
        return history

    def tree_paths(self, tree: pygit2.Tree, prefix: str = "") -> frozenset[str]:
        out: set[str] = set()
        for entry in tree:
            path = prefix + entry.name
            if entry.type_str == "tree":
                out |= self.tree_paths(self.repo[entry.id], path + "/")  # type: ignore[arg-type]
            else:
                out.add(path)
        return frozenset(out)

    def text_at(self, tree: pygit2.Tree, path: str) -> str:
        blob = self.repo[tree[path].id]
        return blob.data.decode("utf-8")  # type: ignore[attr-defined]

    def text(self, commit: str, path: str) -> str:
        return self.text_at(self.repo[commit].tree, path)  # type: ignore[attr-defined]

    def blob_text(self, blob_sha: str) -> str:
        return self.repo[blob_sha].data.decode("utf-8")  # type: ignore[attr-defined]


class RecordedDetector:
    """highlight.js's recorded verdicts for unlabeled fences: code -> language it stamped."""

    def __init__(self, verdicts: dict[str, str]) -> None:
        self.verdicts = verdicts

    def __call__(self, code: str) -> str | None:
        return self.verdicts.get(code)


@dataclass
class WriteVector:
    """One successful write: its door's fields, the tool's path choice and the tool's text."""

    label: str
    fields: MemoryFields
    path: str
    explicit_path: str | None
    strict_path: bool
    commit: str
    taken: frozenset[str]
    text: str
    door: str
    previous: str | None = None  # correct: the path being corrected


def _listf(op: dict[str, Any], *names: str) -> list[str]:
    out: list[str] = []
    for name in names:
        value = op.get(name)
        if value is None:
            continue
        out.extend([value] if isinstance(value, str) else value)
    return [v for v in out if v != ""]


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def _apply_fields(op: dict[str, Any], now: datetime) -> MemoryFields:
    return fields_from_write(
        title=op["title"],
        memory_type=op["type"],
        now=now,
        body=op.get("body"),
        article_html=op.get("article_html"),
        tags=_listf(op, "tag", "tags"),
        entities=_listf(op, "entity", "entities"),
        workspace=op.get("workspace"),
        importance=_num(op.get("importance")),
        confidence=_num(op.get("confidence")),
        task_status=op.get("status"),
        due=op.get("due"),
        session_id=op.get("session_id"),
        prompt_id=op.get("prompt_id"),
        turn_uuid=op.get("turn_uuid"),
    )


def _argv_options(argv: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """(positional arguments, options: name -> values); flags map to ``["true"]``."""
    flags = {"--strict-path", "--dense"}
    positional: list[str] = []
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in flags:
            options.setdefault(arg, []).append("true")
            i += 1
        elif arg.startswith("--"):
            options.setdefault(arg, []).append(argv[i + 1])
            i += 2
        else:
            positional.append(arg)
            i += 1
    return positional, options


def _cli_fields(
    verb: str, options: dict[str, list[str]], now: datetime, default_type: str | None
) -> MemoryFields:
    one = lambda name: (options.get(name) or [None])[-1]  # noqa: E731
    title = one("--title") or ""
    claim = one("--claim")
    bodies = options.get("--body", [])
    memory_type = "task" if verb == "task" else (one("--type") or default_type or "semantic")
    if verb == "task" and claim is None:
        claim = title  # `task add` without --claim: the title is the claim
    if claim is None and bodies and one("--article-html") is None:
        claim, rest = split_prose("\n\n".join(bodies))
        bodies = list(rest)
    return fields_from_write(
        title=title,
        memory_type=memory_type,
        now=now,
        claim=claim or "",
        body=bodies,
        article_html=one("--article-html"),
        tags=options.get("--tag", []),
        entities=options.get("--entity", []),
        workspace=one("--workspace"),
        importance=_num(one("--importance")),
        confidence=_num(one("--confidence")),
        task_status=one("--status"),
        due=one("--due"),
        session_id=one("--session-id"),
        prompt_id=one("--prompt-id"),
        turn_uuid=one("--turn-uuid"),
    )


def write_vectors(anchor: Path, history: StoreHistory) -> list[WriteVector]:
    """Every successful write of the build log (apply batches, write, task add, correct)."""
    log = [
        json.loads(line)
        for line in (anchor / "build-log.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    vectors: list[WriteVector] = []
    for entry in log:
        argv, envelope = entry["argv"], entry["envelope"]
        if entry["rc"] != 0:
            continue
        data = envelope["data"]
        if argv[1] == "apply":
            ops_file = anchor / argv[argv.index("--file") + 1]
            ops = [json.loads(line) for line in ops_file.read_text(encoding="utf-8").splitlines()]
            commit = data.get("commit_sha")
            if commit is None:
                continue
            claimed: set[str] = set()
            # Under --consolidate last-wins, a later op folds into an earlier result: the file
            # at that result's path holds the LAST op's content.
            winner = {
                r["consolidated_into"]: r["index"]
                for r in data["results"]
                if "consolidated_into" in r
            }
            for result in data["results"]:
                if not result.get("ok") or result.get("deduped") or "path" not in result:
                    continue
                op = ops[winner.get(result["index"], result["index"])]
                path = result["path"]
                added_commit, text = history.added[path]
                taken = history.parent_paths[commit] | claimed
                claimed.add(path)
                vectors.append(
                    WriteVector(
                        label=f"{ops_file.stem}#{result['index']}",
                        fields=_apply_fields(op, instant(meta_value(text, "created") or "")),
                        path=path,
                        explicit_path=op.get("path"),
                        strict_path=bool(op.get("strict_path")),
                        commit=commit,
                        taken=taken,
                        text=text,
                        door="apply-consolidate" if "--consolidate" in argv else "apply",
                    )
                )
        elif argv[1] in ("write", "task", "correct") and (argv[1] != "task" or argv[2] == "add"):
            if data.get("deduped") or "commitSha" not in data:
                continue
            positional, options = _argv_options(argv[2:])
            path = data["path"]
            commit = data["commitSha"]
            added_commit, text = history.added[path]
            previous = positional[0] if argv[1] == "correct" else None
            default_type = None
            if previous is not None:
                default_type = meta_value(
                    history.text(history_parent(history, commit), previous), "type"
                )
            vectors.append(
                WriteVector(
                    label=f"seq{entry['seq']}:{argv[1]}",
                    fields=_cli_fields(
                        argv[1], options, instant(meta_value(text, "created") or ""), default_type
                    ),
                    path=path,
                    explicit_path=(options.get("--path") or [None])[-1],
                    strict_path="--strict-path" in options,
                    commit=commit,
                    taken=history.parent_paths[commit],
                    text=text,
                    door=argv[1],
                    previous=previous,
                )
            )
    return vectors


def history_parent(history: StoreHistory, commit: str) -> str:
    """The first parent of ``commit``."""
    return str(history.repo[commit].parents[0].id)  # type: ignore[attr-defined]


def recorded_detector(vectors: list[WriteVector]) -> RecordedDetector:
    """The languages the tool stamped on fences whose info string named none."""
    verdicts: dict[str, str] = {}
    for vector in vectors:
        for part in vector.fields.body:
            fence = part if isinstance(part, Fence) else None
            if fence is None and isinstance(part, str):
                from headd.memfile.render import fence_of

                fence = fence_of(part)
            if fence is None or fence.lang is not None:
                continue
            from headd.memfile.render import escape_text

            m = re.search(
                r'<code data-lang="([^"]*)">' + re.escape(escape_text(fence.code)) + "</code>",
                vector.text,
            )
            if m:
                verdicts[fence.code] = m.group(1)
    return RecordedDetector(verdicts)


@dataclass
class HeadEditVector:
    """One commit of ``head-only-edits.jsonl`` with the CLI call that made it."""

    commit: str
    subject: str
    status: str
    path_before: str
    path_after: str
    before: str
    blob_after: str
    after: str  # read only for the tool's clock at that commit (the stamps it wrote)
    content_hash_before: str
    argv: list[str] | None
    data: dict[str, Any]  # the build log's result for the call (paths it reported)


def head_edit_vectors(anchor: Path, history: StoreHistory) -> list[HeadEditVector]:
    """Every recorded head-only edit, its text before, and the call that made it (a
    consolidation commit is listed in the log under its batch's result)."""
    log = [
        json.loads(line) for line in (anchor / "build-log.jsonl").read_text("utf-8").splitlines()
    ]
    by_commit: dict[str, tuple[list[str], dict[str, Any]]] = {}
    supersessions: list[tuple[list[str], dict[str, Any]]] = []
    for entry in log:
        data = entry["envelope"].get("data") or {}
        sha = data.get("commitSha") or data.get("commit_sha")
        if sha:
            by_commit[sha] = (entry["argv"], data)
        for result in data.get("results", []):
            if "superseded_path" in result:
                supersessions.append((entry["argv"], result))
    out: list[HeadEditVector] = []
    for line in (anchor / "head-only-edits.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        argv, data = by_commit.get(row["commit"], (None, {}))
        if argv is None:  # a consolidation: listed under its batch, by the paths it touched
            for batch_argv, result in supersessions:
                if row["path_after"] in (result["path"], result["superseded_path"]):
                    argv, data = batch_argv, result
        out.append(
            HeadEditVector(
                commit=row["commit"],
                subject=row["subject"],
                status=row["status"],
                path_before=row["path_before"],
                path_after=row["path_after"],
                before=history.blob_text(row["blob_before"]),
                blob_after=row["blob_after"],
                after=history.blob_text(row["blob_after"]),
                content_hash_before=row["content_hash_before"],
                argv=argv,
                data=data,
            )
        )
    return out


# Loaded once a run, whichever writer test module asks first.


@functools.cache
def cached_history(store: Path) -> StoreHistory:
    """The anchor store's history (see :class:`StoreHistory`)."""
    return StoreHistory.load(store)


@functools.cache
def cached_write_vectors(store: Path) -> tuple[WriteVector, ...]:
    """Every successful write of the build log (see :func:`write_vectors`)."""
    return tuple(write_vectors(ANCHOR, cached_history(store)))


@functools.cache
def cached_head_edits(store: Path) -> tuple[HeadEditVector, ...]:
    """Every recorded head-only edit (see :func:`head_edit_vectors`)."""
    return tuple(head_edit_vectors(ANCHOR, cached_history(store)))
