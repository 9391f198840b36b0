"""The write door's secret check: every text field of every op a client sends, before any of it
is judged, logged or committed.

``SessionManager.apply`` is the one place ops enter a session (the wire's ``session.apply``, the
MCP tools, ``headctl`` and the importers all reach it), so checking there covers every door. The
check reads the ops as sent, not as rendered, so a finding names the field the caller wrote
(``claim``, ``body[2]``, ``html``) and a line and column inside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec

from headd.errors import SecretFound
from headd.secrets.rules import scan


def _text_fields(op: msgspec.Struct) -> Iterator[tuple[str, str]]:
    """(field name, text) for every string an op carries, list items as ``name[i]``."""
    for name in op.__struct_fields__:
        value: Any = getattr(op, name)
        if isinstance(value, str):
            yield name, value
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    yield f"{name}[{i}]", item


def op_findings(index: int, op: msgspec.Struct) -> list[dict[str, Any]]:
    """Every finding in one op, as the error's details list them (no value)."""
    path = getattr(op, "path", None)
    out: list[dict[str, Any]] = []
    for field, text in _text_fields(op):
        for finding in scan(text):
            entry: dict[str, Any] = {
                "op": index,
                "field": field,
                "kind": finding.kind,
                "line": finding.line,
                "column": finding.column,
            }
            if isinstance(path, str):
                entry["path"] = path
            out.append(entry)
    return out


def describe(findings: Sequence[dict[str, Any]]) -> str:
    """One line naming the first finding's kind and place, and how many more there are."""
    first = findings[0]
    where = f"op {first['op']} field {first['field']} line {first['line']} column {first['column']}"
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"refused: a {first['kind']} at {where}{more}; nothing was appended"


def check_ops(ops: Sequence[msgspec.Struct], first_index: int = 0) -> None:
    """Raise ``SecretFound`` naming every credential-shaped value in ``ops``; ``first_index``
    is the log index of ``ops[0]``, so a finding names the op as the session numbers it."""
    findings = [f for i, op in enumerate(ops) for f in op_findings(first_index + i, op)]
    if findings:
        raise SecretFound(describe(findings), {"findings": findings})


def check_commit(fields: Mapping[str, str | None]) -> None:
    """Raise ``SecretFound`` when a commit's own text (its message, the provenance stamped into
    its trailers and files) holds a credential: it lands in the history as surely as a file."""
    found = [
        {"field": name, "kind": f.kind, "line": f.line, "column": f.column}
        for name, text in fields.items()
        for f in scan(text or "")
    ]
    if found:
        first = found[0]
        raise SecretFound(
            f"refused: a {first['kind']} in the commit's {first['field']} at line "
            f"{first['line']} column {first['column']}; nothing was committed",
            {"findings": found},
        )
