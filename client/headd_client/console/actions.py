"""What a person may change from the console, each one a daemon session or method.

Archive and correct run exactly what an agent's ``memory_archive`` and ``memory_correct`` run
(``headd_client.mcp.tools``): one daemon session each, the same validation, the same archive
stamps and supersedes links, the same commit message shape. A conflict is resolved by the
daemon's ``sync`` method. Merging or discarding a sleep run asks the daemon's sleep methods
(:func:`decide_sleep_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from headd.errors import HeaddError, MethodNotFound, RpcError
from headd_client.json_types import JsonInObject
from headd_client.mcp.failures import ToolFailure
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.tools import Tools

if TYPE_CHECKING:
    from headd.wire.remote_answers import SyncAnswer

Decision = Literal["merge", "discard"]


class ActionFailed(Exception):
    """An action the daemon refused, with its ``ERR_`` code and message for the page."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Done:
    """What an action changed: the memory to show next and the commit it made."""

    path: str
    commit: str | None


def _run(
    call: Callable[[JsonInObject], Mapping[str, object]], args: JsonInObject
) -> Mapping[str, object]:
    try:
        return call(args)
    except ToolFailure as failure:
        raise ActionFailed(failure.code, failure.message) from None
    except (HeaddError, RpcError) as exc:
        raise failed(exc) from None


def failed(exc: HeaddError | RpcError) -> ActionFailed:
    code = exc.code if isinstance(exc, HeaddError) else f"RPC {exc.rpc_code}"
    return ActionFailed(code, str(exc))


def _commit_of(result: Mapping[str, object]) -> str | None:
    sha = result.get("commit_sha")
    return sha if isinstance(sha, str) else None


def archive(tools: Tools, path: str, reason: str) -> Done:
    """Move the memory to the archive, with the person's reason in the commit message."""
    result = _run(tools.memory_archive, {"path": path, "reason": reason or "archived by hand"})
    return Done(str(result["archive_path"]), _commit_of(result))


def correct(tools: Tools, path: str, title: str, claim: str, body: str, reason: str) -> Done:
    """Replace the memory with a new one whose claim is ``claim``: the old one is archived,
    stamped as superseded by the new one, which links back to it."""
    text = claim.strip() if not body.strip() else f"{claim.strip()}\n\n{body.strip()}"
    args = {
        "target_path": path,
        "title": title.strip(),
        "body": text,
        "reason": reason or "corrected by hand",
    }
    result = _run(tools.memory_correct, args)
    return Done(str(result["path"]), _commit_of(result))


def resolve_conflict(link: DaemonLink, conflict: str) -> SyncAnswer:
    """Mark a remote conflict resolved (the daemon's ``sync`` with ``resolve``); not repeated
    on a dropped connection, since a second resolve of the same conflict is refused."""
    from headd_client import calls

    call = calls.sync(resolve=conflict)
    try:
        return call.decode(link.call(call.method, call.params, idempotent=False))
    except (HeaddError, RpcError) as exc:
        raise failed(exc) from None


#: The daemon method each decision asks: ``sleep.merge`` lands a run through both gates; a
#: discard is asked of ``sleep.discard``, which a daemon may not offer (an unmerged run changes
#: nothing on the branch, so leaving it is always safe).
SLEEP_METHODS: dict[Decision, str] = {"merge": "sleep.merge", "discard": "sleep.discard"}


def decide_sleep_run(link: DaemonLink, run: str, decision: Decision) -> Mapping[str, object]:
    """Merge or discard the sleep run ``run`` (its id, ``sleep/<date>``).

    The daemon's sleep methods own the decision (the gates, the landing, the ref), so the console
    asks them and does nothing to git itself. A daemon without the method answers a refusal
    that says so, which the review page shows; a merge the gates refuse is a refusal too.
    """
    method = SLEEP_METHODS[decision]
    try:
        answer: Mapping[str, object] = dict(link.call(method, {"run": run}, idempotent=False))
    except MethodNotFound:
        raise ActionFailed(
            "ERR_NOT_OFFERED", f"this daemon does not offer {method}: the run is left as it is"
        ) from None
    except (HeaddError, RpcError) as exc:
        raise failed(exc) from None
    if decision == "merge" and answer.get("merged") is False:
        raise ActionFailed("ERR_GATE", str(answer.get("reason") or "the gates refused the run"))
    return answer
