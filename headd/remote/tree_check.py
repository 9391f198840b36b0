"""A fetched commit's tree, judged by git's checkout rules before it touches the work tree.

Whoever can push to the shared remote writes the trees a follower checks out, so every path of a
remote tip is checked before the branch moves to it or a single file is written. The rules are
git's own (``verify_path`` and ``fsck``'s tree checks), because a path git itself would never
check out is exactly a path that reaches somewhere it must not:

- no component that is, or that some file system takes for, ``.git``: any case, HFS+'s ignored
  code points (``.g\\u200cit``), NTFS's trailing dots and spaces (``.git.``), its alternate data
  streams (``.git::$INDEX_ALLOCATION``) and its short name (``git~1``). Written through, such a
  path lands in the store's own git directory: a hook, or a ``commondir`` that makes the next
  ``git fetch`` run a pushed command;
- no empty, ``.`` or ``..`` component, no ``/`` or NUL inside a name (a tree written with
  ``git mktree`` or ``hash-object`` can hold any byte);
- ``.gitmodules``, ``.gitattributes``, ``.gitignore`` and ``.mailmap`` never as a symbolic link
  (git refuses them: they are read through the link);
- a component longer than 255 bytes, a name that is not UTF-8, or a mode git does not write are
  names no checkout here can hold: refused rather than failing every round half way through;
- headd's private state: nothing under ``.memhtml/`` except the committed state sidecar
  (``COMMITTED_STATE``), and no ``.memhtml`` that is not a directory. Snapshots, session logs,
  models, ``index.db``, ``state.db`` and logs are this machine's own, never taken from a tree.

Gitlinks pass (git checks them out as an empty directory, headd never writes one) and so do
other symbolic links (headd never writes through one: ``headd.symlinks``).

A tree is judged whole; the first problem refuses the commit. Subtrees already judged at the same
place are skipped (their ids are content hashes), so a round that fetched one new memory looks at
the trees along its path only.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from headd.git_names import is_git_name
from headd.paths import MAX_COMPONENT_BYTES as NAME_MAX
from headd.paths import MAX_PATH_BYTES as PATH_MAX

#: The only paths under ``.memhtml/`` that are committed data: memhtml's state sidecar.
COMMITTED_STATE = frozenset({".memhtml/state/access.jsonl"})
PRIVATE_DIR = ".memhtml"

_BLOB_MODES = frozenset({0o100644, 0o100755})
_LINK_MODE = 0o120000
_TREE_MODE = 0o040000
_GITLINK_MODE = 0o160000
_NO_SYMLINK = (".gitmodules", ".gitattributes", ".gitignore", ".mailmap")

#: Directories a path may nest: far beyond any memory's place, and well inside the stack of the
#: walks that read a tree (this one, the head's), which a tree thousands deep would overflow.
MAX_DEPTH = 100


@dataclass(frozen=True, slots=True)
class TreeProblem:
    """Why a path of a tree cannot be checked out: ``path`` as far as it could be read."""

    path: str
    reason: str


def component_problem(raw: bytes) -> tuple[str, str | None]:
    """(the name as text, why git refuses it or None)."""
    text = raw.decode("utf-8", errors="backslashreplace")
    if raw in (b"", b".", b".."):
        return text, "an empty, '.' or '..' component"
    if b"/" in raw or b"\0" in raw:
        return text, "a name holding '/' or NUL"
    if len(raw) > NAME_MAX:
        return text, f"a name longer than {NAME_MAX} bytes, which no file system here holds"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return text, "a name that is not UTF-8"
    if is_git_name(text, ".git"):
        return text, "a component that is, or a file system takes for, '.git'"
    return text, None


def _private_problem(path: str, mode: int) -> str | None:
    """Why ``path`` (a full path of the tree) is headd's private state, or None."""
    if path == PRIVATE_DIR:
        return None if mode == _TREE_MODE else "'.memhtml' that is not a directory"
    if not path.startswith(PRIVATE_DIR + "/"):
        return None
    if mode == _TREE_MODE:
        if any(kept.startswith(path + "/") for kept in COMMITTED_STATE):
            return None
    elif path in COMMITTED_STATE and mode in _BLOB_MODES:
        return None
    return "headd's private state under '.memhtml/', never taken from a tree"


class TreeJudge:
    """Judges trees, remembering the (place, tree) pairs already found clean."""

    def __init__(self) -> None:
        self._clean: set[tuple[str, str]] = set()

    def problem(self, repo: pygit2.Repository, commit: str) -> TreeProblem | None:
        """The first path of ``commit``'s tree git would not check out, or None."""
        try:
            tree = repo[commit].peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            return TreeProblem("", f"the commit's tree cannot be read ({exc})")
        return self._walk(tree, "", 0)

    def _walk(self, tree: pygit2.Tree, prefix: str, depth: int) -> TreeProblem | None:
        key = (prefix, str(tree.id))
        if key in self._clean:
            return None
        if depth >= MAX_DEPTH:
            return TreeProblem(prefix, f"a directory nested deeper than {MAX_DEPTH} levels")
        try:
            entries = [(e.raw_name or b"", e.filemode, e) for e in tree]
        except (ValueError, pygit2.GitError) as exc:
            return TreeProblem(prefix, f"a tree that cannot be read ({exc})")
        for raw, mode, entry in entries:
            name, why = component_problem(raw)
            path = f"{prefix}/{name}" if prefix else name
            if why is None:
                why = _entry_problem(path, name, mode)
            if why is not None:
                return TreeProblem(path, why)
            if mode == _TREE_MODE:
                try:
                    sub = entry.peel(pygit2.Tree)
                except (KeyError, ValueError, pygit2.GitError) as exc:
                    return TreeProblem(path, f"a tree that cannot be read ({exc})")
                found = self._walk(sub, path, depth + 1)
                if found is not None:
                    return found
        self._clean.add(key)
        return None


def _entry_problem(path: str, name: str, mode: int) -> str | None:
    if len(path.encode("utf-8", errors="surrogateescape")) > PATH_MAX:
        return f"a path longer than {PATH_MAX} bytes"
    if mode not in _BLOB_MODES and mode not in (_LINK_MODE, _TREE_MODE, _GITLINK_MODE):
        return f"a mode git does not write ({mode:o})"
    if mode == _LINK_MODE and any(is_git_name(name, special) for special in _NO_SYMLINK):
        return "a symbolic link git refuses (it would be read through the link)"
    if mode == _TREE_MODE and is_git_name(name, ".gitmodules"):
        return "'.gitmodules' that is not a file"
    return _private_problem(path, mode)
