"""Quick figures for the head core at 10,000 memories: load, one-file advance, lexical search.

Builds (once, cached under /tmp) a git store of N generated memories of ~120 tokens each
(Zipf-distributed words over a 30,000-word vocabulary), written with pygit2, then measures
``load_head``, ``advance_head`` over a one-file commit, and ``search_head`` p50/p95 over a set of
queries drawn from the corpus. Usage: ``python bench/head_quick.py [N]``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fixtures.head.corpus import render_template  # noqa: E402

from headd.head.search import search_head  # noqa: E402
from headd.head.version import advance_head, load_head, version_from_records  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
ROOT = Path(f"/tmp/headd-bench-{N}")
SIG = pygit2.Signature("bench", "bench@headd.invalid", 1_767_225_600, 0)


def vocabulary(rng: random.Random, size: int = 30_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def build() -> pygit2.Repository:
    if (ROOT / ".git").exists():
        return pygit2.Repository(str(ROOT))
    rng = random.Random(7)
    words = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    repo = pygit2.init_repository(str(ROOT), initial_head="main")
    trees: dict[str, dict[str, pygit2.Oid]] = {}
    for index in range(N):
        body = " ".join(rng.choices(words, weights, k=110)) + "."
        claim = f"Item {index} is {' '.join(rng.choices(words, weights, k=6))}."
        html = render_template(
            title=f"Note {index} {' '.join(rng.choices(words, weights, k=3))}",
            claim=claim,
            at=f"2026-{index % 12 + 1:02d}-{index % 27 + 1:02d}T12:00:00Z",
            body=(body,),
            entities=(f"topic:t{index % 50}",),
            tags=(f"tag-{index % 20}",),
        )
        folder = f"areas/d{index % 100}"
        trees.setdefault(folder, {})[f"n{index}.html"] = repo.create_blob(html.encode())
    top = repo.TreeBuilder()
    areas = repo.TreeBuilder()
    for folder, files in sorted(trees.items()):
        builder = repo.TreeBuilder()
        for name, oid in sorted(files.items()):
            builder.insert(name, oid, pygit2.GIT_FILEMODE_BLOB)
        areas.insert(folder.split("/")[1], builder.write(), pygit2.GIT_FILEMODE_TREE)
    top.insert("areas", areas.write(), pygit2.GIT_FILEMODE_TREE)
    repo.create_commit("HEAD", SIG, SIG, "bench corpus", top.write(), [])
    return repo


def one_file_commit(repo: pygit2.Repository, stamp: int) -> str:
    head = repo.head.peel(pygit2.Commit)
    path = "areas/d3/n3.html"
    blob = head.tree[path]
    html = repo[blob.id].data.decode().replace("</article>", f"<p>Edited {stamp}.</p>\n</article>")
    index = pygit2.Index()
    index.read_tree(head.tree)
    index.add(pygit2.IndexEntry(path, repo.create_blob(html.encode()), pygit2.GIT_FILEMODE_BLOB))
    tree = index.write_tree(repo)
    return str(repo.create_commit("HEAD", SIG, SIG, f"edit {stamp}", tree, [head.id]))


def main() -> None:
    started = time.perf_counter()
    repo = build()
    print(f"store ready in {time.perf_counter() - started:.2f} s ({N} memories)")
    sha = str(repo.head.target)
    started, cpu = time.perf_counter(), time.process_time()
    version = load_head(repo, sha)
    print(
        f"load_head: {time.perf_counter() - started:.2f} s wall, "
        f"{time.process_time() - cpu:.2f} s cpu, size {version.size}, "
        f"skipped {len(version.skipped)}, tokens {len(version.lexical.postings)}"
    )
    started, cpu = time.perf_counter(), time.process_time()
    version_from_records(list(version.records()), sha)
    print(
        f"  of which indexing: {time.perf_counter() - started:.2f} s wall, "
        f"{time.process_time() - cpu:.2f} s cpu"
    )
    advances, advances_cpu = [], []
    current = version
    for stamp in range(20):
        target = one_file_commit(repo, stamp)
        started, cpu = time.perf_counter(), time.process_time()
        current = advance_head(repo, current, target)
        advances.append((time.perf_counter() - started) * 1000)
        advances_cpu.append((time.process_time() - cpu) * 1000)
    print(
        f"advance (one file): p50 {statistics.median(advances):.2f} ms wall, "
        f"{statistics.median(advances_cpu):.2f} ms cpu, max {max(advances):.2f} ms wall"
    )
    rng = random.Random(3)
    records = list(current.records())
    queries = []
    for _ in range(300):
        record = rng.choice(records)
        words = record.body_text.split()
        start = rng.randrange(max(1, len(words) - 3))
        queries.append(" ".join(words[start : start + rng.randint(1, 4)]))
    timings = []
    cpu = time.process_time()
    for query in queries:
        started = time.perf_counter()
        search_head(current, query)
        timings.append((time.perf_counter() - started) * 1000)
    cpu_per_query = (time.process_time() - cpu) * 1000 / len(queries)
    timings.sort()
    print(f"search cpu per query (mean): {cpu_per_query:.2f} ms")
    print(
        f"search_head (lexical): p50 {statistics.median(timings):.2f} ms, "
        f"p95 {timings[int(len(timings) * 0.95)]:.2f} ms"
    )


if __name__ == "__main__":
    main()
