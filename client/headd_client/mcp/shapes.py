"""What the MCP tools share about their arguments and results: the check of arguments against a
tool's input schema, and memhtml's shapes of a record (``memory_read``'s ``meta``, a hit's snippet).

Pure functions of decoded JSON; the tools (``tools.py``, ``write_tools.py``) call them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headd.limits import MAX_CLAIM_CHARS, bounded
from headd_client.mcp.failures import ToolFailure

SNIPPET_CHARS = 280

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


def confidence_of(record: Mapping[str, Any]) -> float:
    value = record.get("confidence")
    return 1.0 if value is None else float(value)


def strip_path(path: str) -> str:
    return path.strip().lstrip("/")


def body_or_markup(args: Mapping[str, Any]) -> tuple[str | list[str] | None, str | None]:
    """(body, article_html) of a write or a correction, refused unless exactly one is given:
    memhtml's tools take prose or markup, never both. A ``claim`` (the command line's
    ``--claim``) stands for the prose: its ``body`` is then the paragraphs after it."""
    if args.get("claim") is not None:
        if args.get("article_html") is not None:
            raise ToolFailure(
                "ERR_INVALID_MEMORY",
                "invalid memory: exactly one of --claim or --article-html, and both were given",
            )
        return list(args.get("body") or ()), None
    body = args.get("body")
    markup = args.get("article_html")
    if (body is None) == (markup is None):
        which = "both were supplied" if body is not None else "neither was supplied"
        raise ToolFailure(
            "ERR_INVALID_MEMORY",
            f"invalid memory: exactly one of body or article_html is required, and {which}",
        )
    return body, markup
