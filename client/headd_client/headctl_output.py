"""How ``headctl`` shows an answer to a person: aligned columns and words, never a dict dump.

A renderer of a method whose answer the wire types (``headd.wire.answers``,
``headd.store.results``) takes that Struct, the parsed arguments and the output stream; ``typed``
makes it a :data:`Shower` of the plain answer (what ``--json`` prints), decoding it first, so a
renderer reads attributes the type checker knows. ``mapping`` is the fallback for answers without
a renderer of their own: aligned ``key  value`` lines, nested mappings indented, lists of rows as a
table, ``null`` as ``-`` and booleans as ``yes``/``no``. ``--verbose`` adds the full answer under
a summary.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO, TypeVar

import msgspec

from headd_client.json_types import JsonIn, JsonInObject


class Later:
    """A module imported on its first attribute read. The answer types are imported when the
    first answer is shown, not when ``headctl`` starts: they cost its start about a tenth of its
    import time, and a command decodes one answer at most."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> object:
        return getattr(importlib.import_module(self._name), attr)


if TYPE_CHECKING:
    from headd.store import results
    from headd.wire import answers, plane_answers, remote_answers
    from headd_client.store_init import StoreCreated
else:
    answers = Later("headd.wire.answers")
    plane_answers = Later("headd.wire.plane_answers")
    results = Later("headd.store.results")

NONE = "-"

Shower = Callable[[JsonIn, argparse.Namespace, TextIO], None]
"""A renderer of a plain answer: the JSON ``--json`` prints, the parsed arguments, the stream."""

S = TypeVar("S")


def typed(
    answer: Callable[[], type[S]],
    show: Callable[[S, argparse.Namespace, TextIO], None],
    *,
    verbose: bool = False,
) -> Shower:
    """``show`` as a renderer of the plain answer: the answer decoded first into the type
    ``answer()`` names (the one the daemon encoded it from), and with ``verbose`` the full plain
    answer under it."""

    def human(result: JsonIn, args: argparse.Namespace, out: TextIO) -> None:
        show(msgspec.convert(result, answer()), args, out)
        if verbose:
            _verbose(result, args, out)

    return human


def _short(sha: object) -> str:
    return str(sha)[:12] if sha else NONE


def _word(value: object) -> str:
    """One value as a person reads it."""
    if value is None:
        return NONE
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        if not value:
            return NONE
        if all(not isinstance(v, Mapping | list) for v in value):
            return ", ".join(_word(v) for v in value)
    return str(value)


def table(rows: Sequence[Sequence[str]], out: TextIO, indent: str = "") -> None:
    """Rows as left-aligned columns (the last column is not padded)."""
    if not rows:
        return
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        print((indent + "  ".join([*cells, row[-1]])).rstrip(), file=out)


def _objects(value: JsonIn) -> list[JsonInObject] | None:
    """``value`` when it is a non-empty list of objects (rows of a table), else None."""
    if not isinstance(value, list) or not value:
        return None
    rows = [item for item in value if isinstance(item, Mapping)]
    return rows if len(rows) == len(value) else None


def _rows_of(items: Sequence[JsonInObject]) -> list[list[str]]:
    keys: list[str] = []
    for item in items:
        for key in item:
            if key not in keys and not isinstance(item[key], Mapping):
                keys.append(key)
    rows = [[key.upper() for key in keys]]
    rows += [[_word(item.get(key)) for key in keys] for item in items]
    return rows


def _print_mapping(value: JsonInObject, out: TextIO, indent: str = "") -> None:
    width = max((len(key) for key in value), default=0)
    for key, item in value.items():
        if isinstance(item, Mapping):
            if not item:
                print(f"{indent}{key.ljust(width)}  {NONE}", file=out)
                continue
            print(f"{indent}{key}:", file=out)
            _print_mapping(item, out, indent + "  ")
        elif (rows := _objects(item)) is not None:
            print(f"{indent}{key}:", file=out)
            table(_rows_of(rows), out, indent + "  ")
        else:
            print(f"{indent}{key.ljust(width)}  {_word(item)}", file=out)


def mapping(result: JsonIn, args: argparse.Namespace, out: TextIO) -> None:
    """The fallback: any answer, laid out."""
    if isinstance(result, Mapping):
        _print_mapping(result, out)
    elif isinstance(result, list):
        if (rows := _objects(result)) is not None:
            table(_rows_of(rows), out)
        else:
            for item in result:
                print(_word(item), file=out)
    elif result is not None:
        print(_word(result), file=out)


def _verbose(result: JsonIn, args: argparse.Namespace, out: TextIO) -> None:
    if getattr(args, "verbose", False):
        print("", file=out)
        mapping(result, args, out)


# -- status -------------------------------------------------------------------------------


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return NONE
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def embedder_line(result: answers.StatusAnswer) -> str:
    """The embedder in a few words: which one, and whether it answers yet."""
    state = result.embedder_state
    setting = result.embedder or NONE
    model, phase = state.model, state.state
    text = {
        "off": "off: no vectors (lexical and recency only)",
        "unavailable": f"unavailable: {state.reason or 'unknown'}",
        "idle": "not loaded yet (loads on the first fill or query)",
        "loading": "loading the model",
        "converting": "converting the model to int8 (first use, a few seconds)",
        "ready": "ready",
        "failed": f"failed: {state.error or 'unknown'}",
    }.get(phase, phase)
    parts = [setting if model in (None, setting) else f"{setting} ({model})"]
    if text:
        parts.append(text)
    if phase == "ready" and isinstance(state.load_s, float | int):
        parts.append(f"(loaded in {state.load_s:.1f} s)")
    return " ".join(parts[:1]) + (": " + " ".join(parts[1:]) if len(parts) > 1 else "")


def remote_rows(remote: remote_answers.RemoteStatus | None) -> list[list[str]]:
    """``status.remote`` as rows: where the branch stands, and the last round's failure (kind,
    message, and for a refused remote commit which commit and path), so a wedged follower never
    looks healthy."""
    if remote is None:
        return []
    rows = [
        [
            "remote",
            f"{remote.upstream}: ahead {remote.ahead}, behind {remote.behind}, "
            f"last fetch {remote.last_fetch_at or NONE}",
        ]
    ]
    error = remote.last_error
    if error is not None:
        text = f"{error.kind}: {error.message}"
        if error.commit:
            text += f" (commit {_short(error.commit)}, path {error.path!r})"
        rows.append(["remote error", text + f" at {error.at}"])
    if remote.conflicts:
        named = ", ".join(f"{c.id} {c.path}" for c in remote.conflicts)
        count = len(remote.conflicts)
        rows.append(["conflicts", f"{count} open: {named} (headctl sync --resolve ID)"])
    return rows


def _status(result: answers.StatusAnswer, args: argparse.Namespace, out: TextIO) -> None:
    vectors, fill = result.vectors, result.vector_fill
    vector_text = NONE
    if vectors.space:
        vector_text = f"{vectors.space}: {vectors.entries} entries, coverage {vectors.coverage:.0%}"
        if fill is not None and fill.filling:
            vector_text += f" (filling, {fill.fill_remaining} to go)"
    index_text = str(result.index_path or NONE)
    if result.index is not None and result.index.indexed_sha:
        index_text += f" at {_short(result.index.indexed_sha)}"
    advanced = result.last_advance_ms
    rows = [
        ["store", result.store],
        ["ref", f"{result.ref} at {_short(result.sha)}"],
        ["memories", f"{result.records} ({result.skipped} files skipped)"],
        [
            "loaded",
            f"from {result.load_source} in {result.load_ms} ms; {result.advances} advances"
            + (f", last {advanced} ms" if advanced is not None else ""),
        ],
        ["embedder", embedder_line(result)],
        ["vectors", vector_text],
        ["sessions", f"{result.sessions} open"],
        ["index", index_text],
        ["socket", str(result.socket or "inherited from systemd")],
        [
            "daemon",
            f"headd {result.version}, pid {result.pid}, up {_duration(result.uptime_s)}",
        ],
    ]
    if fill is not None and fill.last_error:
        rows.append(["fill error", f"{fill.last_error_code}: {fill.last_error}"])
    rows += remote_rows(result.remote)
    table(rows, out)


status = typed(lambda: answers.StatusAnswer, _status, verbose=True)


# -- search and recall --------------------------------------------------------------------


class _ShownHit(msgspec.Struct):
    path: str | None = None
    score: float = 0.0
    title: str | None = None
    claim: str | None = None
    arms: list[str] | None = None


class _ShownSearch(msgspec.Struct):
    """What the summary shows of a search answer: the part the head's answer
    (``SearchAnswer``) and the index plane's (``plane: "index"``) share."""

    sha: str | None = None
    hits: list[_ShownHit] = []
    arms: list[str] | None = None
    degraded: bool = False
    took_ms: int | float | None = None


def _search(result: _ShownSearch, args: argparse.Namespace, out: TextIO) -> None:
    hits = result.hits
    rows = [
        [f"{rank:>2}.", f"{hit.score:.4f}", str(hit.path), "+".join(hit.arms or []) or NONE]
        for rank, hit in enumerate(hits, 1)
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else []
    pad = " " * (widths[0] + 2) if widths else ""
    for row, hit in zip(rows, hits, strict=True):
        print(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3],
            file=out,
        )
        if hit.title:
            print(f"{pad}{hit.title}", file=out)
        if hit.claim:
            print(f"{pad}  {hit.claim}", file=out)
    arms = "+".join(result.arms or [])
    degraded = "; no vector arm (degraded)" if result.degraded else ""
    took = result.took_ms
    print(
        f"{len(hits)} hits at {_short(result.sha)} ({arms or NONE}"
        + (f", {took} ms" if took is not None else "")
        + f"){degraded}",
        file=out,
    )


search = typed(lambda: _ShownSearch, _search, verbose=True)


def _recall(result: plane_answers.RecallAnswer, args: argparse.Namespace, out: TextIO) -> None:
    """Each entry once: the quoted ones with their text, then the index lines."""
    for entry in result.entries:
        print(f"{entry.path}  {entry.title}".rstrip(), file=out)
        if entry.claim:
            print(f"  {entry.claim}", file=out)
        body = entry.body.strip()
        if body == entry.claim.strip():
            continue  # the quote is the claim itself: shown once
        for line in body.splitlines():
            print(f"    {line}", file=out)
    lines = result.index_lines
    if lines:
        print("also relevant (not quoted):", file=out)
        table([[x.path, x.title] for x in lines], out, "  ")
    truncated = "; truncated to the budget" if result.truncated else ""
    print(
        f"{len(result.entries)} quoted, {len(lines)} listed, {result.spent} chars "
        f"at {_short(result.sha)}{truncated}",
        file=out,
    )


recall = typed(lambda: plane_answers.RecallAnswer, _recall)


# -- reads --------------------------------------------------------------------------------


def _read(result: answers.ReadAnswer, args: argparse.Namespace, out: TextIO) -> None:
    record = result.record
    if record is None:
        return
    links = [f"{x.rel} {x.href}" for x in record.links]
    rows = [
        ["path", record.path],
        ["title", record.title or NONE],
        ["claim", record.claim or NONE],
        [
            "type",
            f"{record.memory_type}, {record.status}"
            + (f", task {record.task_status}" if record.task_status else ""),
        ],
        ["tags", _word(list(record.tags))],
        ["entities", _word(list(record.entities))],
        ["links", "; ".join(links) or NONE],
        ["updated", _word(record.updated_at)],
        ["hash", _word(record.content_hash)],
        ["at", _short(result.sha)],
    ]
    table(rows, out)
    body = record.body_text.strip()
    if body:
        print("", file=out)
        for line in body.splitlines():
            print(f"  {line}", file=out)


read = typed(lambda: answers.ReadAnswer, _read, verbose=True)


def _resolve(result: answers.ResolveAnswer, args: argparse.Namespace, out: TextIO) -> None:
    if len(result.chain) > 1:
        print(" -> ".join(result.chain), file=out)
    else:
        print(f"{result.path} (already the live memory)", file=out)


resolve = typed(lambda: answers.ResolveAnswer, _resolve)


def _paths(result: answers.PathsAnswer, args: argparse.Namespace, out: TextIO) -> None:
    for path in result.paths:
        print(path, file=out)
    print(f"{len(result.paths)} paths at {_short(result.sha)}", file=out)


paths = typed(lambda: answers.PathsAnswer, _paths)


def _skipped(result: answers.SkippedAnswer, args: argparse.Namespace, out: TextIO) -> None:
    table([[f.path, f.reason] for f in result.files], out)
    print(f"{len(result.files)} files skipped at {_short(result.sha)}", file=out)


skipped = typed(lambda: answers.SkippedAnswer, _skipped)


def _advance(result: answers.AdvanceAnswer, args: argparse.Namespace, out: TextIO) -> None:
    print(
        f"at {_short(result.sha)} (from {_short(result.from_)}, "
        f"{_word(result.changed)} changed, {result.took_ms} ms)",
        file=out,
    )


advance = typed(lambda: answers.AdvanceAnswer, _advance)


def gate(report: JsonIn, args: argparse.Namespace, out: TextIO) -> None:
    """The gate's report as JSON: the daemon's and the in-process one alike."""
    shown = dict(report) if isinstance(report, Mapping) else {}
    listed = shown.get("inversions")
    inverted = list(listed) if isinstance(listed, list) else []
    verdict = "passed" if shown.get("passed") else "refused"
    print(
        f"head gate {verdict}: {shown.get('probes')} probes, MRR {shown.get('mrr_before')} -> "
        f"{shown.get('mrr')} (floor {shown.get('floor')}), inversions "
        f"{shown.get('inversions_before')} -> {len(inverted)}",
        file=out,
    )
    # The verbose table counts the inversions as the summary does and lists them after.
    shown["inversions"] = len(inverted)
    if inverted:
        shown["inverted"] = inverted
    _verbose(shown, args, out)


def _vectors_fill(result: answers.VectorsFillAnswer, args: argparse.Namespace, out: TextIO) -> None:
    print(
        f"{result.space or NONE}: {result.embedded} embedded now, "
        f"{result.reused} reused, {result.remaining} remaining, coverage {result.coverage:.0%}",
        file=out,
    )


vectors_fill = typed(lambda: answers.VectorsFillAnswer, _vectors_fill)


def _traces_search(
    result: plane_answers.TracesSearchAnswer, args: argparse.Namespace, out: TextIO
) -> None:
    hits = result.hits
    rows = [["SESSION", "STARTED", "PROMPTS", "TITLE"]]
    for hit in hits:
        title = hit.ai_title or hit.first_prompt or ""
        rows.append(
            [
                hit.session_id,
                hit.started_at or NONE,
                str(hit.prompt_count),
                " ".join(title.split())[:80],
            ]
        )
    if hits:
        table(rows, out)
    print(f"{len(hits)} sessions", file=out)


traces_search = typed(lambda: plane_answers.TracesSearchAnswer, _traces_search)


# -- sessions -----------------------------------------------------------------------------


def _session_open(result: results.OpenResult, args: argparse.Namespace, out: TextIO) -> None:
    print(f"{result.session}  (base {_short(result.base)})", file=out)


def _session_apply(result: results.ApplyResult, args: argparse.Namespace, out: TextIO) -> None:
    if result.violations:
        print("nothing appended:", file=out)
        for v in result.violations:
            where = v.path or (f"op {v.op}" if v.op is not None else "")
            reasons = "; ".join(v.reasons) or v.existing or ""
            print(f"  {v.kind}  {where}  {reasons}".rstrip(), file=out)
        return
    deduped = result.deduped
    print(
        f"session {result.session} holds {result.ops} ops"
        + (f" ({len(deduped)} already in the store)" if deduped else ""),
        file=out,
    )


def _session_commit(result: results.CommitResult, args: argparse.Namespace, out: TextIO) -> None:
    outcome = result.outcome
    if outcome == "committed":
        landed = result.paths or ()
        if not landed:
            print(
                f"nothing to commit: the session changes nothing; no commit made "
                f"(the branch stays at {_short(result.sha)})",
                file=out,
            )
            return
        print(f"committed {_short(result.sha)}: {len(landed)} paths", file=out)
        for path in landed:
            print(f"  {path}", file=out)
        for c in result.contradictions or ():
            print(f"  contradicts: {c.path} vs {c.against}", file=out)
        return
    print(f"not committed: {outcome}", file=out)
    for path in result.overlapping or ():
        print(f"  overlapping: {path}", file=out)
    for v in result.violations or ():
        reasons = "; ".join(v.reasons)
        print(f"  {v.kind}  {v.path or ''}  {reasons}".rstrip(), file=out)


def _session_rebase(result: results.RebaseResult, args: argparse.Namespace, out: TextIO) -> None:
    violations = result.violations
    print(
        f"session {result.session} now on {_short(result.base)} with {result.ops} ops"
        + (f"; a commit would be refused ({len(violations)} violations)" if violations else ""),
        file=out,
    )


def _session_close(result: results.CloseResult, args: argparse.Namespace, out: TextIO) -> None:
    dropped = result.dropped_ops
    print(
        f"session {result.session} closed"
        + (f", {dropped} uncommitted ops dropped" if dropped else ""),
        file=out,
    )


def session_state(info: results.SessionInfo) -> str:
    """Where a session stands, in words: uncommitted ops, a commit in flight, or committed."""
    settled = info.last_settlement
    if info.pending:
        return f"committing {_short(info.pending)} (in flight)"
    if info.ops:
        return f"open, {info.ops} uncommitted ops"
    if settled is not None:
        landed = "committed" if settled.landed else "commit not landed"
        return f"{landed} {_short(settled.sha)}, nothing pending"
    return "open, empty"


def _session_list(result: results.ListResult, args: argparse.Namespace, out: TextIO) -> None:
    if not result.sessions:
        print("no open sessions", file=out)
        return
    rows = [["SESSION", "BASE", "STATE", "UPDATED"]]
    for info in result.sessions:
        rows.append([info.session, _short(info.base), session_state(info), info.updated_at or NONE])
    table(rows, out)


session_open = typed(lambda: results.OpenResult, _session_open)
session_apply = typed(lambda: results.ApplyResult, _session_apply)
session_commit = typed(lambda: results.CommitResult, _session_commit)
session_rebase = typed(lambda: results.RebaseResult, _session_rebase)
session_close = typed(lambda: results.CloseResult, _session_close)
session_list = typed(lambda: results.ListResult, _session_list)


def init(result: StoreCreated, args: argparse.Namespace, out: TextIO) -> None:
    print(f"created a store at {result['store']} ({_short(result['sha'])})", file=out)
    print(f"  serve it:  headd --store {result['store']}", file=out)
