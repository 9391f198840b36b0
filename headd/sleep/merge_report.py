"""The answer of ``sleep.merge``, apart from the merge itself.

The wire's answer table (``headd.wire.answers.answer_types``) names it, and the merge imports the
run, which answers with the wire's own Structs: kept here, the report imports only the two gates'
reports, so the wire reaches it without reaching back into itself.
"""

from __future__ import annotations

import msgspec

from headd.head.gate import HeadGateReport
from headd.head.retention_gate import RetentionGateReport


class MergeReport(msgspec.Struct, frozen=True):
    """The answer of ``sleep.merge``: landed or not, and both gates' reports."""

    run_id: str
    base: str
    main: str
    merged: bool = False
    landed: str | None = None
    replayed: bool = False
    skipped_gate: bool = False
    conflicts: list[str] = msgspec.field(default_factory=list)
    head_gate: HeadGateReport | None = None
    retention_gate: RetentionGateReport | None = None
    reason: str | None = None
