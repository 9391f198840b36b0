"""``memory_exec``: code-mode for an agent with no shell, the daemon's ``exec`` behind a tool.

The answer carries ``headctl exec --json``'s keys, which are memhtml's ``exec.report``: a script
that fails is a result with its ``exitCode`` and ``stderr``, not a tool failure. The tool's
description in ``catalog.json`` says when to reach for it: after ranked retrieval has found the
entry points, for a question that takes more than one hop.
"""

from __future__ import annotations

from headd.wire.exec_bounds import EXEC_DEFAULT_TIMEOUT_MS
from headd_client.exec_call import ANSWER_GRACE_S, exec_call, report_of
from headd_client.json_types import JsonInObject, JsonObject
from headd_client.mcp.arguments import ExecArgs, parse
from headd_client.mcp.spawn import DaemonLink
from headd_client.sync_client import Client


def memory_exec(link: DaemonLink, arguments: JsonInObject) -> JsonObject:
    args = parse(arguments, ExecArgs)
    timeout_ms = args.timeout_ms or EXEC_DEFAULT_TIMEOUT_MS
    call = exec_call(args.script, timeout_ms, args.sha or None)
    link.client()  # the daemon is up, spawned if it was not
    # A connection of its own: the link's waits a minute for an answer, a script may run ten.
    with Client(link.socket_path, timeout=timeout_ms / 1000 + ANSWER_GRACE_S) as client:
        report: JsonObject = report_of(client.run(call), timeout_ms)
        return report
