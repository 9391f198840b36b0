"""OS and libgit2 failures turned into the error a client can act on.

A full disk must read as a full disk: ``ERR_STORAGE`` naming ``ENOSPC`` (and ``EDQUOT``, a full
quota, the same for the user), not whatever git says next about the half-written object. libgit2
reports a failed write as a ``GitError`` (or an ``OSError``) whose message carries the system's
text, so both the errno and the text are looked at.
"""

from __future__ import annotations

import errno
import os

from headd.errors import GitFailure, HeaddError, StorageFailure

#: errno → the text libgit2 and the C library put in their messages.
FULL = {errno.ENOSPC: os.strerror(errno.ENOSPC), errno.EDQUOT: os.strerror(errno.EDQUOT)}


def full_disk(exc: BaseException) -> int | None:
    """The errno when ``exc`` (or an exception it was raised from) says the disk is full."""
    seen: BaseException | None = exc
    while seen is not None:
        number = getattr(seen, "errno", None)
        if number in FULL:
            return int(number)
        text = str(seen)
        for code, message in FULL.items():
            if message in text:
                return code
        seen = seen.__cause__ or seen.__context__
    return None


def storage_failure(
    what: str, exc: BaseException, details: dict[str, object] | None = None
) -> StorageFailure:
    """``ERR_STORAGE``: ``what`` failed, with the errno's name and text when there is one."""
    number = full_disk(exc)
    if number is None:
        number = getattr(exc, "errno", None)
    facts: dict[str, object] = dict(details or {})
    if isinstance(number, int) and number in errno.errorcode:
        name = errno.errorcode[number]
        facts["errno"] = name
        return StorageFailure(f"{what}: {name} ({os.strerror(number)})", facts)
    return StorageFailure(f"{what}: {exc}", facts)


def git_failure(
    what: str, exc: BaseException, details: dict[str, object] | None = None
) -> HeaddError:
    """``ERR_STORAGE`` when the disk is full, else ``ERR_GIT``: ``what`` failed."""
    if full_disk(exc) is not None:
        return storage_failure(what, exc, details)
    return GitFailure(f"{what}: {exc}", dict(details or {}))
