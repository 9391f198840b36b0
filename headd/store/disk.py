"""OS and libgit2 failures turned into the error a client can act on.

A full disk must read as a full disk: ``ERR_STORAGE`` naming ``ENOSPC`` (and ``EDQUOT``, a full
quota, the same for the user), not whatever git says next about the half-written object. libgit2
reports a failed write as a ``GitError`` (or an ``OSError``) whose message carries the system's
text, so both the errno and the text are looked at. Some of libgit2's failed object writes say
neither (a blob that was never written surfaces as "the path … does not exist in the given
tree" when the tree is built), so a failure while writing is also checked by a probe: writing a
few kilobytes where the write went, and seeing whether the disk refuses them.
"""

from __future__ import annotations

import errno
import os
import tempfile

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


PROBE_BYTES = 64 * 1024


def refuses_a_write(where: str | os.PathLike[str], size: int = PROBE_BYTES) -> int | None:
    """The errno (ENOSPC, EDQUOT) when writing ``size`` bytes in directory ``where`` fails for
    want of space; None when the write fits (or fails for another reason)."""
    try:
        with tempfile.TemporaryFile(dir=where) as fh:
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        return exc.errno if exc.errno in FULL else None
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
    what: str,
    exc: BaseException,
    details: dict[str, object] | None = None,
    where: str | os.PathLike[str] | None = None,
) -> HeaddError:
    """``ERR_STORAGE`` when the disk is full (said by ``exc``, or, given ``where``, the
    directory the failed write went to, by a probe write there), else ``ERR_GIT``."""
    if full_disk(exc) is not None:
        return storage_failure(what, exc, details)
    if where is not None:
        number = refuses_a_write(where)
        if number is not None:
            return storage_failure(what, OSError(number, os.strerror(number)), details)
    return GitFailure(f"{what}: {exc}", dict(details or {}))
