"""One process of a load's parse pool (``parallel_parse``): reads, parses and tokenizes runs.

Started as ``python -m headd.head.parse_worker CLAIMS_FD``. It imports pygit2, msgspec, the
parser and the pure-Python tokenizer, and nothing else: not numpy, not the indexes, not the
parent's ``__main__`` (which a ``multiprocessing`` spawn child re-imports, the whole daemon for
``headd``), so it starts in a third of the CPU a spawned pool worker needs.

The protocol, all binary:

* stdin: one frame (``<Q`` length, then msgpack :class:`Job`): the repository and every run's
  ``(path, blob id)`` entries. Read whole before anything is written, so the parent's write of it
  can never wait on this process's output.
* ``CLAIMS_FD``: a pipe shared by every worker holding one byte per run, the run's index. A worker
  takes the next run by reading one byte (a one-byte read is atomic), so a faster worker takes
  more runs; end of file means no run is left.
* stdout: per run, a ``<iQ`` header (run index, length) and the msgpack :class:`Run`; then a
  header with :data:`DONE`. A failure sends :data:`FAILED` with the message and exits non-zero.
"""

from __future__ import annotations

import os
import struct
import sys
from typing import BinaryIO, Final

import msgspec
import pygit2

from headd.head.blob_parse import SkippedFile, read_and_parse
from headd.head.tokens import code_token_lists, indexed_text, tokenize
from headd.record import MemoryRecord

#: A result frame's header: run index (or DONE / FAILED), payload length.
HEADER: Final = struct.Struct("<iQ")
#: The job frame's header: its length.
JOB_HEADER: Final = struct.Struct("<Q")
DONE: Final = -1
FAILED: Final = -2


class Skip(msgspec.Struct, frozen=True, array_like=True):
    path: str
    reason: str


class Run(msgspec.Struct, frozen=True, array_like=True):
    """One run's results: records and skips with their positions, and the active records'
    tokens coded against the run's own vocabulary (``tokens.code_token_lists``)."""

    records: list[tuple[int, MemoryRecord]]
    skips: list[tuple[int, Skip]]
    names: list[str]
    #: int32, native order: every token of every active record, as its position in ``names``.
    codes: bytes
    sizes: list[int]


class Job(msgspec.Struct, frozen=True, array_like=True):
    """What every worker of one pool is given: the repository, and each run's first position
    in the tree and ``(path, blob id hex)`` entries."""

    repo_path: str
    starts: list[int]
    runs: list[list[tuple[str, str]]]
    #: Whether to tokenize for the head's lexical index; the plane's rebuild has no use for the
    #: tokens (a large share of a worker's CPU) and asks for none.
    tokens: bool = True


def parse_run(
    repo: pygit2.Repository, start: int, entries: list[tuple[str, str]], tokens: bool = True
) -> Run:
    """Entries ``start``.. of the tree read, parsed and, for the active records, tokenized
    (unless ``tokens`` is false: then the run carries no tokens at all)."""
    records: list[tuple[int, MemoryRecord]] = []
    skips: list[tuple[int, Skip]] = []
    for index, (path, hex_id) in enumerate(entries, start=start):
        parsed = read_and_parse(repo, path, pygit2.Oid(hex=hex_id))
        if isinstance(parsed, SkippedFile):
            skips.append((index, Skip(parsed.path, parsed.reason)))
        else:
            records.append((index, parsed))
    if not tokens:
        return Run(records, skips, [], b"", [])
    names, codes, sizes = code_token_lists(
        tokenize(indexed_text(record)) for _, record in records if not record.archived
    )
    return Run(records, skips, names, codes.tobytes(), sizes)


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the parent closed the job stream early")
    return data


def serve(claims_fd: int, jobs: BinaryIO, results: BinaryIO) -> None:
    """Take runs until none is left, sending each one's result as it is done."""
    (length,) = JOB_HEADER.unpack(_read_exactly(jobs, JOB_HEADER.size))
    job = msgspec.msgpack.decode(_read_exactly(jobs, length), type=Job)
    repo = pygit2.Repository(job.repo_path)
    encoder = msgspec.msgpack.Encoder()
    while claim := os.read(claims_fd, 1):
        index = claim[0]
        payload = encoder.encode(parse_run(repo, job.starts[index], job.runs[index], job.tokens))
        results.write(HEADER.pack(index, len(payload)))
        results.write(payload)
        results.flush()
    results.write(HEADER.pack(DONE, 0))
    results.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # The results go to a private copy of stdout; fd 1 becomes stderr, so nothing the parser or
    # a library prints can land inside a frame.
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        serve(int(args[0]), sys.stdin.buffer, results)
    except BaseException as exc:  # reported in band, so the parent logs why and parses inline
        message = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        try:
            results.write(HEADER.pack(FAILED, len(message)))
            results.write(message)
            results.flush()
        except OSError:
            pass  # the parent is gone or stopped reading: nobody to tell
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
