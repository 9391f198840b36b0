"""Telling an agent that a write of its was displaced by another machine's.

When two machines write the same path, the remote round keeps the remote's version at the path
and moves ours to ``refs/headd/conflicts/N`` (``headd.remote.rescue``), a second or so after the
writer was told ``committed``. The writer is the one who can act on it, and the agent is never
told by the daemon on its own, so the bridge watches the commits it made: while any is younger
than :data:`WATCH_S`, each tool answer asks the daemon's ``status`` for the remote's open
conflicts, and the first answer after one of ours appears carries it (``displaced``, and a line
in the text) once. A commit of ours the round replayed onto the remote's tip (the other machine
wrote elsewhere) is on the branch under a new sha; the first answer after that names it
(``replayed``: ours and the one on the branch).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from headd.wire.remote_answers import Conflict, RemoteStatus
from headd_client.json_types import JsonObject, JsonValue

#: How long after a write the bridge keeps asking whether it was displaced: a conflict appears
#: at the next remote round (at once after a commit, else at the fetch interval).
WATCH_S = 600.0
#: The most commits watched at once (the oldest are dropped first).
WATCH_MAX = 64
#: How many commits back from the tip a replay of ours is looked for.
REPLAY_SCAN = 200
_REPLAYED = re.compile(r"^Headd-Replayed-From: ([0-9a-f]{40})$", re.M)


class DisplacedWatch:
    """The commits this bridge wrote, and the conflicts of theirs already told."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._written: dict[str, float] = {}
        self._told: set[str] = set()

    def note(self, result: JsonObject) -> None:
        """Watch the commit a tool result names (``commit_sha``), if any."""
        structured = result.get("structuredContent")
        sha = structured.get("commit_sha") if isinstance(structured, dict) else None
        if isinstance(sha, str) and sha:
            self._written[sha] = self._clock()
            while len(self._written) > WATCH_MAX:
                del self._written[next(iter(self._written))]

    def watching(self) -> bool:
        cutoff = self._clock() - WATCH_S
        for sha in [sha for sha, at in self._written.items() if at < cutoff]:
            del self._written[sha]
        return bool(self._written)

    def replayed(self, store: Path, tip: str | None) -> list[JsonObject]:
        """Commits of ours that a remote round replayed onto the remote's tip (a new sha on the
        branch, carrying ``Headd-Replayed-From: <ours>``), not yet told: the sha an agent was
        given is no longer the one on the branch."""
        if tip is None or not self.watching():
            return []
        from headd.store.git_io import recent_messages

        found: list[JsonObject] = []
        for sha, message in recent_messages(store, tip, REPLAY_SCAN):
            for ours in _REPLAYED.findall(message):
                if ours in self._written and f"replayed:{ours}" not in self._told:
                    self._told.add(f"replayed:{ours}")
                    found.append({"ours": ours, "on_branch": sha})
        return found

    def displaced(self, remote: RemoteStatus | None) -> list[Conflict]:
        """The open conflicts in ``remote`` (the daemon's ``status.remote``) holding a commit of
        ours, not yet told; a daemon that follows no remote can displace nothing, so watching
        stops."""
        if remote is None:
            self._written.clear()
            return []
        found: list[Conflict] = []
        for conflict in remote.conflicts:
            key = f"{conflict.id}:{conflict.ours}"
            if conflict.ours in self._written and key not in self._told:
                self._told.add(key)
                found.append(conflict)
        return found


def _noted(result: JsonObject, lines: list[str], key: str, value: JsonValue) -> JsonObject:
    """``result`` (a ``tools/call`` result) with ``lines`` added to its text and ``key`` to its
    structured content."""
    out = dict(result)
    content = result.get("content")
    told: list[JsonValue] = [{"type": "text", "text": t} for t in lines]
    out["content"] = [*(content if isinstance(content, list) else ()), *told]
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        out["structuredContent"] = {**structured, key: value}
    return out


def with_replayed(result: JsonObject, replays: list[JsonObject]) -> JsonObject:
    """``result`` telling which of this session's commits are on the branch under a new sha."""
    lines = [
        f"NOTE: commit {str(r['ours'])[:12]} of this session was replayed onto the remote's "
        f"tip; it is on the branch as {str(r['on_branch'])[:12]}"
        for r in replays
    ]
    return _noted(result, lines, "replayed", list[JsonValue](replays))


def with_notice(result: JsonObject, conflicts: list[Conflict]) -> JsonObject:
    """``result`` (a ``tools/call`` result) telling of ``conflicts``: a ``displaced`` field in
    its structured content and one line per conflict in its text."""
    lines = [
        f"NOTE: a write of this session was displaced: conflict {c.id} on {c.path};"
        f" another machine's version is at the path, yours is kept at {c.ref}"
        f" (merge it, then `headctl sync --resolve {c.id}`)"
        for c in conflicts
    ]
    shown: list[JsonValue] = [
        {"id": c.id, "path": c.path, "ref": c.ref, "ours": c.ours, "theirs": c.theirs, "at": c.at}
        for c in conflicts
    ]
    return _noted(result, lines, "displaced", shown)
