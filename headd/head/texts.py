"""A record's file text, read when a path needs it rather than kept on every record.

A record names its file by ``blob_sha``, git's id of the file's bytes. Three paths need the
text itself: an overlay that splices a head (link, unlink, label, unlabel) or re-parses a moved
file, the archive default that stamps the current file, and the commit that writes the files a
session touched. For a record parsed from a commit the text is the blob in the object database,
read by its id (microseconds); for a record an overlay parsed from a session's op it is not in
git until the commit lands, so the overlay's view keeps it (``IndexedView.pending_texts``).

The core stays pure: the git read is a :data:`ReadBlob` its caller passes in
(``headd.store.git_io.blob_text`` bound to a repository).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from headd.errors import GitFailure
from headd.record import MemoryRecord

#: The text of a blob by its id (the file's exact UTF-8 text, as the parser read it).
ReadBlob = Callable[[str], str]


def record_text(
    pending: Mapping[str, str], record: MemoryRecord, read_blob: ReadBlob | None
) -> str:
    """The file text of ``record``: from ``pending`` (a view's ``pending_texts``) when an overlay
    parsed it, else the blob ``read_blob`` reads.

    GitFailure when the text is in git and no reader was given, or the blob is not there.
    """
    text = pending.get(record.blob_sha)
    if text is not None:
        return text
    if read_blob is None:
        raise GitFailure(
            f"the text of {record.path} is in git and no blob reader was given",
            {"path": record.path},
        )
    return read_blob(record.blob_sha)
