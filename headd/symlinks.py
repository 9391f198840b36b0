"""Symbolic links in a work tree, found without ever following one.

headd never reads or writes memory text through a link: a link in a store's work tree (committed
or not) may point anywhere on the machine, and following it would index, show or overwrite a file
outside the store. Each check walks the path component by component with ``lstat``.
"""

from __future__ import annotations

import os
import stat


def prefixes(path: str) -> list[str]:
    """``a/b/c`` → ``a``, ``a/b``, ``a/b/c``."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def worktree_symlink(root: str | os.PathLike[str], path: str) -> str | None:
    """The first component of ``path`` (``path`` itself included) that is a symbolic link in
    the work tree at ``root`` (committed or not), or None; never follows one to look."""
    for prefix in prefixes(path):
        try:
            mode = os.lstat(os.path.join(root, prefix)).st_mode
        except FileNotFoundError:
            return None
        except OSError:
            return prefix  # unreadable: treat as unsafe to write through
        if stat.S_ISLNK(mode):
            return prefix
        if not stat.S_ISDIR(mode):
            return None
    return None
