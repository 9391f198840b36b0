"""The sleep phases: their names and order (memhtml's ``SLEEP_PHASES``), which need a model, which
never commit, and which depend on which, plus the typed port a model would be bound through.

The names, the order, the trailers and the branch naming are memhtml 0.15.1's, so a run reads the
same in ``git log`` whichever tool made it.
"""

from __future__ import annotations

from typing import Final, Protocol

PHASES: Final = (
    "preflight",
    "dedup-merge",
    "entity-resolution",
    "person-links",
    "relationship-mining",
    "edge-typing",
    "confidence-decay",
    "arc-synthesis",
    "retention-triage",
    "compress",
    "reprieve",
    "trace-consolidation",
    "task-detection",
    "placement-triage",
    "integrity",
    "state-export",
    "report",
)

#: Phases whose work is a model's judgement; without a bound model they are reported skipped.
MODEL_PHASES: Final = frozenset(
    {
        "entity-resolution",
        "person-links",
        "edge-typing",
        "arc-synthesis",
        "compress",
        "trace-consolidation",
        "task-detection",
    }
)

#: Phases that never commit (memhtml's ``NON_COMMITTING_PHASES``, plus ``report``, whose summary
#: is the run's answer and the ``sleep_runs`` rows rather than a file).
NON_COMMITTING: Final = frozenset({"preflight", "relationship-mining", "report"})

#: A failed phase skips these later ones (a failed preflight skips every later phase).
DEPENDENTS: Final[dict[str, frozenset[str]]] = {
    "preflight": frozenset(PHASES[1:]),
    "dedup-merge": frozenset({"compress", "retention-triage"}),
}

NO_MODEL_REASON: Final = "no model bound"

RUN_TRAILER: Final = "Memhtml-Run"
PHASE_TRAILER: Final = "Memhtml-Phase"
COUNTS_TRAILER: Final = "Memhtml-Counts"
SKIP_GATE_TRAILER: Final = "Headd-Sleep-Skip-Gate"


class ModelPort(Protocol):
    """What a model-needing phase calls: a prompt in, text out. Shaped like the embedder's port
    (one method, plain values), so a local or hosted model binds without touching the pipeline."""

    @property
    def name(self) -> str: ...

    def complete(self, prompt: str, *, max_tokens: int) -> str: ...


def unknown_phases(names: list[str]) -> list[str]:
    """The names in ``names`` that are not phases (an ``--phases`` typo is refused, not ignored)."""
    return [name for name in names if name not in PHASES]


def branch_for(date: str, taken: set[str]) -> str:
    """``sleep/<date>``, then ``-2``, ``-3``… for another run on the same date."""
    name = f"sleep/{date}"
    ordinal = 2
    while name in taken:
        name = f"sleep/{date}-{ordinal}"
        ordinal += 1
    return name
