"""A store with what sleep curates: an inbox pile sharing entities, exact and near duplicates, a
claim and its negation, a memory past its valid-until, a dangling link, a stale unused memory, a
task and a used memory — each a memory file as the writer writes it."""

from __future__ import annotations

from pathlib import Path

from support.memory import memory_html
from support.stores import make_store

OLD = "2025-01-10T09:00:00Z"
RECENT = "2026-11-20T09:00:00Z"
RUN_DAY = "2026-12-04"

POOL_CLAIM = "The checkout pool holds forty connections per pod."

SLEEP_FILES: dict[str, str] = {
    # exact duplicates (same article): the older keeps its path
    "areas/inbox/pool-size.html": memory_html(
        "Checkout pool size", POOL_CLAIM, created=OLD, entities=("service:checkout",)
    ),
    "areas/inbox/pool-size-again.html": memory_html(
        "Checkout pool size again", POOL_CLAIM, created=RECENT, entities=("service:checkout",)
    ),
    # a claim and its negation: never folded
    "areas/inbox/cache-is-safe.html": memory_html(
        "Cache flush is safe", "Flushing the edge cache during deploys is safe.", created=RECENT
    ),
    "areas/inbox/cache-is-not-safe.html": memory_html(
        "Cache flush is not safe",
        "Flushing the edge cache during deploys is not safe.",
        created=RECENT,
    ),
    # an inbox pile sharing an entity with a settled directory
    "areas/inbox/billing-retries.html": memory_html(
        "Billing retries",
        "Billing retries failed charges three times.",
        created=RECENT,
        entities=("service:billing",),
    ),
    "resources/billing/invoices-are-monthly.html": memory_html(
        "Invoices are monthly",
        "Billing sends invoices on the first of each month.",
        created=RECENT,
        entities=("service:billing",),
    ),
    # two inbox memories sharing an entity with no home: a new resources/<entity>/
    "areas/inbox/ledger-is-append-only.html": memory_html(
        "Ledger is append only",
        "The ledger service never updates a row in place.",
        created=RECENT,
        entities=("service:ledger",),
    ),
    "areas/inbox/ledger-snapshots-nightly.html": memory_html(
        "Ledger snapshots nightly",
        "The ledger service snapshots its tables every night.",
        created=RECENT,
        entities=("service:ledger",),
        links=(("relates_to", "/areas/inbox/ledger-is-append-only.html"),),
    ),
    # past valid-until, unimportant and unused: archived by reprieve
    "resources/ops/freeze-window.html": memory_html(
        "Deploy freeze window",
        "Deploys are frozen until the end of the quarter.",
        created=RECENT,
        metas={"memhtml-valid-until": "2026-11-30"},
    ),
    # past valid-until but important: reprieved
    "resources/ops/oncall-rotation.html": memory_html(
        "On-call rotation",
        "The on-call rotation changes every Monday at noon.",
        created=RECENT,
        metas={"memhtml-valid-until": "2026-12-01", "memhtml-importance": "10"},
    ),
    # a dangling link to a memory archived earlier
    "resources/ops/runbook-index.html": memory_html(
        "Runbook index",
        "The runbook index lists every operations procedure.",
        created=RECENT,
        links=(("relates_to", "/resources/ops/old-runbook.html"),),
    ),
    "archive/2026/resources/ops/old-runbook.html": memory_html(
        "Old runbook",
        "The old runbook described manual failover.",
        status="archived",
        created=OLD,
    ),
    # stale, unused and thin: evicted by retention triage
    "projects/legacy/fax-gateway.html": memory_html(
        "Fax gateway", "A fax gateway existed.", created=OLD, metas={"memhtml-confidence": "0.30"}
    ),
    # a task: never touched
    "projects/legacy/tasks/retire-fax.html": memory_html(
        "Retire the fax gateway",
        "Done means the fax gateway is switched off.",
        memory_type="task",
        task_status="todo",
        created=OLD,
    ),
    "resources/search/shards-are-eight.html": memory_html(
        "Search shards",
        "The search cluster runs eight shards.",
        created=RECENT,
        body="Each shard holds a month of documents.",
    ),
}


def make_sleep_store(root: Path) -> str:
    return make_store(root, SLEEP_FILES)


#: The committed usage sidecar (path order): the pool memory is read often, the on-call page
#: is used.
SIDECAR = (
    '{"path":"resources/ops/oncall-rotation.html","accessCount":30,"reinforcementCount":2,'
    '"outcomeScore":0.5,"lastAccessedAt":"2026-12-02T10:00:00Z","lastReinforcedAt":null,'
    '"updatedAt":"2026-12-02T10:00:00Z"}\n'
    '{"path":"areas/inbox/pool-size.html","accessCount":12,"reinforcementCount":0,'
    '"outcomeScore":0,"lastAccessedAt":"2026-12-01T10:00:00Z","lastReinforcedAt":null,'
    '"updatedAt":"2026-12-01T10:00:00Z"}\n'
)
SLEEP_FILES[".memhtml/state/access.jsonl"] = SIDECAR
