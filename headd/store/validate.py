"""Judge a batch of ops against one version: the commit path's first step, and ``apply``'s.

Pure: it reads a ``View`` and folds ops through the overlay it is given, touching no file and no
clock. Every op is judged, never just up to the first failure, and each violation names the op
(its index in the session log) that caused it. An op that fails is left out of the fold, so the
ops after it are judged against what would actually land.

Rules, in memhtml's words where it has them (``packages/session/src/validate.ts``):

- ``batch-cap``: more than ``cap`` ops in one session (200 by default) refuses the whole batch.
- ``reserved-path``: ``.memhtml/`` and any ``index.html`` or ``sitemap.xml`` are the tool's own.
- ``format``: a file that breaks the format (every violation the parser names), a path outside
  the four buckets or with ``.``/``..``/empty segments, an archive destination that is not
  ``archive/<YYYY>/<path>``, a move into ``archive/``, or an op the overlay cannot resolve.
- ``duplicate``: a put whose content hash is already active (elsewhere, at its own path, or
  earlier in the batch). A put rendered from a ``write`` is instead answered ``deduped`` with
  the existing path and dropped, writing nothing.
- ``format`` also: an archive to a destination that holds an archived version already (every
  archived version stays at the tip; ``archive_path`` picks a free slot).
- ``claim-edit``: a put over an active path with a different content hash. Claims are never
  edited in place; a correction is an archive plus a new put.
- ``too-large``: a put whose file is over :data:`headd.limits.MAX_MEMORY_BYTES` (``count`` its
  bytes, ``cap`` the limit): a memory is one fact, and one pasted log would bloat every answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from headd.errors import HeaddError, InvalidMemory
from headd.limits import MAX_MEMORY_BYTES
from headd.ops import Archive, LinkOp, Move, OverlayOp, Put, Retask
from headd.paths import origin_path_of, para_of
from headd.store.ports import Overlay, View, parse_memory
from headd.store.results import Deduped, Violation
from headd.store.sessions import LoggedOp

BATCH_CAP = 200
RESERVED_PREFIXES = (".memhtml/",)
RESERVED_NAMES = frozenset({"index.html", "sitemap.xml"})
_ARCHIVE_PATH = re.compile(r"^archive/(\d{4})/(.+)$")


_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z")


def touched_paths(op: OverlayOp) -> tuple[str, ...]:
    """Every path an op writes or removes (a link's target is read, not touched)."""
    if isinstance(op, Archive | Move):
        return (op.path, op.to) if op.to is not None else (op.path,)
    return (op.path,)


def is_reserved(path: str) -> bool:
    normalized = path.lstrip("/")
    if normalized.startswith(RESERVED_PREFIXES) or normalized == ".memhtml":
        return True
    return normalized.rsplit("/", 1)[-1] in RESERVED_NAMES


def path_problems(path: str) -> list[str]:
    """Why ``path`` cannot hold a memory, or nothing."""
    problems = []
    if path.startswith("/"):
        problems.append("path: must be repo-relative, without a leading slash")
    segments = path.lstrip("/").split("/")
    if any(seg in ("", ".", "..") for seg in segments):
        problems.append("path: empty, '.' and '..' segments are not allowed")
    if para_of(path) is None:
        problems.append("path: must be under projects/, areas/, resources/ or archive/")
    if not path.endswith(".html"):
        problems.append("path: a memory file ends in .html")
    return problems


def archive_destination_problems(source: str, to: str) -> list[str]:
    match = _ARCHIVE_PATH.match(to)
    if match is None or origin_path_of(to) != source:
        return ["archive destination is not archive/<YYYY>/[<N>/]<original path>"]
    return []


class Judgement(NamedTuple):
    violations: tuple[Violation, ...]
    deduped: tuple[Deduped, ...]
    #: The overlay of every op that passed, on the judged version.
    view: View
    #: Log indexes of the ops folded into ``view``.
    accepted: tuple[int, ...]


def _format(op_index: int, path: str, reasons: Sequence[str]) -> Violation:
    return Violation(kind="format", path=path, op=op_index, reasons=tuple(reasons))


def _too_large(op_index: int, path: str, size: int) -> Violation:
    reason = f"the memory file is {size} bytes; the limit is {MAX_MEMORY_BYTES} bytes"
    return Violation(
        kind="too-large",
        path=path,
        op=op_index,
        reasons=(reason,),
        count=size,
        cap=MAX_MEMORY_BYTES,
    )


def _reasons_of(error: HeaddError) -> tuple[str, ...]:
    if isinstance(error, InvalidMemory):
        return error.violations
    return (error.message,)


def _static_problems(op: OverlayOp) -> list[str]:
    """What is wrong with an op before any version is consulted."""
    match op:
        case Put(path=path):
            return path_problems(path)
        case Archive(path=path, to=to, html=html):
            problems = []
            if to is None or html is None:
                problems.append("archive op without its destination or html (fill the defaults)")
            if to is not None:
                problems += archive_destination_problems(path, to)
            return problems
        case Move(to=to):
            problems = [p.replace("path:", "move destination:") for p in path_problems(to)]
            if to.startswith("archive/"):
                problems.append("move destination is under archive/; retiring is the archive op")
            return problems
        case LinkOp(href=href):
            return (
                []
                if href.startswith("/") and not href.startswith("//")
                else ["href is not root-relative"]
            )
        case Retask(at=at) if at is not None and _INSTANT.fullmatch(at) is None:
            return ["retask `at` is not an instant (YYYY-MM-DDThh:mm:ssZ)"]
    return []


def judge(
    version: View,
    ops: Sequence[LoggedOp],
    overlay: Overlay,
    *,
    first_index: int = 0,
    total: int | None = None,
    cap: int = BATCH_CAP,
) -> Judgement:
    """Judge ``ops`` in order on ``version``; ``first_index`` is the log index of ``ops[0]``.

    ``total`` is the size of the whole batch the cap applies to (the session's ops after an
    ``apply``); it defaults to ``len(ops)``.
    """
    count = len(ops) if total is None else total
    if count > cap:
        return Judgement((Violation(kind="batch-cap", count=count, cap=cap),), (), version, ())
    violations: list[Violation] = []
    deduped: list[Deduped] = []
    accepted: list[int] = []
    view = version
    # Consecutive puts are folded in one overlay call (a fold per op rebuilds the lexical
    # buckets each time). Judging a put against the view before its run plus the run's own
    # puts is exact: a put only inserts, and one that would replace an active record is refused.
    run: list[tuple[int, Put]] = []
    run_hashes: dict[str, str] = {}

    def flush() -> None:
        nonlocal view
        if not run:
            return
        try:
            view = overlay(view, [put for _, put in run])
            accepted.extend(index for index, _ in run)
        except HeaddError:
            for index, put in run:  # find the one that fails; keep the rest
                try:
                    view = overlay(view, [put])
                except HeaddError as exc:
                    violations.append(_format(index, put.path, _reasons_of(exc)))
                    continue
                accepted.append(index)
        run.clear()
        run_hashes.clear()

    for offset, logged in enumerate(ops):
        index = first_index + offset
        op = logged.op
        reserved = [p for p in touched_paths(op) if is_reserved(p)]
        if reserved:
            violations.extend(Violation(kind="reserved-path", path=p, op=index) for p in reserved)
            continue
        problems = _static_problems(op)
        if problems:
            violations.append(_format(index, op.path, problems))
            continue
        if isinstance(op, Put):
            size = len(op.html.encode("utf-8", "surrogatepass"))
            if size > MAX_MEMORY_BYTES:
                violations.append(_too_large(index, op.path, size))
                continue
            try:
                record = parse_memory(op.path, op.html)
            except InvalidMemory as exc:
                violations.append(_format(index, op.path, exc.violations))
                continue
            existing = run_hashes.get(record.content_hash) or view.by_content_hash(
                record.content_hash
            )
            if existing is not None:
                if logged.from_write:
                    deduped.append(Deduped(op=index, existing=existing))
                else:
                    violations.append(
                        Violation(kind="duplicate", path=op.path, op=index, existing=existing)
                    )
                continue
            current = view.record(op.path)
            in_run = any(put.path == op.path for _, put in run)
            if in_run or (current is not None and not current.archived):
                violations.append(Violation(kind="claim-edit", path=op.path, op=index))
                continue
            run.append((index, op))
            run_hashes[record.content_hash] = op.path
            continue
        flush()
        if isinstance(op, Archive) and op.to is not None and view.record(op.to) is not None:
            # an archived version there already: writing over it would drop it from the tip
            held = f"archive destination {op.to} holds an archived version already"
            violations.append(_format(index, op.path, [held]))
            continue
        try:
            view = overlay(view, [op])
        except HeaddError as exc:
            violations.append(_format(index, op.path, _reasons_of(exc)))
            continue
        accepted.append(index)
    flush()
    return Judgement(tuple(violations), tuple(deduped), view, tuple(accepted))
