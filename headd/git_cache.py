"""libgit2's object cache, sized so a large folder's tree is parsed once, not on every lookup.

libgit2 caches a parsed tree only up to 4 KiB of raw size by default, so a bucket directory of
thousands of files (a 5,000-entry tree is ~250 KiB) was re-read and re-parsed on every lookup:
~1.4 ms each, several per one-file advance, plane update or tree walk, more than the rest of a
one-file advance together. Trees up to :data:`TREE_CACHE_LIMIT_BYTES` stay cached. The setting
is process-wide and stays within libgit2's overall cache budget (256 MiB by default); every
reader of trees (the head's load and advance, the plane's git source) calls
:func:`cache_large_trees` first, which is idempotent and costs one C call.
"""

from __future__ import annotations

import logging

import pygit2

log = logging.getLogger(__name__)

TREE_CACHE_LIMIT_BYTES = 8 << 20

_done = False


def cache_large_trees() -> None:
    """Raise libgit2's per-object cache limit for trees (once per process)."""
    global _done
    if _done:
        return
    try:
        pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, TREE_CACHE_LIMIT_BYTES)
    except (AttributeError, pygit2.GitError, ValueError):  # an older binding: only slower
        log.debug("cannot raise libgit2's tree cache limit", exc_info=True)
    _done = True
