"""The two resources: ``memhtml://file/{path}`` at the branch tip, ``memhtml://at/{commit}/{path}``.

Both answer plain text in memhtml's shape (``# title``, the claim, the body text). The pinned
form takes a commit sha only: a branch name or ``HEAD`` is refused, because a citation names bytes
that cannot move. A failure is a JSON-RPC error (-32602) whose message starts with the ``ERR_``
code, as memhtml answers it.
"""

from __future__ import annotations

import re

from headd.wire.answers import WireRecord
from headd_client import calls
from headd_client.json_types import JsonObject, JsonValue
from headd_client.mcp.protocol import INVALID_PARAMS, McpError
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.tools import catalog

FILE_PREFIX = "memhtml://file/"
AT_PREFIX = "memhtml://at/"
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def resource_templates() -> list[JsonValue]:
    templates = catalog()["resourceTemplates"]
    return list(templates) if isinstance(templates, list) else []


def memory_text(record: WireRecord) -> str:
    parts = [f"# {record.title}", record.claim]
    body = record.body_text
    if body:
        parts.append(body)
    return "\n\n".join(parts)


def read_resource(link: DaemonLink, uri: str) -> JsonObject:
    at: str | None = None
    if uri.startswith(FILE_PREFIX):
        path = uri[len(FILE_PREFIX) :]
    elif uri.startswith(AT_PREFIX):
        commit, _, path = uri[len(AT_PREFIX) :].partition("/")
        if not _SHA.match(commit):
            raise McpError(
                INVALID_PARAMS,
                f"ERR_PATH_NOT_FOUND: nothing to read at {uri}. Try: re-request it as "
                "memhtml://at/<commit-sha>/<path>; a branch name or HEAD is refused on purpose",
                {"uri": uri},
            )
        at = commit
    else:
        raise McpError(INVALID_PARAMS, f"ERR_PATH_NOT_FOUND: unknown resource {uri}", {"uri": uri})
    path = path.lstrip("/")
    try:
        answer = link.run(calls.read(path, at=at))
    except McpError:
        raise
    except Exception as exc:
        code = getattr(exc, "code", "ERR_PATH_NOT_FOUND")
        raise McpError(INVALID_PARAMS, f"{code}: nothing to read at {uri}", {"uri": uri}) from None
    record = answer.record
    if record is None:
        raise McpError(
            INVALID_PARAMS,
            f"ERR_PATH_NOT_FOUND: nothing to read at {uri}. Try: call memory_resolve on the path",
            {"uri": uri},
        )
    return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": memory_text(record)}]}
