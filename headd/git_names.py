"""The names git keeps for itself, in every spelling some file system takes for them.

A path component that a file system resolves to ``.git`` reaches the repository's own directory
(its hooks, its config), so git refuses to check one out in any of these spellings, and so does
headd wherever a path comes from someone else: a remote's tree (``headd.remote.tree_check``) and a
path a request names (``headd.paths.path_problem``). The spellings are git's own
(``is_hfs_dotgit``, ``is_ntfs_dotgit``): any case; HFS+'s ignored code points
(``.g\\u200cit``); NTFS's trailing dots and spaces (``.git.``), its alternate data streams
(``.git::$INDEX_ALLOCATION``) and its 8.3 short names (``git~1``).
"""

from __future__ import annotations

import unicodedata
from typing import Final

#: Code points HFS+ ignores when it compares names (git's ``is_hfs_dotgit`` list).
_HFS_IGNORED: Final = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c\u206d\u206e\u206f"
    "\ufeff"
)
#: The NTFS short names git checks for, by the long name.
_NTFS_SHORT: Final = {".git": "git~1", ".gitmodules": "gi7eba~1"}


def folded(name: str) -> str:
    """``name`` as HFS+ and NTFS compare it: ignored code points dropped, NFC, case folded,
    any ``:`` stream suffix and the trailing dots and spaces NTFS drops removed."""
    kept = "".join(ch for ch in name if ch not in _HFS_IGNORED)
    kept = unicodedata.normalize("NFC", kept).casefold()
    return kept.split(":", 1)[0].rstrip(" .")


def is_git_name(name: str, special: str = ".git") -> bool:
    """Does some file system take ``name`` for ``special`` (``.git``, ``.gitmodules``, ...)?"""
    found = folded(name)
    return found == special or found == _NTFS_SHORT.get(special)
