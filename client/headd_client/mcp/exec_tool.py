"""``memory_exec``: code-mode for an agent with no shell, the daemon's ``exec`` behind a tool.

The answer carries ``headctl exec --json``'s keys, which are memhtml's ``exec.report``: a script
that fails is a result with its ``exitCode`` and ``stderr``, not a tool failure. The tool's
description in ``catalog.json`` says when to reach for it: after ranked retrieval has found the
entry points, for a question that takes more than one hop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headd.wire.exec import DEFAULT_TIMEOUT_MS
from headd_client.headctl_exec import ANSWER_GRACE_S, report_of
from headd_client.mcp.spawn import DaemonLink
from headd_client.sync_client import Client


def memory_exec(link: DaemonLink, args: Mapping[str, Any]) -> dict[str, Any]:
    timeout_ms = args.get("timeout_ms") or DEFAULT_TIMEOUT_MS
    params: dict[str, Any] = {"script": args["script"], "timeout_ms": timeout_ms}
    if args.get("sha"):
        params["at"] = args["sha"]
    link.client()  # the daemon is up, spawned if it was not
    # A connection of its own: the link's waits a minute for an answer, a script may run ten.
    with Client(link.socket_path, timeout=timeout_ms / 1000 + ANSWER_GRACE_S) as client:
        return report_of(client.call("exec", params), timeout_ms)
