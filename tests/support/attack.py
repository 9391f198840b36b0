"""Commits a collaborator with push access can make that a normal checkout refuses.

``git mktree`` and ``git commit-tree`` write any tree entry a name can hold (``.git``, ``..``, a
300-byte name, bytes that are not UTF-8); ``git update-ref`` in the bare hub moves its branch
there without the receive-side checks a careful server would run. This is what an attacker who
can push does, so the follower's defences are tested against exactly it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from support.git import IDENTITY

BLOB = "100644"
EXEC = "100755"
LINK = "120000"
GITLINK = "160000"


def _run(repo: Path, args: list[str], data: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=data,
        capture_output=True,
        check=True,
        env={**os.environ, **IDENTITY},
    )
    return done.stdout.strip()


def blob(repo: Path, data: bytes) -> bytes:
    return _run(repo, ["hash-object", "-w", "--stdin"], data)


def mktree(repo: Path, entries: list[tuple[str, bytes, bytes]]) -> bytes:
    """A tree of ``(mode, sha, raw name)`` entries, written without any name check."""
    lines = b""
    for mode, sha, name in entries:
        kind = b"tree" if mode == "040000" else b"commit" if mode == GITLINK else b"blob"
        lines += mode.encode() + b" " + kind + b" " + sha + b"\t" + name + b"\0"
    return _run(repo, ["mktree", "-z", "--missing"], lines)


def _tree_of(repo: Path, trie: dict[bytes, object]) -> bytes:
    """A tree from a trie of raw names: a dict is a directory, a (mode, sha) pair an entry."""
    entries = []
    for name, node in trie.items():
        if isinstance(node, dict):
            entries.append(("040000", _tree_of(repo, node), name))
        else:
            mode, sha = node  # type: ignore[misc]
            entries.append((mode, sha, name))
    return mktree(repo, entries)


def attack_commit(
    hub: Path, files: Mapping[bytes, tuple[str, bytes]], message: str = "attack"
) -> str:
    """A commit on the hub's ``main`` whose tree is ``main``'s plus ``files`` (raw path ->
    (mode, content; for a gitlink, the commit sha)), top-level names new to the tree;
    the hub's ``main`` is moved to it. Returns the commit's sha."""
    parent = _run(hub, ["rev-parse", "main"])
    listing = _run(hub, ["ls-tree", "-z", "main"]) + b"\0"
    entries: dict[bytes, tuple[str, bytes, bytes]] = {}
    for line in listing.split(b"\0"):
        if not line:
            continue
        meta, name = line.split(b"\t", 1)
        mode, _, sha = meta.split(b" ")
        entries[name] = (mode.decode(), sha, name)
    trie: dict[bytes, object] = {}
    for path, (mode, content) in files.items():
        sha = content if mode == GITLINK else blob(hub, content)
        *dirs, leaf = path.split(b"/")
        node = trie
        for part in dirs:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[leaf] = (mode, sha)
    for name, sub in trie.items():
        if isinstance(sub, dict):
            entries[name] = ("040000", _tree_of(hub, sub), name)
        else:
            mode, sha = sub  # type: ignore[misc]
            entries[name] = (mode, sha, name)
    tree = mktree(hub, list(entries.values()))
    commit = _run(hub, ["commit-tree", tree.decode(), "-p", parent.decode(), "-m", message])
    _run(hub, ["update-ref", "refs/heads/main", commit.decode(), parent.decode()])
    return commit.decode()
