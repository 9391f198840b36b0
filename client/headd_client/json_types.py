"""JSON as the client writes it: the documents it prints and the MCP answers it sends.

The daemon's answers reach the client as typed Structs (`headd.wire.answers`, decoded by
`calls`); what the client hands on (memhtml's `--json` keys, MCP tool results, JSON-RPC
frames) is a JSON document in someone else's shape. These aliases name that shape, so the
type checker still sees every value that goes out, where an unchecked value would let anything
through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
"""A JSON value, built by the client (invariant containers, as `msgspec.json.encode` takes)."""
JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object the client builds and sends."""
JsonIn: TypeAlias = JsonScalar | Sequence["JsonIn"] | Mapping[str, "JsonIn"]
"""A JSON value the client only reads (covariant containers: any mapping or list of JSON)."""
JsonInObject: TypeAlias = Mapping[str, JsonIn]
"""A JSON object the client only reads, such as the arguments of an MCP tool call."""
