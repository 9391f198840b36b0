"""Helpers for the SQLite plane's tests: real git stores on tmp dirs, memory files, a
deterministic embedder (the one fake the tests allow), and row dumps of index.db."""

from __future__ import annotations

import hashlib
import html as html_lib
import re
import sqlite3
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pygit2
from support.data import ANCHOR

SIGNATURE = pygit2.Signature("plane-test", "plane@test", 1_700_000_000, 0)

#: Row queries compared between two indexes: every column except indexing clocks.
ROW_QUERIES: dict[str, str] = {
    "files": "SELECT * FROM files",
    "file_tags": "SELECT * FROM file_tags",
    "file_entities": "SELECT * FROM file_entities",
    "file_facets": "SELECT * FROM file_facets",
    "file_citations": "SELECT * FROM file_citations",
    "chunks": "SELECT * FROM chunks",
    "edges": "SELECT src_path, rel, dst_path, edge_class, derived, strength, provenance, "
    "sleep_run, src_hash, dst_hash FROM edges",
}


def memory_html(
    title: str,
    claim: str,
    body: str = "",
    memory_type: str = "semantic",
    tags: Sequence[str] = (),
    entities: Sequence[str] = (),
    links: Sequence[tuple[str, str]] = (),
    updated: str = "2026-11-30T09:00:00Z",
    task_status: str | None = None,
    facets: Sequence[tuple[str, str]] = (),
) -> str:
    """A valid memory file in the layout memhtml writes."""
    esc = html_lib.escape
    head = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f'<meta name="memhtml-type" content="{memory_type}">',
        '<meta name="memhtml-status" content="active">',
        '<meta name="memhtml-created" content="2026-11-01T09:00:00Z">',
        f'<meta name="memhtml-updated" content="{updated}">',
    ]
    if task_status is not None:
        head.append(f'<meta name="memhtml-task-status" content="{task_status}">')
    head += [f'<meta name="memhtml-entity" content="{esc(e)}">' for e in entities]
    head += [f'<meta name="memhtml-tag" content="{esc(t)}">' for t in tags]
    head += [f'<link rel="memhtml-{rel.replace("_", "-")}" href="/{href}">' for rel, href in links]
    article = [f"<p><mark>{esc(claim)}</mark></p>"]
    if body:
        article.append(f"<p>{esc(body)}</p>")
    if facets:
        article.append(
            "<dl>" + "".join(f"<dt>{esc(n)}</dt><dd>{esc(v)}</dd>" for n, v in facets) + "</dl>"
        )
    return "\n".join(
        [*head, "</head>", "<body>", "<article>", *article, "</article>", "</body>", "</html>", ""]
    )


class Store:
    """A real git repository with a work tree, written through pygit2."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = pygit2.init_repository(str(root), initial_head="main")
        (root / ".gitignore").write_text(".memhtml/\n", encoding="utf-8")

    def write(self, files: Mapping[str, str | None]) -> None:
        """Write (or delete, for None) work-tree files without committing."""
        for path, text in files.items():
            target = self.root / path
            if text is None:
                if target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def commit(self, files: Mapping[str, str | None] | None = None, message: str = "c") -> str:
        if files:
            self.write(files)
        index = self.repo.index
        index.clear()  # then add the work tree as it is: deletions included
        index.add_all()
        index.write()
        tree = index.write_tree()
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        oid = self.repo.create_commit("HEAD", SIGNATURE, SIGNATURE, message, tree, parents)
        return str(oid)

    def move(self, source: str, target: str) -> None:
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        (self.root / source).rename(self.root / target)


def clone_anchor(dest: Path) -> Path:
    subprocess.run(
        ["git", "clone", "-q", str(ANCHOR / "store.bundle"), str(dest)],
        check=True,
        capture_output=True,
    )
    return dest


def rows(conn: sqlite3.Connection, drop_indexed_at: bool = True) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for table, sql in ROW_QUERIES.items():
        cursor = conn.execute(sql)
        names = [d[0] for d in cursor.description]
        data = [tuple(r) for r in cursor.fetchall()]
        if table == "files" and drop_indexed_at:
            at = names.index("indexed_at")
            data = [r[:at] + r[at + 1 :] for r in data]
        out[table] = sorted(data, key=repr)
    return out


class HashEmbedder:
    """Deterministic bag-of-words embedder: texts sharing words have near vectors."""

    def __init__(self, dim: int = 32, model: str = "hash-test", fail: bool = False) -> None:
        self.dim = dim
        self.space = f"{model}@{dim}"
        self.fail = fail
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            vec[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("model down")
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> np.ndarray:
        if self.fail:
            raise RuntimeError("model down")
        return self._vector(text)
