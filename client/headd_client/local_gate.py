"""The head gate computed in this process, for ``headctl gate`` when no daemon serves the store.

It loads the base version from git and builds the landed one by advancing from it (the tree
difference only), then runs the same ``gate_heads`` the daemon runs, so the two paths answer with
the same report. ``describe`` renders any report (the daemon's JSON or ours) as the head's
one-line failure account, by turning it back into the head's own report value first.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec


def _report_type() -> type:
    from headd.head.gate import HeadGateReport

    return HeadGateReport


def to_plain(report: Any) -> dict[str, Any]:
    plain = msgspec.json.decode(msgspec.json.encode(report))
    assert isinstance(plain, dict)
    return plain


def describe(report: Mapping[str, Any]) -> str:
    from headd.head.gate import describe_head_gate_failure

    value: Any = msgspec.convert(dict(report), type=_report_type())
    return str(describe_head_gate_failure(value))


def run_gate(store: Path, params: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """(report as plain JSON values, the one-line failure account)."""
    from headd.head.gate import describe_head_gate_failure, gate_heads
    from headd.head.version import advance_head, load_head
    from headd.store.git_io import open_repo, resolve_commit

    repo = open_repo(store)
    base_sha = resolve_commit(repo, str(params["base"]))
    landed_sha = resolve_commit(repo, str(params["landed"]))
    base = load_head(repo, base_sha)
    landed = advance_head(repo, base, landed_sha)
    options = {k: params[k] for k in ("probes", "k", "tolerance", "seed") if k in params}
    report = gate_heads(base, landed, **options)
    return to_plain(report), str(describe_head_gate_failure(report))
