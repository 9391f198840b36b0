"""A version's corpus as the guest's ``corpus()`` reads it: ``[{path, file, …fields}, …]``, JSON.

The order is the seed's ``walk`` order (each directory's names sorted, as Node lists them,
directories entered where they fall), the paths root-absolute, every ``.html`` file of the
commit's tree but ``index.html`` (a generated listing). A memory's fields are
:func:`headd.codemode.projection.fields_of` of its blob, kept by blob id: a blob never changes,
so two versions share every projection of a file neither changed, and a census after a commit
reparses only what the commit wrote. Each field's JSON is kept encoded, so a version's corpus is
a join of byte strings.

The version's own JSON is kept too, for the last few versions asked for, since scripts come in
runs over one tip.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

import msgspec
import pygit2

from headd.codemode.projection import fields_of

#: Where the guest mounts the commit's tree.
ROOT = "/mnt/memhtml"
#: Projections kept by blob id: past this, the cache starts again from empty.
MAX_PROJECTIONS = 200_000
#: Versions whose corpus JSON is kept.
MAX_VERSIONS = 4


def html_files(tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, pygit2.Oid]]:
    """Every ``.html`` blob under ``tree`` but ``index.html``, in ``walk`` order, with its id."""
    for entry in sorted(tree, key=lambda item: item.name or ""):
        name = entry.name or ""
        if name == ".git":
            continue
        if entry.type_str == "tree":
            yield from html_files(entry, f"{prefix}/{name}")  # type: ignore[arg-type]
        elif entry.type_str == "blob" and name.endswith(".html") and name != "index.html":
            yield f"{prefix}/{name}", entry.id


class CorpusCache:
    """Corpus JSON by commit, projections by blob; safe to call from several threads."""

    def __init__(self) -> None:
        self._projections: dict[str, bytes] = {}
        self._versions: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def projection(self, repo: pygit2.Repository, blob_id: pygit2.Oid) -> bytes:
        key = str(blob_id)
        encoded = self._projections.get(key)
        if encoded is None:
            blob = repo[blob_id]
            text = bytes(blob.data).decode("utf-8", errors="replace")  # type: ignore[attr-defined]
            encoded = msgspec.json.encode(fields_of(text))
            if len(self._projections) >= MAX_PROJECTIONS:
                self._projections.clear()
            self._projections[key] = encoded
        return encoded

    def corpus_json(self, repo: pygit2.Repository, sha: str) -> bytes:
        """The corpus of commit ``sha`` as the guest reads it."""
        with self._lock:
            cached = self._versions.get(sha)
            if cached is not None:
                self._versions.move_to_end(sha)
                return cached
        tree = repo[sha].peel(pygit2.Tree)
        encode = msgspec.json.encode
        parts = [
            b'{"path":'
            + encode(path)
            + b',"file":'
            + encode(ROOT + path)
            + b","
            + self.projection(repo, blob_id)[1:]  # a projection is a non-empty object
            for path, blob_id in html_files(tree)
        ]
        built = b"[" + b",".join(parts) + b"]"
        with self._lock:
            self._versions[sha] = built
            while len(self._versions) > MAX_VERSIONS:
                self._versions.popitem(last=False)
        return built
