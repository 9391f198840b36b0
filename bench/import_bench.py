"""Import throughput: ``headctl import claude-code`` of generated topic files through a running
daemon, memories landed per second, and the re-import that writes nothing.

Usage: ``python -m bench.import_bench [--sizes 1000,10000]``. Prints one JSON document. For each
size a fresh store (one seed memory) gets its own ``headd`` (``--embedder off``); a Claude Code
memory directory of that many topic files (front matter, a description, a body of 40-160
Zipf-distributed words, every tenth with a ``[[link]]``) is imported through the daemon's
sessions, one commit per 200 writes, then imported again. ``memories_per_s`` is the first
import's items over its wall time, parse included; ``import_cpu_s`` is the CPU the importing
process and the daemon spent on it together. The peer is ``memhtml apply`` of the same memories
(``memhtml_apply``), skipped when ``bench/peers/peers.sh`` has not installed memhtml 0.15.1;
``wall_ratio`` is headd's import wall over memhtml's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.support.serve import daemon_argv
from bench.support.stores import _vocabulary
from headd.importers.claude_code import parse
from headd.importers.run import run_import

REPO = Path(__file__).resolve().parent.parent


def memory_tree(root: Path, count: int, seed: int = 7) -> Path:
    memory = root / "-home-bench-project" / "memory"
    memory.mkdir(parents=True)
    rnd = random.Random(seed)
    vocab = _vocabulary()
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    index = ["# Memory index", ""]
    for i in range(count):
        words = rnd.choices(vocab, weights=weights, k=rnd.randint(40, 160))
        name = f"topic-{i:05d}"
        link = f"\n\nSee [[topic-{i - 1:05d}]]." if i % 10 == 9 else ""
        description = " ".join(words[:12]).capitalize() + f" ({i})."
        (memory / f"project_{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n"
            + " ".join(words[12:]).capitalize()
            + "."
            + link
            + "\n",
            encoding="utf-8",
        )
        index.append(f"- [{' '.join(words[:4]).capitalize()} {i}](project_{name}.md) — {words[5]}")
    (memory / "MEMORY.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return root


def _store(path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    seed = path / "areas" / "inbox" / "seed.html"
    seed.parent.mkdir(parents=True)
    seed.write_text(
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Seed</title>\n'
        '<meta name="memhtml-type" content="semantic">\n'
        '<meta name="memhtml-status" content="active">\n'
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">\n'
        '<meta name="memhtml-updated" content="2026-01-01T00:00:00Z">\n</head>\n<body>\n'
        "<article>\n<p><mark>The seed memory.</mark></p>\n</article>\n</body>\n</html>\n",
        encoding="utf-8",
    )
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.org"}
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "seed"], check=True, env=env)


def _daemon_cpu(pid: int) -> float:
    """The daemon's user and system CPU so far, from ``/proc`` (0.0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(count: int, work: Path) -> dict[str, Any]:
    from headd_client.sync_client import Client

    store = work / f"store-{count}"
    _store(store)
    tree = memory_tree(work / f"claude-{count}", count)
    sock = Path(tempfile.mkdtemp(prefix="hib-")) / "h.sock"
    log = open(work / f"headd-{count}.log", "wb")  # noqa: SIM115 - closed below
    daemon = subprocess.Popen(
        daemon_argv(store, sock),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=str(REPO),
    )
    try:
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with Client(sock, timeout=600) as client:
            started = time.perf_counter()
            cpu_started = time.process_time() + _daemon_cpu(daemon.pid)
            parsed = parse(tree)
            parsed_s = time.perf_counter() - started
            report = run_import(parsed, client, source="claude-code", now=datetime.now(UTC))
            first_s = time.perf_counter() - started
            first_cpu = time.process_time() + _daemon_cpu(daemon.pid) - cpu_started
            started = time.perf_counter()
            again = run_import(parse(tree), client, source="claude-code", now=datetime.now(UTC))
            again_s = time.perf_counter() - started
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        log.close()
    return {
        "items": count,
        "new": report.new,
        "links": report.links,
        "commits": len(report.commits),
        "parse_s": round(parsed_s, 2),
        "import_s": round(first_s, 2),
        "import_cpu_s": round(first_cpu, 2),
        "memories_per_s": round(report.new / first_s, 1),
        "reimport_s": round(again_s, 2),
        "reimport_unchanged": again.unchanged,
        "reimport_commits": len(again.commits),
        "memhtml_apply": (peer := memhtml_apply(count, work, tree)),
        "wall_ratio": round(first_s / peer["import_s"], 2) if "import_s" in peer else None,
    }


def memhtml_apply(count: int, work: Path, tree: Path) -> dict[str, Any]:
    """The peer: memhtml 0.15.1's own batch door, ``memhtml apply`` of the same memories as one
    JSONL op stream (one commit, one reindex), then the same stream again (all deduped).

    Each op is the imported item's title, type and paragraphs; memhtml has no importer, so the
    parse is ours and not counted. CPU is memhtml's (the children this process waited for).
    """
    from bench.peers.memhtml_mcp import PeerMissing, memhtml_command, run_memhtml

    try:
        memhtml_command()
    except PeerMissing as missing:
        return {"skipped": str(missing)}
    store = work / f"memhtml-{count}"
    _store(store)
    ops = work / f"ops-{count}.jsonl"
    with ops.open("w", encoding="utf-8") as out:
        for item in parse(tree).items:
            body = "\n\n".join([item.claim, *item.body])
            op = {"op": "write", "title": item.title, "type": item.type, "body": body}
            out.write(json.dumps(op) + "\n")
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    first_s, _ = run_memhtml(store, ["apply", "--file", str(ops), "--dense"])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    again_s, _ = run_memhtml(store, ["apply", "--file", str(ops), "--dense"])
    return {
        "import_s": round(first_s, 2),
        "import_cpu_s": round(after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime, 2),
        "memories_per_s": round(count / first_s, 1),
        "reimport_s": round(again_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated item counts")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="headd-import-bench-") as tmp:
        runs = [measure(int(n), Path(tmp)) for n in args.sizes.split(",")]
    print(json.dumps({"bench": "import", "runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
