"""The one git helper: the ``git`` command as a person at a terminal runs it, and reads of what
a repository holds (independent of the code under test, which reads through pygit2 or git_io)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pygit2

#: The identity of the person whose commits are "external" (made outside headd).
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ext",
    "GIT_AUTHOR_EMAIL": "ext@example.com",
    "GIT_COMMITTER_NAME": "Ext",
    "GIT_COMMITTER_EMAIL": "ext@example.com",
}


def git(root: Path, *args: str) -> str:
    """``git -C root args...``: its stdout, stripped; a failure raises."""
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **IDENTITY},
    )
    return done.stdout.strip()


def external_commit(root: Path, files: Mapping[str, str], message: str = "external") -> str:
    """Write files into the work tree and ``git commit`` them, as a person would; the new sha."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def tip(root: Path, ref: str = "refs/heads/main") -> str:
    """The sha ``ref`` points at."""
    return str(pygit2.Repository(str(root)).references[ref].target)


def file_at(root: Path, sha: str, path: str) -> str | None:
    """The text of ``path`` at commit ``sha``, or None when the commit has no such file."""
    repo = pygit2.Repository(str(root))
    tree = repo[sha].peel(pygit2.Tree)
    try:
        return bytes(repo[tree[path].id].read_raw()).decode("utf-8")
    except KeyError:
        return None


def tree_paths(root: Path, sha: str) -> set[str]:
    """Every file path at commit ``sha``."""
    return set(git(root, "ls-tree", "-r", "--name-only", sha).splitlines())
