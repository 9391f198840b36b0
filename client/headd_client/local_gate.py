"""The head gate computed in this process, for ``headctl gate`` when no daemon serves the store.

It loads the base version from git and builds the landed one by advancing from it (the tree
difference only), then runs the same ``gate_heads`` the daemon runs, so the two paths answer with
the same report. ``describe`` renders any report (the daemon's JSON or ours) as the head's
one-line failure account, by turning it back into the head's own report value first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from headd.errors import InvalidParams
from headd_client.json_types import JsonIn, JsonInObject, JsonObject

if TYPE_CHECKING:
    from headd.head.gate import HeadGateReport


def to_plain(report: HeadGateReport) -> JsonObject:
    plain = msgspec.json.decode(msgspec.json.encode(report))
    assert isinstance(plain, dict)
    return plain


def describe(report: JsonIn) -> str:
    from headd.head.gate import HeadGateReport, describe_head_gate_failure

    return str(describe_head_gate_failure(msgspec.convert(report, type=HeadGateReport)))


def run_gate(store: Path, params: JsonInObject) -> tuple[JsonObject, str]:
    """(report as plain JSON values, the one-line failure account)."""
    from headd.head.gate import describe_head_gate_failure, gate_heads
    from headd.head.version import advance_head, load_head
    from headd.store.git_io import open_repo, resolve_commit
    from headd.wire.methods import Gate

    try:
        request = msgspec.convert(params, type=Gate)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"gate: {exc}") from None
    repo = open_repo(store)
    base_sha = resolve_commit(repo, request.base)
    landed_sha = resolve_commit(repo, request.landed)
    base = load_head(repo, base_sha)
    landed = advance_head(repo, base, landed_sha)
    report = gate_heads(
        base,
        landed,
        probes=request.probes,
        k=request.k,
        tolerance=request.tolerance,
        seed=request.seed,
    )
    return to_plain(report), str(describe_head_gate_failure(report))
