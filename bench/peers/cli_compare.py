"""memhtml's command line and ``headctl``'s, side by side: one script, two stores, every field.

``python -m bench.peers.cli_compare`` makes two stores with ``memhtml init``, serves one with
``headd --embedder off`` and leaves the other to memhtml (``MEMHTML_EMBED=off``), runs the same
script of commands on both (writes, a duplicate, a batch with a bad line and one with a conflicting
path, a conflicting claim with ``--detect-conflicts``, a correction, links, an archive, tasks
through ``done``, lists with filters and a cursor, neighbours at depth 1 and 2, entity activity,
doctor on a dangling link, publish twice, a ``--consolidate last-wins`` batch over a stored slot),
and compares each answer's ``data`` (memhtml's envelope) with ``headctl
--json``'s answer, key by key: what memhtml answers must be in ours with the same value, except the
fields that name a moment or a commit (``commitSha``, ``updatedAt``, ``lastActivityAt`` …), which
must only be present. Then the git history: one commit per landed write on both sides, and the
files ``publish`` generated, byte for byte but for the moments they show. Prints one JSON document:
every difference, the commit counts and the generated files that differ. memhtml comes from ``bash
bench/peers/peers.sh``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.peers.memhtml_mcp import memhtml_command, memhtml_env

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[2]

#: Fields that name a moment, a commit or a machine: compared for presence only.
VOLATILE = frozenset(
    {
        "commitSha",
        "commit_sha",
        "updatedAt",
        "lastActivityAt",
        "lastWrittenAt",
        "headSha",
        "indexHeadSha",
        "root",
        "error",
        # the embedding model each side is configured with (memhtml names its default even
        # with MEMHTML_EMBED=off) and what its index holds
        "configuredEmbedModel",
        "storedEmbedModel",
        "embedModelMatches",
        "chunks",
        "embeddings",
    }
)

BATCH = "\n".join(
    [
        json.dumps({"op": "write", "title": "Pool size is forty", "type": "semantic",
                    "body": "The pool size is forty."}),
        json.dumps({"op": "write", "title": "Deploys weekly", "type": "procedural",
                    "body": "Deploys run weekly.", "workspace": "ops"}),
    ]
) + "\n"  # fmt: skip
BAD_BATCH = BATCH + "not json\n"
CLASH = json.dumps(
    {"op": "write", "title": "Clash", "type": "semantic", "body": "A clash.",
     "path": "areas/inbox/pool-size-is-forty.html"}
) + "\n"  # fmt: skip
CONFLICTING = json.dumps(
    {"op": "write", "title": "Pool size is fifty", "type": "semantic",
     "body": "The pool size is fifty."}
) + "\n"  # fmt: skip
#: A stored slot, then a batch that restates a slot inside itself (three times, the last wins)
#: and the stored one (its memory archived as superseded), with a line of no frame shape between.
RETRY = [
    "write", "--title", "Worker retry limit", "--claim", "The retry limit of the worker is 3.",
    "--type", "semantic",
]  # fmt: skip
LAST_WINS = "\n".join(
    json.dumps(op)
    for op in [
        {"op": "write", "title": "Cache ttl ten", "type": "semantic",
         "body": "The cache ttl of the api is 10 seconds."},
        {"op": "write", "title": "Backups nightly", "type": "procedural",
         "body": "Backups run every night."},
        {"op": "write", "title": "Cache ttl twenty", "type": "semantic",
         "body": "The cache ttl of the api is 20 seconds."},
        {"op": "write", "title": "Worker retry limit five", "type": "semantic",
         "body": "The retry limit of the worker is 5."},
        {"op": "write", "title": "Cache ttl thirty", "type": "semantic",
         "body": "The cache ttl of the api is 30 seconds. Set by the gateway."},
    ]
) + "\n"  # fmt: skip
POOL = "areas/inbox/pool-size-is-forty.html"
DEPLOYS = "projects/ops/deploys-weekly.html"
RECORD = "resources/db/postgres-is-the-record.html"

WRITE = [
    "write", "--title", "Postgres is the record", "--claim",
    "Postgres is the system of record for orders.", "--body", "Replicas serve reads.",
    "--type", "semantic", "--tag", "db", "--entity", "service:checkout",
]  # fmt: skip

#: (name, argv, stdin): the script, run on both sides in order.
SCRIPT: list[tuple[str, list[str], str | None]] = [
    ("write", WRITE, None),
    ("write duplicate", WRITE, None),
    ("apply", ["apply", "--file", "-"], BATCH),
    ("apply bad line", ["apply", "--file", "-"], BAD_BATCH),
    ("apply conflicting path", ["apply", "--file", "-"], CLASH),
    ("link", ["link", POOL, "relates_to", DEPLOYS], None),
    ("link again", ["link", POOL, "relates_to", DEPLOYS], None),
    ("neighbors depth 1", ["neighbors", DEPLOYS], None),
    ("neighbors depth 2", ["neighbors", POOL, "--depth", "2"], None),
    ("correct", ["correct", RECORD, "--title", "Postgres is the record v2", "--claim",
                 "Postgres 16 is the system of record for orders.", "--reason", "upgrade"], None),
    ("list", ["list"], None),
    ("list page 1", ["list", "--limit", "1"], None),
    ("list type", ["list", "--type", "procedural"], None),
    ("list workspace", ["list", "--workspace", "ops"], None),
    ("list archived", ["list", "--include-archived"], None),
    ("list para archive", ["list", "--para", "archive"], None),
    ("task add", ["task", "add", "--title", "Rotate the keys", "--due", "2026-12-20",
                  "--workspace", "payments", "--entity", "service:checkout"], None),
    ("task add inbox", ["task", "add", "--title", "Write the runbook"], None),
    ("task list", ["task", "list"], None),
    ("task status doing", ["task", "status", "projects/payments/tasks/rotate-the-keys.html",
                           "doing"], None),
    ("task status done", ["task", "status", "projects/payments/tasks/rotate-the-keys.html",
                          "done", "--reason", "rotated"], None),
    ("task list archived", ["task", "list", "--include-archived"], None),
    ("entity activity", ["entity", "activity"], None),
    ("archive", ["archive", DEPLOYS, "--reason", "stale"], None),
    ("doctor", ["doctor"], None),
    ("publish", ["publish"], None),
    ("publish again", ["publish"], None),
    ("write a slot", RETRY, None),
    ("apply last-wins", ["apply", "--file", "-", "--consolidate", "last-wins",
                         "--detect-conflicts"], LAST_WINS),
    ("list after last-wins", ["list", "--include-archived"], None),
    # last: the head links a contradicting write to its rival (``contradicts``) on commit, which
    # memhtml 0.15.1 reports without linking, so later neighbourhoods would differ by that link
    ("apply a conflicting claim", ["apply", "--file", "-", "--detect-conflicts"], CONFLICTING),
]  # fmt: skip


def differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Every way ``ours`` fails to hold what ``theirs`` holds (memhtml's keys, its values)."""
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            return [f"{where}: not an object"]
        out = []
        for key, value in theirs.items():
            if key not in ours:
                out.append(f"{where}.{key}: missing")
            elif key not in VOLATILE:
                out.extend(differences(ours[key], value, f"{where}.{key}"))
        return out
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(ours) != len(theirs):
            return [f"{where}: {json.dumps(ours)[:200]} != {json.dumps(theirs)[:200]}"]
        return [
            d
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for d in differences(a, b, f"{where}[{i}]")
        ]
    if isinstance(theirs, float) or isinstance(ours, float):
        return [] if float(ours or 0) == float(theirs or 0) else [f"{where}: {ours} != {theirs}"]
    return [] if ours == theirs else [f"{where}: {ours!r} != {theirs!r}"]


#: Where headctl knowingly answers otherwise: asked for near duplicates with no embedder, memhtml
#: answers ``near_duplicates_degraded: false``, headctl says the check did not run.
KNOWN = frozenset({".near_duplicates_degraded: True != False"})

#: Commits memhtml makes beyond ours: its ``--consolidate last-wins`` archives the displaced
#: stored memory in a second commit after the batch's; headctl's batch, supersede included, is
#: one session and one commit.
PEER_EXTRA_COMMITS = 1


def compare() -> dict[str, Any]:
    """Run the script on both sides; every step's exit codes and differences, and the commits."""
    with tempfile.TemporaryDirectory(prefix="cli-compare-") as tmp:
        ours, theirs = Path(tmp) / "ours", Path(tmp) / "theirs"
        for store in (ours, theirs):
            store.mkdir()
            subprocess.run([*memhtml_command(), "init"], env=memhtml_env(store), cwd=store,
                           capture_output=True, check=True)  # fmt: skip
        socket_path = Path(tmp) / "head.sock"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        daemon = subprocess.Popen(
            [PYTHON, "-m", "headd.daemon.main", "--store", str(ours), "--socket", str(socket_path),
             "--embedder", "off"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            for _ in range(300):
                if socket_path.exists():
                    break
                time.sleep(0.1)
            time.sleep(1.0)
            report = []
            for name, argv, stdin in SCRIPT:
                mine = subprocess.run(
                    [PYTHON, "-m", "headd_client.headctl", "--store", str(ours), "--socket",
                     str(socket_path), "--json", *argv],
                    env=env, input=stdin, capture_output=True, text=True,
                )  # fmt: skip
                peer = subprocess.run(
                    [*memhtml_command(), *argv], env=memhtml_env(theirs), cwd=theirs,
                    input=stdin, capture_output=True, text=True,
                )  # fmt: skip
                envelope = json.loads(peer.stdout or "{}")
                answer = json.loads(mine.stdout or "{}")
                row: dict[str, Any] = {"step": name, "exit": [mine.returncode, peer.returncode]}
                if "data" in envelope:
                    row["differences"] = differences(answer, envelope["data"])
                else:
                    code = (answer.get("error") or {}).get("code")
                    row["codes"] = [code, envelope.get("code")]
                report.append(row)
        finally:
            daemon.terminate()
            daemon.wait(30)
        commits = {}
        for side, store in (("headctl", ours), ("memhtml", theirs)):
            count = subprocess.run(["git", "-C", str(store), "rev-list", "--count", "HEAD"],
                                   capture_output=True, text=True, check=True)  # fmt: skip
            commits[side] = int(count.stdout)
        published = generated_differences(ours, theirs)
    return {"steps": report, "commits": commits, "published": published}


#: A moment a listing or the sitemap shows (each side wrote its memories at its own time).
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def generated_differences(ours: Path, theirs: Path) -> list[str]:
    """The generated files (``index.html`` listings, ``sitemap.xml``) one side holds and the
    other does not, or holds with other bytes once the moments are masked."""

    def generated(store: Path) -> dict[str, str]:
        names = [*store.rglob("index.html"), store / "sitemap.xml"]
        return {
            str(f.relative_to(store)): MOMENT.sub("T", f.read_text(encoding="utf-8"))
            for f in names
            if f.is_file() and ".git" not in f.relative_to(store).parts
        }

    mine, peer = generated(ours), generated(theirs)
    return sorted(path for path in set(mine) | set(peer) if mine.get(path) != peer.get(path))


def main() -> int:
    print(json.dumps(compare(), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
