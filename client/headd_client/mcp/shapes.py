"""What the MCP tools share about their arguments and results: the check of arguments against a
tool's input schema, and memhtml's shapes of a record (``memory_read``'s ``meta``, a hit's snippet).

Pure functions: arguments are JSON the model sent (``JsonIn``), a record is the daemon's typed
``WireRecord``, and a result is the JSON an agent reads (``JsonObject``); the tools
(``tools.py``, ``write_tools.py``) call them.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from headd.limits import MAX_CLAIM_CHARS, bounded
from headd.wire.answers import SearchHit, WireRecord
from headd_client.json_types import JsonIn, JsonInObject, JsonObject
from headd_client.mcp.failures import ToolFailure

SNIPPET_CHARS = 280

# -- argument checking -------------------------------------------------------------------------


def _type_ok(value: JsonIn, schema: JsonInObject) -> bool:
    if "anyOf" in schema:
        return any(_type_ok(value, s) for s in _objects(schema["anyOf"]))
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
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        return False
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return all(_type_ok(v, items) for v in value)
    if isinstance(value, dict) and "properties" in schema:
        return not check_arguments_against(value, schema)
    return True


def _objects(value: JsonIn) -> list[JsonInObject]:
    """The schemas a schema's ``anyOf`` lists."""
    return [s for s in value if isinstance(s, Mapping)] if isinstance(value, list) else []


def check_arguments_against(arguments: JsonInObject, schema: JsonInObject) -> list[str]:
    """Every way ``arguments`` breaks ``schema`` (the subset of JSON Schema the catalog uses)."""
    declared = schema.get("properties")
    props: JsonInObject = declared if isinstance(declared, Mapping) else {}
    required = schema.get("required")
    problems = [
        f"missing required argument `{k}`"
        for k in (required if isinstance(required, list) else ())
        if k not in arguments
    ]
    query = arguments.get("query")
    if "query" in props and isinstance(query, str) and not query.strip():
        problems.append("argument `query` is empty; give the words to search for")
    for key, value in arguments.items():
        if key not in props:
            if schema.get("additionalProperties") is False:
                problems.append(f"unknown argument `{key}`")
            continue
        declared_as = props[key]
        if isinstance(declared_as, Mapping) and not _type_ok(value, declared_as):
            problems.append(f"argument `{key}` does not match {_describe(declared_as)}")
    return problems


def _describe(schema: JsonInObject) -> str:
    options = _objects(schema["anyOf"]) if "anyOf" in schema else [schema]
    for option in options:
        enum = option.get("enum")
        if isinstance(enum, list):
            return "one of " + ", ".join(str(v) for v in enum)
        items = option.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("enum"), list):
            return "a list of " + ", ".join(str(v) for v in _listed(items["enum"]))
    kinds = [str(s.get("type")) for s in options if s.get("type") != "null"]
    return " or ".join(kinds) or "the schema"


def _listed(value: JsonIn) -> list[JsonIn]:
    return list(value) if isinstance(value, list) else []


# -- record shapes -------------------------------------------------------------------------


def snippet(text: str) -> str:
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


def record_meta(record: WireRecord) -> JsonObject:
    """The head metadata as memhtml's ``memory_read`` names it (camelCase, string values)."""
    out: JsonObject = {}
    for field, name in _META_NAMES:
        value = getattr(record, field)
        if value is None or (field == "author" and value == "agent"):
            continue
        out[name] = _js_string(value)
    for tag in record.tags:
        out[f"tag:{tag}"] = "true"
    for entity in record.entities:
        out[f"entity:{entity}"] = "true"
    return out


def _js_string(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_result(record: WireRecord, sha: str) -> JsonObject:
    fields: JsonObject = msgspec.to_builtins(record)
    return {
        "path": record.path,
        "title": record.title,
        "body": record.body_text,
        "gist": bounded(record.claim, MAX_CLAIM_CHARS),
        "memory_type": record.memory_type,
        "meta": record_meta(record),
        "links": [{"rel": link.rel, "href": link.href} for link in record.links],
        "archived": record.archived,
        "warnings": list(record.warnings),
        "sha": sha,
        # the record's other fields: its text is the body and gist above, once
        "record": {k: v for k, v in fields.items() if k not in ("body_text", "claim")},
    }


def strip_path(path: str) -> str:
    return path.strip().lstrip("/")


def body_or_markup(
    claim: str | None, body: str | list[str] | None, markup: str | None
) -> tuple[str | list[str] | None, str | None]:
    """(body, article_html) of a write or a correction, refused unless exactly one is given:
    memhtml's tools take prose or markup, never both. A ``claim`` (the command line's
    ``--claim``) stands for the prose: its ``body`` is then the paragraphs after it."""
    if claim is not None:
        if markup is not None:
            raise ToolFailure(
                "ERR_INVALID_MEMORY",
                "invalid memory: exactly one of --claim or --article-html, and both were given",
            )
        return list(body or ()), None
    if (body is None) == (markup is None):
        which = "both were supplied" if body is not None else "neither was supplied"
        raise ToolFailure(
            "ERR_INVALID_MEMORY",
            f"invalid memory: exactly one of body or article_html is required, and {which}",
        )
    return body, markup


def search_hit(hit: SearchHit) -> JsonObject:
    """One search hit in memhtml's shape, its record's fields where the hit has none."""
    record = hit.record if isinstance(hit.record, WireRecord) else None
    if record is None:
        return {
            "path": hit.path,
            "title": hit.title or "",
            "gist": bounded(hit.claim or ""),
            "memory_type": "",
            "score": hit.score,
            "confidence": 1.0,
            "updated_at": "",
            "snippet": snippet(hit.claim or ""),
            "entities": [],
            "superseded_by": None,
            "arms": list(hit.arms),
        }
    return {
        "path": hit.path,
        "title": hit.title or record.title or "",
        "gist": bounded(hit.claim or record.claim or ""),
        "memory_type": record.memory_type or "",
        "score": hit.score,
        "confidence": record.confidence,
        "updated_at": record.updated_at or record.created_at or "",
        "snippet": snippet(record.body_text or hit.claim or ""),
        "entities": list(record.entities),
        "superseded_by": strip_path(record.superseded_by) if record.superseded_by else None,
        "arms": list(hit.arms),
    }
