"""Turn what a client sends into what the overlay applies: ``write`` → ``put``, archive defaults.

A ``write`` is rendered the way memhtml's writer renders it (``headd.memfile.render``) and placed
by its placement rules (``headd.memfile.placement``); the resulting put is marked ``from_write``
so a duplicate of active content is answered ``deduped`` rather than refused. An ``archive``
without ``to``/``html`` gets the archive path of its source in the current year and the source's
file with the three archive stamps. ``now`` is passed in; nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from datetime import datetime

from headd.errors import HeaddError, PathNotFound
from headd.ops import Archive, Op, Put, Write
from headd.store.ports import ReadBlob, View, record_text
from headd.store.sessions import LoggedOp


class _Taken(Set[str]):
    """The paths a placement must avoid: held in the view, in the tree, or placed in this batch.

    Only membership is asked by placement; iteration covers the batch's own paths.
    """

    def __init__(self, view: View, in_tree: Callable[[str], bool], batch: set[str]) -> None:
        self.view = view
        self.in_tree = in_tree
        self.batch = batch
        #: Paths an earlier op of the batch archived: free again for a later op of it.
        self.vacated: set[str] = set()

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        if path in self.batch:
            return True
        if path in self.vacated:
            return False
        return self.view.record(path) is not None or self.in_tree(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self.batch)

    def __len__(self) -> int:
        return len(self.batch)


def render_write(op: Write, taken: Set[str], now: datetime) -> Put:
    """The ``write`` op as memhtml's doors run it: refuse what they refuse (every reason), render
    with the template, place by the placement rules; the result is an ordinary ``put``."""
    from headd.memfile.placement import choose_path
    from headd.memfile.render import check_write, fields_from_write_op, render_memory

    fields = fields_from_write_op(op, now)
    check_write(fields, op.path or "")
    path = choose_path(
        title=op.title,
        memory_type=op.type,
        taken=taken,
        now=now,
        entities=op.entities or (),
        tags=op.tags or (),
        workspace=op.workspace,
        path=op.path,
    )
    return Put(path=path, html=render_memory(fields))


def fill_archive(
    op: Archive, current_html: str | None, now: datetime, taken: Callable[[str], bool] | None = None
) -> Archive:
    """``op`` with its defaults: the destination, the first free archive slot for its path this
    year (``taken`` says which are held), and the stamped current file."""
    if op.to is not None and op.html is not None:
        return op
    from headd.memfile.archive import archive_path, archive_stamps

    to = op.to if op.to is not None else archive_path(op.path, now.year, taken)
    html = op.html
    if html is None:
        if current_html is None:
            raise PathNotFound(f"archive: no memory at {op.path}", {"path": op.path})
        html = archive_stamps(current_html, now)
    return Archive(path=op.path, to=to, html=html)


def resolve_ops(
    ops: Sequence[Op],
    view: View,
    in_tree: Callable[[str], bool],
    now: datetime,
    read_blob: ReadBlob,
) -> list[LoggedOp | HeaddError]:
    """Each op resolved, or the error that stopped it (the caller turns it into a violation).

    ``read_blob`` reads a record's file text from git, for an archive that stamps the current
    file (a record keeps no text of its own)."""
    batch_paths: set[str] = set()
    batch_html: dict[str, str] = {}
    taken = _Taken(view, in_tree, batch_paths)
    out: list[LoggedOp | HeaddError] = []
    for op in ops:
        try:
            if isinstance(op, Write):
                put = render_write(op, taken, now)
                logged = LoggedOp(op=put, from_write=True)
            elif isinstance(op, Archive):
                current = batch_html.get(op.path)
                if current is None and op.html is None:
                    record = view.record(op.path)
                    if record is not None:
                        current = record_text(view, record, read_blob)
                logged = LoggedOp(op=fill_archive(op, current, now, taken.__contains__))
            else:
                logged = LoggedOp(op=op)
        except HeaddError as exc:  # a render/placement refusal is this op's violation
            out.append(exc)
            continue
        if isinstance(logged.op, Put):
            batch_paths.add(logged.op.path)
            batch_html[logged.op.path] = logged.op.html
        elif isinstance(logged.op, Archive) and logged.op.to is not None:
            batch_paths.add(logged.op.to)  # a second archive of the path takes the next slot
            batch_paths.discard(logged.op.path)
            taken.vacated.add(logged.op.path)
        out.append(logged)
    return out
