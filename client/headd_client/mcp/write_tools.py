"""The write tools: ``memory_write``, ``memory_write_batch``, ``memory_correct``, ``memory_link``
and ``memory_archive``, each one daemon session and one commit (``writes.py``).

A prose write is the daemon's ``write`` op (rendered and placed there); markup, a task and a
correction are rendered here with the writer's own functions (``headd.memfile.render``) and sent
as ``put``. ``headctl``'s ``write``, ``apply``, ``correct``, ``link``, ``archive`` and ``task``
commands call these same methods, so the two doors refuse and place alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from headd.ops import Archive, LinkOp, Put, Write
from headd.wire.answers import WireRecord
from headd_client import calls
from headd_client.json_types import JsonInObject, JsonObject, JsonValue
from headd_client.mcp.arguments import (
    ArchiveArgs,
    Attributed,
    BatchArgs,
    CorrectArgs,
    LinkArgs,
    WriteArgs,
    parse,
)
from headd_client.mcp.failures import ToolFailure, from_exception, path_not_found
from headd_client.mcp.shapes import body_or_markup, strip_path
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.writes import Provenance, WriteSession, violation_failure

if TYPE_CHECKING:
    from headd.store.results import Contradiction


class WriteTools:
    """The write handlers, and the reads they need, over one daemon link."""

    link: DaemonLink
    clock: Callable[[], datetime]

    # -- helpers ------------------------------------------------------------------------

    def _read(self, path: str, at: str | None = None) -> tuple[WireRecord | None, str]:
        answer = self.link.run(calls.read(strip_path(path), at=at))
        return answer.record, str(answer.sha)

    def _live(self, path: str) -> WireRecord:
        record, _ = self._read(path)
        if record is None or record.archived:
            raise path_not_found(strip_path(path))
        return record

    def _now(self) -> datetime:
        return self.clock()

    # -- writes ----------------------------------------------------------------------------

    def _write_op(self, op: WriteArgs, taken: Callable[[str], bool]) -> Write | Put:
        """The session op for one memhtml write: the daemon's ``write`` for prose, a ``put``
        rendered here for ``article_html`` (the daemon's write takes prose only)."""
        body, markup = body_or_markup(op.claim, op.body, op.article_html)
        path = op.path
        if path is not None:
            from headd.memfile.placement import normalize_path, unusable_reason

            reason = unusable_reason(path)
            if reason is not None and op.strict_path:
                raise ToolFailure("ERR_INVALID_MEMORY", f"invalid memory: {reason}")
            if reason is None and taken(normalize_path(path)):
                raise ToolFailure(
                    "ERR_WRITE_CONFLICT",
                    f"write conflict on {normalize_path(path)}: the path is occupied",
                )
            if reason is not None:
                path = None
        if markup is None and op.task_status is None:
            return Write(
                title=op.title,
                type=op.memory_type,
                claim=op.claim or "",
                body=body,
                tags=op.tags,
                entities=op.entities,
                workspace=op.workspace,
                path=path,
                importance=op.importance,
                confidence=op.confidence,
            )
        html, placed = self._render(op, markup, path, taken, body=body)
        return Put(path=placed, html=html)

    def _render(
        self,
        op: WriteArgs,
        markup: str | None,
        path: str | None,
        taken: Callable[[str], bool],
        *,
        body: str | list[str] | None = None,
    ) -> tuple[str, str]:
        from headd.errors import HeaddError
        from headd.memfile.placement import choose_path
        from headd.memfile.render import check_write, fields_from_write, render_memory

        now = self._now()
        try:
            fields = fields_from_write(
                title=op.title,
                memory_type=op.memory_type,
                now=now,
                claim=op.claim or "",
                body=body,
                article_html=markup,
                tags=op.tags or (),
                entities=op.entities or (),
                workspace=op.workspace,
                importance=op.importance,
                confidence=op.confidence,
                task_status=op.task_status,
                due=op.due,
            )
            check_write(fields, path or "")
            placed = choose_path(
                title=op.title,
                memory_type=op.memory_type,
                taken=_Taken(taken),
                now=now,
                entities=op.entities or (),
                tags=op.tags or (),
                workspace=op.workspace,
                path=path,
            )
            html = render_memory(fields)
        except HeaddError as exc:
            raise from_exception(exc) from None
        return html, placed

    def _taken_in(self, session: WriteSession) -> Callable[[str], bool]:
        def taken(path: str) -> bool:
            return session.read(path) is not None

        return taken

    @staticmethod
    def _provenance(args: Attributed) -> Provenance | None:
        if args.session_id is None:
            return None
        return Provenance(args.session_id, args.prompt_id, args.turn_uuid)

    def memory_write(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, WriteArgs)
        with WriteSession(self.link) as session:
            op = self._write_op(args, self._taken_in(session))
            applied = session.apply([op])
            if applied.violations:
                v = applied.violations[0]
                if v.kind == "duplicate" and v.existing:
                    return _deduped(v.existing)
                raise violation_failure(v)
            for d in applied.deduped:
                return _deduped(d.existing)
            path = str((applied.paths or (op.path,))[0])
            landed = session.commit(f"memhtml(write): {args.title}", self._provenance(args))
        if 0 in landed.deduped:
            return _deduped(landed.deduped[0])
        return {
            "path": path,
            "created": True,
            "deduped": False,
            "existing_path": None,
            "commit_sha": landed.sha,
        }

    def memory_write_batch(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, BatchArgs)
        consolidate = args.consolidate
        if consolidate is not None and consolidate != "last-wins":
            raise ToolFailure(
                "ERR_UNSUPPORTED",
                f"consolidate {consolidate!r} is not supported (only last-wins); nothing was written",
            )
        ops = args.ops
        near = self._near_duplicates(ops) if args.detect_near_duplicates else {}
        plan = _last_wins(ops) if consolidate else _Plan(list(range(len(ops))), {}, {})
        occupants = self._frame_occupants(plan.slot_of)
        best_effort = bool(args.continue_on_error)
        results = [BatchRow(index=i) for i in range(len(ops))]
        written: list[int] = []
        with WriteSession(self.link) as session:
            taken = self._taken_in(session)
            for index in plan.order:
                op = plan.content.get(index, ops[index])
                try:
                    stored = occupants.get(index)
                    if stored is not None:
                        self._supersede(session, op, stored, results[index])
                        if not results[index].deduped:
                            written.append(index)
                        continue
                    wire = self._write_op(op, taken)
                    applied = session.apply([wire])
                    if applied.violations:
                        v = applied.violations[0]
                        if v.kind == "duplicate" and v.existing:
                            results[index].deduped_to(v.existing)
                            continue
                        raise violation_failure(v)
                    if applied.deduped:
                        results[index].deduped_to(applied.deduped[0].existing)
                        continue
                    results[index].path = str((applied.paths or (None,))[0])
                    written.append(index)
                except ToolFailure as failure:
                    row = results[index]
                    row.ok, row.code, row.error = False, failure.code, failure.message
                    if not best_effort:
                        at = plan.order.index(index)
                        for later in plan.order[at + 1 :]:
                            results[later].skip()
                        for earlier in written:
                            results[earlier].skip()
                            results[earlier].superseded_path = None
                        return _batch_answer(_consolidated(results, plan, near), None, near)
            sha = None
            if written or any(r.superseded_path for r in results):
                first = written[0] if written else plan.order[0]
                more = f" (+{len(written) - 1})" if len(written) > 1 else ""
                title = plan.content.get(first, ops[first]).title
                landed = session.commit(f"memhtml(apply): {title}{more}", self._provenance(args))
                sha = landed.sha
                if args.detect_conflicts:
                    self._mark_conflicts(results, landed.contradictions)
                    self._mark_displaced(results, occupants)
        return _batch_answer(_consolidated(results, plan, near), sha, near)

    def _near_duplicates(self, ops: list[WriteArgs]) -> dict[int, list[NearRow]] | None:
        """Per op index its near duplicates (the daemon's ``near_duplicates``, one embedding
        call for the batch over each op's claim and body); None when unchecked."""
        keyed = [(i, _claim_of(op)) for i, op in enumerate(ops) if op.article_html is None]
        keyed = [(i, claim) for i, claim in keyed if claim.strip()]
        texts = [_text_of(ops[i], claim) for i, claim in keyed]
        if not texts:
            return {}
        titles = [ops[i].title for i, _ in keyed]
        answer = self.link.run(calls.near_duplicates(texts, titles=titles))
        if answer.degraded:
            return None
        found: dict[int, list[NearRow]] = {}
        for (index, _), matches in zip(keyed, answer.matches, strict=True):
            if matches:
                found[index] = [
                    NearRow(
                        path=m.path,
                        batch_index=None if m.batch_index is None else keyed[m.batch_index][0],
                        similarity=m.similarity,
                        claim=m.claim if m.path is not None else _batch_claim(keyed, m.batch_index),
                    )
                    for m in matches
                ]
        return found

    def _mark_displaced(self, results: list[BatchRow], occupants: Mapping[int, str]) -> None:
        """A slot that superseded a stored memory conflicted with it (memhtml reports the store
        match; the commit's contradictions no longer see it, as it is archived)."""
        for index, stored in occupants.items():
            superseded = results[index].superseded_path
            if superseded:
                record, _ = self._read(superseded)
                claim = "" if record is None else record.claim
                results[index].conflict = ConflictRow(path=stored, batch_index=None, claim=claim)

    def _frame_occupants(self, slot_of: Mapping[str, int]) -> dict[int, str]:
        """Slot index → the stored active memory (not a task) holding that slot's frame key,
        the first by path as memhtml takes it."""
        occupants: dict[int, str] = {}
        for key, slot in slot_of.items():
            for path in self.link.run(calls.by_frame_key(key)).paths:
                record, _ = self._read(path)
                if record is not None and record.memory_type != "task":
                    occupants[slot] = path
                    break
        return occupants

    def _supersede(self, session: WriteSession, op: WriteArgs, stored: str, row: BatchRow) -> None:
        """Write a surviving slot's value over the stored memory holding its frame key: the
        new file linked ``supersedes`` to the archived one, both windows stamped (``correct``'s
        chain), in the batch's one session; a value already stored elsewhere only links."""
        from headd.memfile.archive import (
            archive_path,
            supersede_moment,
            supersede_stamps,
            superseding_stamps,
        )

        taken = self._taken_in(session)
        body, markup = body_or_markup(op.claim, op.body, op.article_html)
        path = op.path
        if path is not None:
            wire = self._write_op(op, taken)  # the path checks; its own path when usable
            path = wire.path
        now = self._now()
        moved_to = archive_path(stored, now.year, taken)
        new_html, new_path = self._render(op, markup, path, taken, body=body)
        moment = supersede_moment(new_html, _event_at(new_path, new_html), now)
        new_html = superseding_stamps(new_html, old_archive_path=moved_to, moment=moment)
        applied = session.apply([Put(path=new_path, html=new_html)])
        winner = new_path
        if applied.violations:
            v = applied.violations[0]
            if v.kind != "duplicate" or not v.existing:
                raise violation_failure(v)
            winner = v.existing
            row.deduped_to(winner)
            if winner == stored:
                return
            link = LinkOp(path=winner, rel="supersedes", href="/" + moved_to)
            applied = session.apply([link])
            if applied.violations:
                raise violation_failure(applied.violations[0])
        else:
            row.path = winner
        old_html = self._blob(stored)
        old = supersede_stamps(old_html, new_path=winner, moment=moment, now=now)
        applied = session.apply([Archive(path=stored, to=moved_to, html=old)])
        if applied.violations:
            raise violation_failure(applied.violations[0])
        row.superseded_path = moved_to

    def _mark_conflicts(
        self, results: list[BatchRow], contradictions: Iterable[Contradiction]
    ) -> None:
        by_path = {c.path: c.against for c in contradictions}
        for row in results:
            against = by_path.get(str(row.path))
            if against:
                record, _ = self._read(against)
                claim = "" if record is None else record.claim
                row.conflict = ConflictRow(path=strip_path(against), batch_index=None, claim=claim)

    def memory_correct(self, arguments: JsonInObject) -> JsonObject:
        from headd.memfile.archive import (
            archive_path,
            supersede_moment,
            supersede_stamps,
            superseding_stamps,
        )

        args = parse(arguments, CorrectArgs)
        target = strip_path(args.target_path)
        record = self._live(target)
        old_html = self._blob(record.path)
        now = self._now()
        moved_to = archive_path(target, now.year, lambda p: self._read(p)[0] is not None)
        body, markup = body_or_markup(args.claim, args.body, args.article_html)
        with WriteSession(self.link) as session:
            seen = self._taken_in(session)

            def taken(path: str) -> bool:
                return path != target and seen(path)

            spec = WriteArgs(
                title=args.title,
                memory_type=args.memory_type or record.memory_type,
                claim=args.claim,
            )
            new_html, new_path = self._render(spec, markup, None, taken, body=body)
            moment = supersede_moment(new_html, _event_at(new_path, new_html), now)
            new_html = superseding_stamps(new_html, old_archive_path=moved_to, moment=moment)
            old_stamped = supersede_stamps(old_html, new_path=new_path, moment=moment, now=now)
            applied = session.apply(
                [
                    Archive(path=target, to=moved_to, html=old_stamped),
                    Put(path=new_path, html=new_html),
                ]
            )
            if applied.violations:
                raise violation_failure(applied.violations[0])
            reason = " ".join((args.reason or "").split())
            landed = session.commit(
                f"memhtml(correct): {args.title}\n\n{reason}".rstrip(), self._provenance(args)
            )
        return {
            "path": new_path,
            "superseded": [moved_to],
            "archived": [moved_to],
            "commit_sha": landed.sha,
        }

    def _blob(self, path: str) -> str:
        html = self.link.run(calls.source(path)).html
        if html is None:
            raise path_not_found(path)
        return html

    def memory_link(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, LinkArgs)
        src = strip_path(args.src_path)
        dst = strip_path(args.dst_path)
        rel = args.rel
        record = self._live(src)
        other, _ = self._read(dst)
        if other is None:
            raise path_not_found(dst)
        href = "/" + dst
        sha = None
        if not any(lk.rel == rel and lk.href == href for lk in record.links):
            with WriteSession(self.link) as session:
                applied = session.apply([LinkOp(path=src, rel=rel, href=href)])
                if applied.violations:
                    raise violation_failure(applied.violations[0])
                sha = session.commit(f"memhtml(link): {rel} {src} -> {dst}").sha
        return {"ok": True, "rel": rel, "src_path": src, "dst_path": dst, "commit_sha": sha}

    def memory_archive(self, arguments: JsonInObject) -> JsonObject:
        args = parse(arguments, ArchiveArgs)
        path = strip_path(args.path)
        self._live(path)
        with WriteSession(self.link) as session:
            applied = session.apply([Archive(path=path)])
            if applied.violations:
                raise violation_failure(applied.violations[0])
            moved = (applied.paths or ("",))[-1]
            reason = " ".join((args.reason or "").split())
            landed = session.commit(f"memhtml(archive): {path} — {reason}")
        return {"path": path, "archive_path": moved, "commit_sha": landed.sha}


@dataclass
class _Plan:
    """A batch's ops in slot order: ``order`` the indices that write, ``content`` a slot's
    surviving op when a later one restated its frame, ``losers`` a restatement's slot."""

    order: list[int]
    content: dict[int, WriteArgs]
    losers: dict[int, int]
    slot_of: dict[str, int] = field(default_factory=dict)


def _last_wins(ops: list[WriteArgs]) -> _Plan:
    """memhtml's last-wins fold: the first op with a frame key holds the slot, each later op
    with that key replaces its content and reports ``consolidated_into`` the slot; an op whose
    claim has no frame shape is never folded."""
    from headd.memfile.hashes import frame_key_of

    plan = _Plan([], {}, {})
    for index, op in enumerate(ops):
        key = frame_key_of(_claim_of(op))
        slot = None if key is None else plan.slot_of.get(key)
        if slot is None:
            if key is not None:
                plan.slot_of[key] = index
            plan.order.append(index)
            continue
        plan.content[slot] = op
        plan.losers[index] = slot
    return plan


def _claim_of(op: WriteArgs) -> str:
    """The claim an op states: its ``claim``, else its prose's first sentence (memhtml's
    derivation); markup's claim is not read before it renders, so it states none here."""
    from headd.memfile.render import claim_from_prose

    claim, body = op.claim, op.body
    if isinstance(claim, str):
        return claim
    if isinstance(body, str) and body.strip() and op.article_html is None:
        return claim_from_prose(body)
    return ""


def _batch_claim(keyed: list[tuple[int, str]], batch_index: int | None) -> str | None:
    """The claim of the earlier text a near duplicate names by its place in the call."""
    return None if batch_index is None else keyed[batch_index][1]


def _text_of(op: WriteArgs, claim: str) -> str:
    """What the near-duplicate check embeds: the claim and the body after it, as memhtml."""
    body = op.body
    if op.claim is None and isinstance(body, str):
        from headd.memfile.render import split_prose

        return "\n".join([claim, *split_prose(body)[1]])
    rest = [body] if isinstance(body, str) else list(body or ())
    return "\n".join([claim, *rest])


def _consolidated(
    results: list[BatchRow], plan: _Plan, near: Mapping[int, list[NearRow]] | None = None
) -> list[BatchRow]:
    """Each restatement points at its slot when the slot's write landed, else it is skipped
    with it (nothing of it reached the store); each op gains its near duplicates."""
    for index, found in (near or {}).items():
        results[index].near_duplicates = found
    for index, slot in plan.losers.items():
        winner = results[slot]
        if winner.ok and not winner.skipped:
            results[index].consolidated_into = slot
        else:
            results[index].skip()
    return results


class _Taken(AbstractSet[str]):
    """``choose_path``'s set of occupied paths, asked of the session's view one path at a time
    (placement only ever asks ``in``)."""

    def __init__(self, taken: Callable[[str], bool]) -> None:
        self._taken = taken

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._taken(path)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _event_at(path: str, html: str) -> str | None:
    from headd.memfile.parse import parse_memory

    try:
        return parse_memory(path, html).event_at
    except Exception:  # an unparsable file is refused by the daemon's own check
        return None


def _deduped(existing: str) -> JsonObject:
    return {
        "path": existing,
        "created": False,
        "deduped": True,
        "existing_path": existing,
        "commit_sha": None,
    }


class NearRow(msgspec.Struct):
    """A near duplicate of a batch op: a stored memory (``path``, its claim) or an earlier op
    of the batch (``batch_index``, the claim it states)."""

    path: str | None
    batch_index: int | None
    similarity: float
    claim: str | None


class ConflictRow(msgspec.Struct):
    """The stored memory a batch op contradicts or displaced, and its claim."""

    path: str
    batch_index: int | None
    claim: str


class BatchRow(msgspec.Struct, kw_only=True):
    """One op's row of ``memory_write_batch``'s answer (memhtml's fields, in its order),
    filled in as the batch runs."""

    index: int
    ok: bool = True
    path: str | None = None
    deduped: bool = False
    existing_path: str | None = None
    code: str | None = None
    error: str | None = None
    skipped: bool = False
    conflict: ConflictRow | None = None
    near_duplicates: list[NearRow] | None = None
    consolidated_into: int | None = None
    superseded_path: str | None = None

    def deduped_to(self, existing: str) -> None:
        self.path = self.existing_path = existing
        self.deduped = True

    def skip(self) -> None:
        self.ok, self.skipped = False, True


def _batch_answer(
    results: list[BatchRow], sha: str | None, near: Mapping[int, list[NearRow]] | None = None
) -> JsonObject:
    folded = [r for r in results if r.consolidated_into is None]
    summary: JsonObject = {
        "total": len(results),
        "written": sum(1 for r in folded if r.ok and not r.deduped and not r.skipped),
        "deduped": sum(1 for r in folded if r.ok and r.deduped and not r.skipped),
        "failed": sum(1 for r in folded if not r.ok and not r.skipped),
        "skipped": sum(1 for r in folded if r.skipped),
        "consolidated": len(results) - len(folded),
    }
    rows: list[JsonValue] = msgspec.to_builtins(results)
    return {
        "results": rows,
        "summary": summary,
        "commit_sha": sha,
        # asked for and unchecked: no embedder answered (memhtml's "degraded")
        "near_duplicates_degraded": near is None,
    }
