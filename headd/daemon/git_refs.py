"""A branch tip read from git's ref files, so the daemon can answer without loading libgit2.

Why: importing pygit2 is a real share of a cold start that must reach READY within 0.5 s at
10,000 memories, and before READY and on every request the daemon only asks "which commit is the followed ref at now?" (one libgit2 lookup otherwise). For
the plain layout git itself writes, that is a file read: ``HEAD``, a loose ref under ``refs/``,
else a line of ``packed-refs``; git replaces each of them by an atomic rename, so a read sees the
old or the new value, never half of one.

Anything else is answered by pygit2, which the caller falls back to when :class:`Unreadable` is
raised: a ``.git`` file (worktrees, submodules), a ``commondir``, a reftable, any
``[extensions]`` in the config, a repository found by searching upwards, a symbolic ref other
than ``HEAD`` naming a branch, a ref name outside ``refs/``, a file that does not hold a hex id.
:meth:`RefFiles.at` returns None for a layout it does not read at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

#: A full object id: SHA-1 (40) or SHA-256 (64) hex digits.
_OBJECT_ID: Final = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
#: The ref names read from files: ``refs/`` and safe path segments only.
_REF_NAME: Final = re.compile(
    r"refs/(?:[A-Za-z0-9_][A-Za-z0-9._+-]*/)*[A-Za-z0-9_][A-Za-z0-9._+-]*"
)
_SYMBOLIC: Final = "ref: "


class Unreadable(Exception):
    """The files cannot say for sure: ask pygit2."""


class RefFiles:
    """Reads refs from one plain git directory (``<store>/.git``, or a bare ``<store>``)."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir

    @classmethod
    def at(cls, store: Path) -> RefFiles | None:
        """The ref reader of the repository at ``store``, or None when its layout is not the
        plain one (see the module docstring)."""
        dot_git = store / ".git"
        if dot_git.is_dir():
            git_dir = dot_git
        elif dot_git.exists() or dot_git.is_symlink():
            return None  # a .git file: a worktree or a submodule
        else:
            git_dir = store  # a bare repository, if the checks below hold
        try:
            if not (git_dir / "HEAD").is_file() or not (git_dir / "objects").is_dir():
                return None
            if (git_dir / "commondir").exists() or (git_dir / "reftable").exists():
                return None
            config = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if re.search(r"^\s*\[\s*extensions\b", config, re.IGNORECASE | re.MULTILINE):
            return None
        return cls(git_dir)

    def followed_ref(self) -> str:
        """What ``HEAD`` names: its branch (``refs/...``, born or not), or ``HEAD`` when detached."""
        content = self._read("HEAD")
        if content is None:
            raise Unreadable("HEAD is missing")
        if content.startswith(_SYMBOLIC):
            target = content[len(_SYMBOLIC) :].strip()
            if _REF_NAME.fullmatch(target) is None:
                raise Unreadable(f"HEAD names {target!r}")
            return target
        if _OBJECT_ID.fullmatch(content.strip()) is None:
            raise Unreadable("HEAD holds neither a ref nor an object id")
        return "HEAD"

    def read_ref(self, name: str) -> str | None:
        """The object id ``name`` points at (through ``HEAD``'s branch for ``HEAD``), or None
        when the ref does not exist."""
        if name == "HEAD":
            content = self._read("HEAD")
            if content is None:
                raise Unreadable("HEAD is missing")
            if not content.startswith(_SYMBOLIC):
                return self._object_id(content, name)
            name = content[len(_SYMBOLIC) :].strip()
        if _REF_NAME.fullmatch(name) is None:
            raise Unreadable(f"not a ref name read from files: {name!r}")
        content = self._read(name)
        if content is None:
            return self._packed(name)
        if content.startswith(_SYMBOLIC):
            raise Unreadable(f"{name} is symbolic")
        return self._object_id(content, name)

    def _read(self, name: str) -> str | None:
        try:
            return (self.git_dir / name).read_text(encoding="ascii")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise Unreadable(f"{name}: {exc}") from None

    @staticmethod
    def _object_id(content: str, name: str) -> str:
        sha = content.strip()
        if _OBJECT_ID.fullmatch(sha) is None:
            raise Unreadable(f"{name} holds no object id")
        return sha

    def _packed(self, name: str) -> str | None:
        text = self._read("packed-refs")
        if text is None:
            return None
        for line in text.splitlines():
            if not line or line[0] in "#^":
                continue
            sha, _space, ref = line.partition(" ")
            if ref == name:
                return self._object_id(sha, name)
        return None
