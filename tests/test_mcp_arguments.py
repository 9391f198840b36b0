"""A tool's arguments become its Struct at the edge, and the bridge stays typed.

- Every argument set a tool's input schema admits converts into that tool's Struct, so a model's
  call the schema check passes never fails at the conversion (property, over the published
  schemas). Seen red by typing ``SearchArgs.limit`` as ``str`` and by dropping ``| float`` from
  ``WriteArgs.confidence``.
- A value the schema check never saw (a command line's or the console's call) that the Struct
  does not take is ``ERR_INVALID_PARAMS`` naming the argument, not a bridge failure.
- The bridge names ``Any`` at most a dozen times: answers in are Structs, JSON out is
  ``json_types``.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest
from headd_client.json_types import JsonIn, JsonInObject
from headd_client.mcp import arguments
from headd_client.mcp.failures import ToolFailure
from headd_client.mcp.tools import check_arguments_against, tool_definitions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

STRUCTS: dict[str, type[msgspec.Struct]] = {
    "memory_write": arguments.WriteArgs,
    "memory_write_batch": arguments.BatchArgs,
    "memory_read": arguments.PathArgs,
    "memory_resolve": arguments.PathArgs,
    "memory_search": arguments.SearchArgs,
    "memory_correct": arguments.CorrectArgs,
    "memory_link": arguments.LinkArgs,
    "memory_archive": arguments.ArchiveArgs,
    "memory_neighbors": arguments.NeighborsArgs,
    "memory_reinforce": arguments.ReinforceArgs,
    "memory_list": arguments.ListArgs,
    "memory_exec": arguments.ExecArgs,
    "memory_recall": arguments.RecallArgs,
    "trace_search": arguments.TraceSearchArgs,
    "trace_links": arguments.TraceLinksArgs,
}

BRIDGE = Path(arguments.__file__).parent
ANY_BUDGET = 12


def _schema(name: str) -> JsonInObject:
    for tool in tool_definitions():
        if isinstance(tool, dict) and tool["name"] == name:
            schema = tool["inputSchema"]
            assert isinstance(schema, dict)
            return schema
    raise KeyError(name)


def values(schema: Mapping[str, JsonIn]) -> st.SearchStrategy[JsonIn]:
    """JSON values that ``schema`` (the catalog's subset of JSON Schema) admits."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        return st.one_of([values(o) for o in options if isinstance(o, Mapping)])
    enum = schema.get("enum")
    if isinstance(enum, list):
        return st.sampled_from(enum)
    kind = schema.get("type")
    if kind == "string":
        return st.text(max_size=8)
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(-5, 500)
    if kind == "number":
        return st.integers(0, 1) | st.floats(0, 1)
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema.get("items")
        inner = values(items) if isinstance(items, Mapping) else st.text(max_size=4)
        return st.lists(inner, max_size=3)
    if kind == "object":
        return objects(schema)
    return st.none()


def objects(schema: Mapping[str, JsonIn]) -> st.SearchStrategy[JsonIn]:
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    fields = {key: values(sub) for key, sub in props.items() if isinstance(sub, Mapping)}
    return st.fixed_dictionaries(
        {k: v for k, v in fields.items() if k in needed},
        optional={k: v for k, v in fields.items() if k not in needed},
    )


@pytest.mark.parametrize("name", sorted(STRUCTS))
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_what_the_schema_admits_converts_into_the_tool_struct(
    name: str, data: st.DataObject
) -> None:
    schema = _schema(name)
    args = data.draw(objects(schema))
    assert isinstance(args, dict)
    if check_arguments_against(args, schema):
        return  # refused before the handler runs (an empty query): nothing to convert
    converted = arguments.parse(args, STRUCTS[name])
    for key, value in args.items():
        if key in STRUCTS[name].__struct_fields__ and key != "ops":
            assert getattr(converted, key) == value, key


def test_a_value_the_struct_does_not_take_is_invalid_params() -> None:
    with pytest.raises(ToolFailure) as caught:
        arguments.parse(
            {"title": "t", "memory_type": "semantic", "importance": "high"}, arguments.WriteArgs
        )
    assert caught.value.code == "ERR_INVALID_PARAMS"
    assert "importance" in caught.value.message


def test_the_bridge_names_any_at_most_a_dozen_times() -> None:
    named = 0
    for path in sorted(BRIDGE.glob("*.py")):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline)
        named += sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "Any")
    assert named <= ANY_BUDGET, f"the MCP bridge names Any {named} times"
