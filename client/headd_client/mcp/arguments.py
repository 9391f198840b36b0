"""The tools' arguments as typed values: one Struct per tool, converted at the edge.

A tool's arguments arrive as JSON the model wrote, are checked against the tool's input schema
(``shapes.check_arguments_against``, whose wording the agent reads), and only then become one of
these Structs, so a handler reads ``args.title`` as a ``str`` where it read ``args.get(...)``.
``headctl``'s commands and the console call the handlers with the same mappings, plus the
fields the command line alone offers (``claim``, ``task_status``, ``due``); unknown fields are
ignored, as the schema check has already refused them for a model. A value the schema check let
through and the Struct does not take is ``ERR_INVALID_PARAMS``, naming the argument.
"""

from __future__ import annotations

from typing import Literal, TypeVar

import msgspec

from headd_client.json_types import JsonInObject
from headd_client.mcp.failures import ToolFailure

S = TypeVar("S", bound=msgspec.Struct)

Signal = Literal["neutral", "positive", "negative"]


def parse(args: JsonInObject, kind: type[S]) -> S:
    """``args`` as ``kind``; a value of another type is the caller's ``ERR_INVALID_PARAMS``."""
    try:
        return msgspec.convert(dict(args), kind)
    except msgspec.ValidationError as exc:
        raise ToolFailure("ERR_INVALID_PARAMS", f"invalid argument: {exc}") from None


class Attributed(msgspec.Struct, kw_only=True):
    """A write's provenance: the agent session, prompt and turn it came from."""

    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None


class WriteArgs(Attributed, kw_only=True):
    """``memory_write``, one op of ``memory_write_batch``, and a correction's new content."""

    title: str
    memory_type: str
    body: str | list[str] | None = None
    article_html: str | None = None
    claim: str | None = None
    path: str | None = None
    strict_path: bool | None = None
    workspace: str | None = None
    tags: list[str] | None = None
    entities: list[str] | None = None
    # int or float as given: a rendered memory writes the number as it came
    importance: int | float | None = None
    confidence: int | float | None = None
    task_status: str | None = None
    due: str | None = None


class BatchArgs(Attributed, kw_only=True):
    ops: list[WriteArgs]
    continue_on_error: bool | None = None
    detect_conflicts: bool | None = None
    detect_near_duplicates: bool | None = None
    consolidate: str | None = None


class CorrectArgs(Attributed, kw_only=True):
    target_path: str
    title: str
    body: str | list[str] | None = None
    article_html: str | None = None
    claim: str | None = None
    memory_type: str | None = None
    reason: str | None = None


class LinkArgs(msgspec.Struct, kw_only=True):
    src_path: str
    rel: str
    dst_path: str


class ArchiveArgs(msgspec.Struct, kw_only=True):
    path: str
    reason: str | None = None


class PathArgs(msgspec.Struct, kw_only=True):
    """``memory_read`` and ``memory_resolve``."""

    path: str


class SearchArgs(msgspec.Struct, kw_only=True):
    query: str
    limit: int | None = None
    memory_types: list[str] | None = None
    workspace: str | None = None
    tags: list[str] | None = None
    entity: str | None = None
    facets: list[str] | None = None
    include_archived: bool | None = None
    as_of: str | None = None

    def narrows(self) -> bool:
        """Whether the scope can empty the search (memhtml's ``scopeNarrows``): a type,
        workspace, tag, entity or facet was asked for."""
        return bool(
            self.memory_types
            or self.workspace
            or any(tag.strip() for tag in self.tags or ())
            or self.entity
            or any("=" in facet for facet in self.facets or ())
        )


class ListArgs(msgspec.Struct, kw_only=True):
    memory_type: str | None = None
    workspace: str | None = None
    tag: str | None = None
    entity: str | None = None
    facets: list[str] | None = None
    para: str | None = None
    include_archived: bool | None = None
    limit: int | None = None
    cursor: str | None = None


class NeighborsArgs(msgspec.Struct, kw_only=True):
    path: str
    depth: int | None = None
    limit: int | None = None
    rels: list[str] | None = None


class RecallArgs(msgspec.Struct, kw_only=True):
    query: str
    budget_chars: int | None = None
    workspace: str | None = None


class TraceSearchArgs(msgspec.Struct, kw_only=True):
    query: str
    cwd: str | None = None
    since: str | None = None
    limit: int | None = None


class TraceLinksArgs(msgspec.Struct, kw_only=True):
    session_id: str | None = None
    path: str | None = None


class ReinforceArgs(msgspec.Struct, kw_only=True):
    paths: list[str]
    signal: Signal


class ExecArgs(msgspec.Struct, kw_only=True):
    script: str
    timeout_ms: int | None = None
    sha: str | None = None
