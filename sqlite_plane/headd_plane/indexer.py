"""Keeping ``index.db`` equal to the tree: rebuild, update by watermark, and vector backfill.

``rebuild`` reads everything first (the tree at HEAD, every blob, every parse: for a large tree,
on a pool of processes when a CPU is idle, ``headd.head.parallel_parse``, each parsed run turned
into rows while the next is parsed), then changes the database in ONE transaction: it clears
``index_state.head_sha``, sets the vectors of the configured space aside, empties the memory
tables, projects every file (in bulk, table by table: :mod:`headd_plane.bulk_load`) and puts back
each saved vector whose chunk came back (foreign keys off for that transaction: it empties and
refills every referencing table itself, ``_foreign_keys_off``). Only then, in a second short
transaction, does it record the commit. A process killed inside the big transaction leaves the
old index untouched; one killed between the two leaves ``head_sha`` NULL, which ``update``
refuses with ``IndexStale`` (and a rebuild repairs). A tree holding two active files with one
body fails with ``DuplicateContent`` and changes nothing.

``update`` diffs the recorded commit against HEAD (renames detected, a rename is an UPDATE of
the path that the child tables' ``ON UPDATE CASCADE`` carries, so chunks and vectors survive),
then adds the dirty working tree, the later change of a path winning. Its writes go in batches of
about :data:`WRITE_BATCH_SIZE` statements, each batch its own transaction and never splitting one
file's writes, and the watermark moves only after the last batch, so an interrupted update is
redone from the same commit by the next one.

The vector space (``<model>@<dim>``) recorded in ``index_state`` must equal the embedder's:
otherwise ``update``, ``backfill``, ``embed_missing`` and a rebuild that cannot write vectors
refuse with ``EmbedModelMismatch``. ``rebuild(embed=True)`` with an embedder is the one way
past: it keeps only vectors already in the new space and records that space before any vector
is written. A store holding no vector at all simply adopts the configured space.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from headd.errors import (
    DuplicateContent,
    EmbedModelMismatch,
    IndexStale,
    InvalidMemory,
    ModelUnavailable,
    RebuildNoEmbedRefused,
)
from headd.record import MemoryRecord
from headd.wire.answers import IndexRebuildAnswer, IndexUpdateAnswer, SkippedFile

from . import bulk_load
from .db import PlaneDb, Write
from .embedding import PlaneEmbedder, embed_documents
from .gitsource import GitSource, TreeEntry, is_indexable_path
from .projection import FileProjection, chunks_of, file_rows, project_file

log = logging.getLogger(__name__)

INDEX_STATE_ID = 1
#: Tables a rebuild empties, children first. Trace tables and the state plane keep their rows.
MEMORY_TABLES = (
    "file_citations",
    "file_facets",
    "file_entities",
    "file_tags",
    "embeddings",
    "chunk_spans",
    "edges",
    "files",
)
WRITE_BATCH_SIZE = 500
EMBED_PERSIST_SLICE = 960
PENDING_SCAN_ID_BATCH = 500
#: Up to this many rows to check for drift are looked up one path at a time; more walk the tree.
DRIFT_LOOKUP_LIMIT = 256
#: The space an index records when it was never given an embedder (embed_dim must be > 0).
NO_SPACE = "none@1"

Hook = Callable[[str], None]
Parse = Callable[[str, bytes], MemoryRecord]


#: Files read between two ``rebuild.reading`` hook points (nothing is written while reading).
READ_HOOK_EVERY = 256


@dataclass
class BackfillReport:
    head_sha: str | None
    chunks: int
    embeddings: int
    embeddings_written: int
    embeddings_remaining: int


def _default_parse() -> Parse:
    from headd.memfile.parse import parse_memory  # the parser engineer's module

    return parse_memory


@contextlib.contextmanager
def _foreign_keys_off(conn: sqlite3.Connection) -> Iterator[None]:
    """Foreign keys off for the rebuild's transaction (the pragma is a no-op inside one).

    The rebuild empties every table that references ``files`` or ``chunks`` itself, children
    first, and inserts rows that satisfy every reference by construction (a chunk names its own
    file, a kept vector is filtered on its chunk), so the checks find nothing; but with them on,
    emptying ``files`` probes five child tables per row and every child row inserted probes
    ``files``, which doubles the bulk load's CPU over an existing index (the rebuild must be at
    least 3× faster than memhtml's at 10,000 files).
    """
    was_on = bool(conn.execute("PRAGMA foreign_keys").fetchone()[0])
    if was_on:
        conn.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        if was_on:
            conn.execute("PRAGMA foreign_keys = ON")


def _dim_of(space: str) -> int:
    _, _, tail = space.rpartition("@")
    try:
        return max(1, int(tail))
    except ValueError:
        return 1


def _is_dedup_violation(error: sqlite3.Error) -> bool:
    text = str(error)
    return "UNIQUE" in text and "files.content_hash" in text


class Indexer:
    """The write side of ``index.db`` for one store."""

    def __init__(
        self,
        db: PlaneDb,
        git: GitSource,
        now: Callable[[], str],
        embedder: PlaneEmbedder | None = None,
        parse: Parse | None = None,
        persist_every: int = EMBED_PERSIST_SLICE,
        hook: Hook | None = None,
    ) -> None:
        self.db = db
        self.git = git
        self.now = now
        self.embedder = embedder
        self._parse = parse
        self.persist_every = persist_every
        self.hook: Hook = hook or (lambda point: None)
        #: Paths the last update indexed from the work tree; None until this process updated.
        self._dirty_indexed: set[str] | None = None
        #: Processes a rebuild parses on; None: decided by the tree's size (``parallel_parse``).
        self.workers: int | None = None

    # -- state ----------------------------------------------------------------------------------

    @property
    def parse(self) -> Parse:
        if self._parse is None:
            self._parse = _default_parse()
        return self._parse

    def read_state(self) -> dict[str, Any] | None:
        row = self.db.get(
            "SELECT id, head_sha, embed_model, embed_dim, rebuilt_at, updated_at "
            "FROM index_state WHERE id = ?",
            (INDEX_STATE_ID,),
            op="index_state.read",
        )
        return None if row is None else dict(zip(row.keys(), tuple(row), strict=True))

    def _count(self, table: str) -> int:
        row = self.db.get(f"SELECT count(*) AS n FROM {table}", op=f"count.{table}")
        return int(row["n"]) if row else 0

    def configured_space(self) -> tuple[str, int]:
        """The space vectors are written in: the embedder's, else the stored one, else none."""
        if self.embedder is not None:
            return self.embedder.space, int(self.embedder.dim) or _dim_of(self.embedder.space)
        state = self.read_state()
        if state is not None:
            return str(state["embed_model"]), int(state["embed_dim"])
        return NO_SPACE, 1

    def guard_space(self) -> None:
        """Refuse to mix two vector spaces; a store without vectors adopts the configured one."""
        if self.embedder is None:
            return
        state = self.read_state()
        if state is None or state["embed_model"] == self.embedder.space:
            return
        if self._count("embeddings") > 0:
            raise EmbedModelMismatch(
                "the stored vector space differs from the configured one",
                {"stored": state["embed_model"], "configured": self.embedder.space},
            )
        space, dim = self.configured_space()
        self.db.run(
            "UPDATE index_state SET embed_model = ?, embed_dim = ? WHERE id = ?",
            (space, dim, INDEX_STATE_ID),
            op="index_state.adopt_space",
        )

    # -- reading and parsing --------------------------------------------------------------------

    def _parse_one(self, path: str, data: bytes, skipped: list[SkippedFile]) -> MemoryRecord | None:
        try:
            return self.parse(path, data)
        except InvalidMemory as error:
            skipped.append(SkippedFile(path, "; ".join(error.violations)))
            return None

    def _project(
        self, path: str, blob_sha: str, data: bytes, indexed_at: str, skipped: list[SkippedFile]
    ) -> FileProjection | None:
        record = self._parse_one(path, data, skipped)
        if record is None:
            return None
        return project_file(record, indexed_at, blob_sha=blob_sha, path=path)

    def _pool_workers(self, candidates: int) -> int:
        """Processes to parse ``candidates`` files on (1: inline). Only the product's own parser
        runs in the pool; an injected one always runs here."""
        if self._parse is not None:
            return 1
        if self.workers is not None:
            return self.workers
        from headd.head.parallel_parse import default_workers

        # The pool is taken as ``load_head`` takes it, whenever two CPUs exist, not gated on the
        # load average: plain workers that skip the tokens start cheaply, a pooled rebuild beats
        # an inline one even with one core busy elsewhere, and a lagging load average would keep
        # the pool off right after any other busy process (docs/design/plane_index.md).
        return default_workers(candidates)

    def _parsed_tree(
        self, entries: Sequence[TreeEntry], skipped: list[SkippedFile]
    ) -> Generator[tuple[TreeEntry, MemoryRecord], None, None]:
        """Every entry's record in tree order, skips recorded in ``skipped``.

        On a pool, runs arrive while later ones parse, so the caller's per-file work overlaps the
        parse. A file the pool skipped is read and parsed again here, so its reason (or a git
        failure on a missing blob) is exactly the inline path's; a pool that stops early leaves
        the rest to this process.
        """
        done = 0
        workers = self._pool_workers(len(entries))
        if workers > 1:
            import pygit2

            from headd.head.parallel_parse import ParsedRun, parse_runs

            candidates = [(e.path, pygit2.Oid(hex=e.blob_sha)) for e in entries]
            pool = parse_runs(self.git.repo.path, candidates, workers, tokens=False)
            with contextlib.closing(cast(Generator[ParsedRun, None, None], pool)) as runs:
                for run in runs:
                    for entry, item in zip(entries[run.start : run.stop], run.items, strict=True):
                        if isinstance(item, MemoryRecord):
                            yield entry, item
                        else:
                            again = self._parse_one(
                                entry.path, self.git.blob(entry.blob_sha), skipped
                            )
                            if again is not None:
                                yield entry, again
                    done = run.stop
        for entry in entries[done:]:
            record = self._parse_one(entry.path, self.git.blob(entry.blob_sha), skipped)
            if record is not None:
                yield entry, record

    # -- rebuild --------------------------------------------------------------------------------

    def rebuild(self, embed: bool = False, force: bool = False) -> IndexRebuildAnswer:
        cannot_embed = not embed or self.embedder is None
        if cannot_embed:
            self.guard_space()
            if not force:
                held = self._count("embeddings")
                if held > 0:
                    raise RebuildNoEmbedRefused(
                        "this store carries vectors; a rebuild without an embedder would leave "
                        "every new or changed chunk without one (pass force to run it anyway)",
                        {"embeddings": held, "because": "flag" if not embed else "no-embedder"},
                    )
        head = self.git.head_sha()
        entries = self.git.tree_entries(head)
        indexed_at = self.now()
        skipped: list[SkippedFile] = []
        rows = bulk_load.BulkRows(self.db.conn)
        self.hook("rebuild.start")
        try:
            self._read_rows(entries, skipped, rows, indexed_at)
            self.hook("rebuild.read")
            space, dim = self.configured_space()
            with _foreign_keys_off(self.db.conn):
                preserved = self.db.transact(
                    "rebuild",
                    lambda conn: self._repopulate(conn, rows, entries, space, dim, indexed_at),
                )
        finally:
            rows.close()
        self.hook("rebuild.committed")
        self._record(head, rebuilt=True, space=space, dim=dim)
        self._dirty_indexed = set()  # every row now describes HEAD exactly
        self.hook("rebuild.recorded")
        written = self.embed_missing() if embed and self.embedder is not None else 0
        # The rebuild's one transaction passed every page through the write-ahead log: give the
        # pages back (compact) or at least empty the log, so neither keeps the database's size.
        if not self.db.compact():
            self.db.checkpoint()
        # and the bulk load's page cache goes back to the allocator, not kept for reads
        self.db.run("PRAGMA shrink_memory", op="rebuild.shrink")
        report = IndexRebuildAnswer(
            head_sha=head,
            files_indexed=rows.files,
            chunks_indexed=rows.chunks,
            edges_indexed=self._count("edges"),
            embeddings_written=written,
            embeddings_preserved=preserved,
            skipped=skipped,
        )
        log.info(
            "index rebuild: %d files, %d skipped, %d vectors kept at %s",
            report.files_indexed,
            len(skipped),
            preserved,
            head,
        )
        return report

    def _read_rows(
        self,
        entries: Sequence[TreeEntry],
        skipped: list[SkippedFile],
        rows: bulk_load.BulkRows,
        indexed_at: str,
    ) -> None:
        """Parse the tree into ``rows``, keeping no record: a whole tree's records, held through
        the bulk load, would spread its heap over allocator arenas that the load's few survivors
        (cached statements above all) then keep resident (docs/design/coldstart.md)."""
        from headd.head.version import collector_paused  # the head's; imported when used

        with collector_paused():  # millions of containers, none garbage
            for read, (entry, record) in enumerate(self._parsed_tree(entries, skipped), 1):
                # a tree path is already normalized (headd.paths.normalize_path)
                rows.add(
                    file_rows(record, entry.path, entry.blob_sha, indexed_at, chunks_of(record))
                )
                if read % READ_HOOK_EVERY == 0:
                    self.hook("rebuild.reading")  # a stopping daemon cuts the read short
            rows.stage()

    def _repopulate(
        self,
        conn: sqlite3.Connection,
        rows: bulk_load.BulkRows,
        entries: Sequence[TreeEntry],
        space: str,
        dim: int,
        at: str,
    ) -> int:
        conn.execute("DROP TABLE IF EXISTS temp.embeddings_stash")
        conn.execute(
            "CREATE TEMP TABLE embeddings_stash AS SELECT * FROM embeddings WHERE model = ?",
            (space,),
        )
        conn.execute(
            "INSERT INTO index_state (id, head_sha, embed_model, embed_dim, rebuilt_at, "
            "updated_at) VALUES (?, NULL, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
            "head_sha = NULL, embed_model = excluded.embed_model, embed_dim = excluded.embed_dim, "
            "updated_at = excluded.updated_at",
            (INDEX_STATE_ID, space, dim, at, at),
        )
        if not bulk_load.load(conn, MEMORY_TABLES, rows, WRITE_BATCH_SIZE, self.hook):
            # a row broke a constraint: replay file by file, which names the file and the cause
            for table in MEMORY_TABLES:
                conn.execute(f"DELETE FROM {table}")
            self.hook("rebuild.truncated")
            pending = 0
            # parsed again, not kept from the read (``_read_rows`` says why)
            with contextlib.closing(self._parsed_tree(entries, [])) as parsed:
                for entry, record in parsed:
                    projection = project_file(record, at, blob_sha=entry.blob_sha, path=entry.path)
                    self._apply(conn, projection.writes, projection.path)
                    pending += len(projection.writes)
                    if pending >= WRITE_BATCH_SIZE:
                        pending = 0
                        self.hook("rebuild.batch")
        conn.execute(
            "INSERT INTO embeddings SELECT * FROM temp.embeddings_stash "
            "WHERE chunk_id IN (SELECT chunk_id FROM chunk_spans)"
        )
        conn.execute("DROP TABLE temp.embeddings_stash")
        self.hook("rebuild.projected")
        row = conn.execute("SELECT count(*) FROM embeddings").fetchone()
        return int(row[0])

    @staticmethod
    def _apply(conn: sqlite3.Connection, writes: Sequence[Write], path: str) -> None:
        try:
            for write in writes:
                conn.execute(write.sql, write.params)
        except sqlite3.IntegrityError as error:
            if _is_dedup_violation(error):
                upsert = next((w for w in writes if w.sql.startswith("INSERT INTO files ")), None)
                content_hash = upsert.params[2] if upsert is not None else None
                holder = conn.execute(
                    "SELECT path FROM files WHERE content_hash = ? AND archived = 0 "
                    "AND memory_type <> 'task' AND path <> ?",
                    (content_hash, path),
                ).fetchone()
                raise DuplicateContent(
                    "duplicate content: another active memory has the same body",
                    {"path": path, "existing": holder[0] if holder else None},
                ) from None
            raise

    def _record(self, head: str, rebuilt: bool, space: str, dim: int) -> None:
        at = self.now()
        if rebuilt:
            sql = (
                "INSERT INTO index_state (id, head_sha, embed_model, embed_dim, rebuilt_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "head_sha = excluded.head_sha, embed_model = excluded.embed_model, "
                "embed_dim = excluded.embed_dim, rebuilt_at = excluded.rebuilt_at, "
                "updated_at = excluded.updated_at"
            )
        else:
            sql = (
                "INSERT INTO index_state (id, head_sha, embed_model, embed_dim, rebuilt_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "head_sha = excluded.head_sha, updated_at = excluded.updated_at"
            )
        self.db.run(sql, (INDEX_STATE_ID, head, space, dim, at, at), op="index_state.record")

    # -- update ---------------------------------------------------------------------------------

    def update(self, embed: bool = False) -> IndexUpdateAnswer:
        self.guard_space()
        head = self.git.head_sha()
        state = self.read_state()
        if state is None:
            rebuilt = self.rebuild(embed=embed, force=True)
            return IndexUpdateAnswer(
                head_sha=rebuilt.head_sha,
                unchanged=False,
                added=rebuilt.files_indexed,
                embeddings_written=rebuilt.embeddings_written,
                skipped=rebuilt.skipped,
            )
        if state["head_sha"] is None:
            raise IndexStale(
                "a rebuild emptied the index and did not finish repopulating it; run a rebuild",
                {"reason": "rebuild-unfinished"},
            )
        watermark = str(state["head_sha"])
        diffs = [] if watermark == head else self.git.changes(watermark, head)
        diffs = [
            d for d in diffs if is_indexable_path(d.path) or is_indexable_path(d.from_path or "")
        ]
        dirty = self._dirty_files()
        report = IndexUpdateAnswer(head_sha=head, unchanged=not diffs and not dirty)
        indexed_at = self.now()

        # The final action per path: committed changes first, the working tree last.
        final: dict[str, FileProjection | None] = {}
        moves: list[tuple[str, str]] = []
        for diff in diffs:
            if diff.status == "D":
                final[diff.path] = None
                report.removed += 1
                continue
            if diff.status == "R" and diff.from_path is not None:
                if not is_indexable_path(diff.path):
                    final[diff.from_path] = None
                    report.removed += 1
                    continue
                if is_indexable_path(diff.from_path):
                    moves.append((diff.from_path, diff.path))
                    final.pop(diff.from_path, None)
                    report.renamed += 1
            sha = self.git.blob_sha_at(head, diff.path)
            if sha is None:
                report.skipped.append(SkippedFile(diff.path, "path absent from tree"))
                continue
            final[diff.path] = self._project(
                diff.path, sha, self.git.blob(sha), indexed_at, report.skipped
            )
            if diff.status == "A" or (
                diff.status == "R" and not is_indexable_path(diff.from_path or "")
            ):
                report.added += 1
            elif diff.status == "M":
                report.modified += 1
        dirty_paths = set(dirty)
        handled = set(final) | dirty_paths | {source for source, _ in moves}
        for path, sha in self._drifted(head, handled).items():
            final[path] = (
                None
                if sha is None
                else self._project(path, sha, self.git.blob(sha), indexed_at, report.skipped)
            )
            report.reconciled += 1
        for path, held in dirty.items():
            if held is None:
                final[path] = None
                continue
            data, sha = held
            final[path] = self._project(path, sha, data, indexed_at, report.skipped)
        report.dirty = len(dirty)
        report.unchanged = report.unchanged and report.reconciled == 0
        self.hook("update.read")

        groups: list[tuple[str, list[Write]]] = []
        for path, projection in final.items():
            if projection is None:
                groups.append((path, _delete_path(path)))
        for source, target in _ordered_moves(moves):
            if target in final and final[target] is None:
                groups.append((source, _delete_path(source)))
            else:
                groups.append((target, _move_path(source, target)))
        candidate_chunks: list[str] = []
        for path, projection in final.items():
            if projection is not None:
                groups.append((path, list(projection.writes)))
                candidate_chunks.extend(c.chunk_id for c in projection.chunks)
        self._apply_batched(groups, rewrites={p for p, proj in final.items() if proj is not None})
        self._dirty_indexed = dirty_paths
        space, dim = self.configured_space()
        self._record(head, rebuilt=False, space=space, dim=dim)
        self.hook("update.recorded")
        if embed and self.embedder is not None:
            report.embeddings_written = self.embed_missing(candidate_chunks)
        log.info(
            "index update: %d added, %d modified, %d removed, %d renamed, %d dirty at %s",
            report.added,
            report.modified,
            report.removed,
            report.renamed,
            report.dirty,
            head,
        )
        return report

    def _dirty_files(self) -> dict[str, tuple[bytes, str] | None]:
        """The work tree's indexable changes against HEAD: path -> (bytes, blob sha), None for
        a deleted file. ``GitSource.dirty`` leaves out a file holding HEAD's own blob, whatever
        git's index says (it lags while a commit's entries are still owed to it), so a burst of
        the daemon's commits is projected once, from the diff, not again from the work tree."""
        out: dict[str, tuple[bytes, str] | None] = {}
        for entry in self.git.dirty():
            if not is_indexable_path(entry.path):
                continue
            out[entry.path] = None if entry.deleted else self.git.working_file(entry.path)
        return out

    def _drifted(self, head: str, handled: set[str]) -> dict[str, str | None]:
        """Clean paths whose row no longer describes HEAD: path -> HEAD blob (None: gone).

        A dirty file is indexed from the work tree; once it is reverted, neither the diff nor
        the status names it again. The first update of a process compares every row's blob with
        the tree (one tree walk); later ones look only at the paths it indexed dirty last time.
        """
        if self._dirty_indexed is None:
            candidates = [
                (str(r["path"]), str(r["blob_sha"]))
                for r in self.db.all("SELECT path, blob_sha FROM files", op="update.reconcile")
            ]
        elif not self._dirty_indexed:
            return {}
        else:
            holes = ", ".join("?" for _ in self._dirty_indexed)
            candidates = [
                (str(r["path"]), str(r["blob_sha"]))
                for r in self.db.all(
                    f"SELECT path, blob_sha FROM files WHERE path IN ({holes})",
                    tuple(self._dirty_indexed),
                    op="update.reconcile",
                )
            ]
        candidates = [(p, b) for p, b in candidates if p not in handled]
        if not candidates:
            return {}
        if len(candidates) <= DRIFT_LOOKUP_LIMIT:
            at_head = {
                p: self.git.blob_sha_at(head, p) if is_indexable_path(p) else None
                for p, _ in candidates
            }
        else:
            tree = {e.path: e.blob_sha for e in self.git.tree_entries(head)}
            at_head = {p: tree.get(p) for p, _ in candidates}
        return {p: at_head[p] for p, blob in candidates if at_head[p] != blob}

    def _apply_batched(
        self, groups: Sequence[tuple[str, list[Write]]], rewrites: set[str] | None = None
    ) -> None:
        """Batches of about WRITE_BATCH_SIZE statements, each one transaction, files whole.

        A body can move between paths within one change set (``a`` takes ``c``'s old body while
        ``c`` gets a new one); applied in path order, ``a`` would meet ``c``'s stale row in the
        dedup index. So a file refused as a duplicate is rolled back alone (a savepoint) and
        retried after the rest; only a round that makes no progress is a real duplicate.
        """
        pending = list(groups)
        while pending:
            deferred: list[tuple[str, list[Write]]] = []
            refusals: list[DuplicateContent] = []
            batch: list[tuple[str, list[Write]]] = []
            size = 0
            for path, writes in pending:
                if batch and size + len(writes) > WRITE_BATCH_SIZE:
                    self._apply_batch(batch, deferred, refusals)
                    batch, size = [], 0
                batch.append((path, writes))
                size += len(writes)
            if batch:
                self._apply_batch(batch, deferred, refusals)
            if deferred and len(deferred) == len(pending):
                if rewrites and all(path in rewrites for path, _ in deferred):
                    self._apply_exchange(deferred)
                    return
                raise refusals[0]
            pending = deferred

    def _apply_exchange(self, groups: Sequence[tuple[str, list[Write]]]) -> None:
        """Files that trade bodies (``b`` takes ``d``'s body while ``d`` takes ``b``'s): each
        refuses alone, since the other's stale row still holds its body. Every row they replace is
        removed first and all are written in one transaction, so the dedup index judges only the
        end state; a real duplicate still fails it, and then nothing of the exchange lands."""

        def body(conn: sqlite3.Connection) -> None:
            for path, _ in groups:
                for write in _delete_path(path):
                    conn.execute(write.sql, write.params)
            for path, writes in groups:
                self._apply(conn, writes, path)

        self.db.transact("update", body)
        self.hook("update.batch")

    def _apply_batch(
        self,
        batch: Sequence[tuple[str, list[Write]]],
        deferred: list[tuple[str, list[Write]]],
        refusals: list[DuplicateContent],
    ) -> None:
        def body(
            conn: sqlite3.Connection,
        ) -> tuple[list[tuple[str, list[Write]]], list[DuplicateContent]]:
            held: list[tuple[str, list[Write]]] = []
            why: list[DuplicateContent] = []
            for path, writes in batch:
                conn.execute("SAVEPOINT headd_file")
                try:
                    self._apply(conn, writes, path)
                except DuplicateContent as refusal:
                    conn.execute("ROLLBACK TO headd_file")
                    held.append((path, writes))
                    why.append(refusal)
                conn.execute("RELEASE headd_file")
            return held, why

        held, why = self.db.transact("update", body)
        deferred.extend(held)
        refusals.extend(why)
        self.hook("update.batch")

    # -- vectors --------------------------------------------------------------------------------

    def _pending(self, space: str, candidates: Sequence[str] | None) -> list[sqlite3.Row]:
        select = (
            "SELECT c.chunk_id AS chunk_id, c.text AS text FROM chunks c "
            "LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id "
            "WHERE (e.chunk_id IS NULL OR e.model <> ?)"
        )
        if candidates is None:
            return self.db.all(f"{select} ORDER BY c.chunk_id", (space,), op="embed.pending")
        ids = list(dict.fromkeys(candidates))
        rows: list[sqlite3.Row] = []
        for at in range(0, len(ids), PENDING_SCAN_ID_BATCH):
            part = ids[at : at + PENDING_SCAN_ID_BATCH]
            holes = ", ".join("?" for _ in part)
            rows += self.db.all(
                f"{select} AND c.chunk_id IN ({holes}) ORDER BY c.chunk_id",
                (space, *part),
                op="embed.pending",
            )
        return rows

    def embed_missing(self, candidate_chunk_ids: Sequence[str] | None = None) -> int:
        """Embed chunks lacking a vector in the configured space, saving each slice before the
        next; a model failure stops the pass and keeps what landed."""
        self.guard_space()
        embedder = self.embedder
        if embedder is None:
            return 0
        if candidate_chunk_ids is not None and len(candidate_chunk_ids) == 0:
            return 0
        space, dim = self.configured_space()
        pending = self._pending(space, candidate_chunk_ids)
        written = 0
        for start in range(0, len(pending), self.persist_every):
            part = pending[start : start + self.persist_every]
            try:
                blobs = embed_documents(embedder, [row["text"] for row in part])
            except ModelUnavailable:
                log.error(
                    "embedding stopped after %d of %d chunks; the written vectors are kept",
                    written,
                    len(pending),
                )
                return written
            at = self.now()
            self.db.write_all(
                [
                    Write(
                        "INSERT INTO embeddings (chunk_id, model, dim, vec, created_at) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(chunk_id) DO UPDATE SET "
                        "model = excluded.model, dim = excluded.dim, vec = excluded.vec, "
                        "created_at = excluded.created_at",
                        (row["chunk_id"], space, dim, blob, at),
                    )
                    for row, blob in zip(part, blobs, strict=True)
                ],
                op="embed.write",
            )
            written += len(part)
            self.hook("embed.slice")
        return written

    def backfill(self, dry_run: bool = False) -> BackfillReport:
        self.guard_space()
        written = 0 if dry_run else self.embed_missing()
        state = self.read_state()
        space, _ = self.configured_space()
        return BackfillReport(
            head_sha=None if state is None else state["head_sha"],
            chunks=self._count("chunk_spans"),
            embeddings=self._count("embeddings"),
            embeddings_written=written,
            embeddings_remaining=len(self._pending(space, None)),
        )


def _ordered_moves(moves: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The renames of one change set in an order that never moves a row onto a path whose own
    row has yet to move away: ``b -> c`` before ``a -> b``. A cycle (``a -> b``, ``b -> a``) is
    broken by parking one row at a path no file can have, then finishing its move last."""
    pending = list(moves)
    ordered: list[tuple[str, str]] = []
    while pending:
        sources = {source for source, _ in pending}
        ready = [move for move in pending if move[1] not in sources]
        if not ready:
            source, target = pending[0]
            parked = f"{source}\x00moving"
            ordered.append((source, parked))
            pending[0] = (parked, target)
            continue
        ordered.extend(ready)
        taken = set(ready)
        pending = [move for move in pending if move not in taken]
    return ordered


def _delete_path(path: str) -> list[Write]:
    return [
        Write("DELETE FROM edges WHERE src_path = ?", (path,)),
        Write("DELETE FROM files WHERE path = ?", (path,)),
    ]


def _move_path(source: str, target: str) -> list[Write]:
    """The row follows the file: an UPDATE of the key that the children's cascade carries."""
    moving = "EXISTS (SELECT 1 FROM files WHERE path = ?2)"
    return [
        Write(f"DELETE FROM edges WHERE src_path = ?1 AND {moving}", (source, target)),
        Write(f"DELETE FROM files WHERE path = ?1 AND {moving}", (source, target)),
        Write("UPDATE files SET path = ?1 WHERE path = ?2", (target, source)),
        # an edge from the file to where it now lives would become a self-loop: drop it
        Write("DELETE FROM edges WHERE src_path = ?1 AND dst_path = ?2", (source, target)),
        Write("UPDATE edges SET src_path = ?1 WHERE src_path = ?2", (target, source)),
    ]
