"""Benchmark stores: SciFact rendered as memory files, topped up with generated memories.

``python -m bench.support.stores --n 10000 DEST`` writes a git store of ``n`` memories in one commit: the
5,183 SciFact abstracts (``resources/scifact/<id>.html``: title, the first sentence as the claim,
the rest as the body) and then generated memories (``areas/gen/<k>/<i>.html``) whose words follow
a Zipf law over a fixed vocabulary, so posting lists have the long tail real notes have. Every
file is valid memhtml markup in the template memhtml 0.15.1 writes. Deterministic for a given n.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import random
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pygit2

from bench.support.data import SCIFACT_ENV as SCIFACT_ENV
from bench.support.data import scifact_dir

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def scifact_docs() -> list[tuple[str, str, str]]:
    """(id, title, text) for every SciFact abstract, in file order."""
    out = []
    with gzip.open(scifact_dir() / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            out.append((str(row["_id"]), row["title"].strip(), row["text"].strip()))
    return out


def scifact_queries(root: Path | None = None) -> list[tuple[str, str]]:
    """(id, text) for every training query, in file order; ``root`` defaults to
    ``$HEADD_SCIFACT``."""
    with open((root or scifact_dir()) / "queries-train.jsonl", encoding="utf-8") as fh:
        return [(str(r["_id"]), r["text"]) for r in map(json.loads, fh)]


def scifact_qrels(root: Path | None = None) -> dict[str, set[str]]:
    """The relevant doc ids of each training query (score above 0); ``root`` defaults to
    ``$HEADD_SCIFACT``."""
    out: dict[str, set[str]] = {}
    with open((root or scifact_dir()) / "qrels-train.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.split("\t")
            if int(score) > 0:
                out.setdefault(qid, set()).add(did)
    return out


def scifact_path(doc_id: str) -> str:
    return f"resources/scifact/{doc_id}.html"


def render(
    title: str,
    claim: str,
    body: str,
    *,
    memory_type: str = "semantic",
    created: str = "2026-01-01T00:00:00Z",
    tags: tuple[str, ...] = (),
) -> str:
    """A memory file in memhtml's template (no content-hash meta: the indexer recomputes it)."""
    esc = html.escape
    lines = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(title, quote=False)}</title>",
        f'<meta name="memhtml-type" content="{memory_type}">',
        '<meta name="memhtml-status" content="active">',
        f'<meta name="memhtml-created" content="{created}">',
        f'<meta name="memhtml-updated" content="{created}">',
    ]
    lines += [f'<meta name="memhtml-tag" content="{esc(t)}">' for t in tags]
    tail = f" {esc(body, quote=False)}" if body else ""
    lines += [
        "</head>",
        "<body>",
        "<article>",
        f"<p><mark>{esc(claim, quote=False)}</mark>{tail}</p>",
        "</article>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(lines)


def scifact_memory(doc_id: str, title: str, text: str) -> str:
    parts = _SENTENCE_END.split(text, maxsplit=1)
    claim = parts[0] if parts and parts[0] else title
    body = parts[1] if len(parts) > 1 else ""
    return render(title or claim[:80], claim, body, tags=("scifact",))


_VOCAB_SEED = 7


def _vocabulary(size: int = 20_000) -> list[str]:
    rnd = random.Random(_VOCAB_SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rnd.choice(letters) for _ in range(rnd.randint(3, 10))))
    return sorted(words)


def generated_memories(count: int, seed: int = 1) -> Iterator[tuple[str, str]]:
    """(path, html) for ``count`` generated memories with Zipf-distributed words."""
    rnd = random.Random(seed)
    vocab = _vocabulary()
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    types = ("semantic", "procedural", "episodic", "agent_insight", "error_pattern")
    for i in range(count):
        words = rnd.choices(vocab, weights=weights, k=rnd.randint(40, 160))
        claim = " ".join(words[:12]).capitalize() + "."
        body = " ".join(words[12:]) + "."
        title = " ".join(words[:5]).capitalize()
        day = 1 + (i % 28)
        created = f"2026-{1 + (i // 28) % 12:02d}-{day:02d}T{i % 24:02d}:00:00Z"
        yield (
            f"areas/gen/{i % 100:02d}/m{i:06d}.html",
            render(title, claim, body, memory_type=types[i % len(types)], created=created),
        )


def store_files(n: int) -> Iterator[tuple[str, str]]:
    docs = scifact_docs()
    for doc_id, title, text in docs[:n]:
        yield scifact_path(doc_id), scifact_memory(doc_id, title, text)
    if n > len(docs):
        yield from generated_memories(n - len(docs))


def write_tree(repo: pygit2.Repository, files: Mapping[str, bytes | pygit2.Oid]) -> pygit2.Oid:
    """Write a nested tree from flat paths (file bytes, or blobs already written) with
    TreeBuilders, which is fast for 100,000 files."""
    nested: dict = {}
    for path, data in files.items():
        node = nested
        *dirs, name = path.split("/")
        for d in dirs:
            node = node.setdefault(d, {})
        node[name] = data if isinstance(data, pygit2.Oid) else repo.create_blob(data)

    def build(node: dict) -> pygit2.Oid:
        tb = repo.TreeBuilder()
        for name, child in node.items():
            if isinstance(child, dict):
                tb.insert(name, build(child), pygit2.GIT_FILEMODE_TREE)
            else:
                tb.insert(name, child, pygit2.GIT_FILEMODE_BLOB)
        return tb.write()

    return build(nested)


def build_store(dest: Path, n: int, *, checkout: bool = False) -> str:
    """Create ``dest`` as a git store of ``n`` memories in one commit on ``main``."""
    repo = pygit2.init_repository(str(dest), bare=False, initial_head="main")
    files = {path: text.encode("utf-8") for path, text in store_files(n)}
    tree = write_tree(repo, files)
    sig = pygit2.Signature("bench", "bench@headd.local", 1_764_489_600, 0)
    sha = repo.create_commit("refs/heads/main", sig, sig, f"bench: {n} memories", tree, [])
    if checkout:
        repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
    return str(sha)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--checkout", action="store_true", help="also write the work tree")
    args = parser.parse_args(argv)
    sha = build_store(args.dest, args.n, checkout=args.checkout)
    print(json.dumps({"store": str(args.dest), "n": args.n, "sha": sha}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
