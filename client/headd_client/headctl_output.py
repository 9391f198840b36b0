"""How ``headctl`` shows an answer to a person: aligned columns and words, never a dict dump.

Each renderer takes the plain answer (what ``--json`` would print), the parsed arguments and the
output stream. ``mapping`` is the fallback for answers without a renderer of their own: aligned
``key  value`` lines, nested mappings indented, lists of rows as a table, ``null`` as ``-`` and
booleans as ``yes``/``no``. ``--verbose`` adds the full answer under a summary.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

NONE = "-"


def _short(sha: Any) -> str:
    return str(sha)[:12] if sha else NONE


def _word(value: Any) -> str:
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


def _rows_of(items: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    keys: list[str] = []
    for item in items:
        for key in item:
            if key not in keys and not isinstance(item[key], Mapping):
                keys.append(key)
    rows = [[key.upper() for key in keys]]
    rows += [[_word(item.get(key)) for key in keys] for item in items]
    return rows


def _print_mapping(value: Mapping[str, Any], out: TextIO, indent: str = "") -> None:
    width = max((len(key) for key in value), default=0)
    for key, item in value.items():
        if isinstance(item, Mapping):
            if not item:
                print(f"{indent}{key.ljust(width)}  {NONE}", file=out)
                continue
            print(f"{indent}{key}:", file=out)
            _print_mapping(item, out, indent + "  ")
        elif isinstance(item, list) and item and all(isinstance(x, Mapping) for x in item):
            print(f"{indent}{key}:", file=out)
            table(_rows_of(item), out, indent + "  ")
        else:
            print(f"{indent}{key.ljust(width)}  {_word(item)}", file=out)


def mapping(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    """The fallback: any answer, laid out."""
    if isinstance(result, Mapping):
        _print_mapping(result, out)
    elif isinstance(result, list):
        if result and all(isinstance(x, Mapping) for x in result):
            table(_rows_of(result), out)
        else:
            for item in result:
                print(_word(item), file=out)
    elif result is not None:
        print(_word(result), file=out)


def _verbose(result: Any, args: argparse.Namespace, out: TextIO) -> None:
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


def embedder_line(result: Mapping[str, Any]) -> str:
    """The embedder in a few words: which one, and whether it answers yet."""
    state = result.get("embedder_state") or {}
    setting = result.get("embedder") or NONE
    model = state.get("model")
    phase = state.get("state")
    text = {
        "off": "off: no vectors (lexical and recency only)",
        "unavailable": f"unavailable: {state.get('reason') or 'unknown'}",
        "idle": "not loaded yet (loads on the first fill or query)",
        "loading": "loading the model",
        "converting": "converting the model to int8 (first use, a few seconds)",
        "ready": "ready",
        "failed": f"failed: {state.get('error') or 'unknown'}",
    }.get(str(phase), str(phase) if phase else "")
    parts = [setting if model in (None, setting) else f"{setting} ({model})"]
    if text:
        parts.append(text)
    if phase == "ready" and state.get("load_s") is not None:
        parts.append(f"(loaded in {state['load_s']:.1f} s)")
    return " ".join(parts[:1]) + (": " + " ".join(parts[1:]) if len(parts) > 1 else "")


def remote_rows(remote: Any) -> list[list[str]]:
    """``status.remote`` as rows: where the branch stands, and the last round's failure (kind,
    message, and for a refused remote commit which commit and path), so a wedged follower never
    looks healthy."""
    if not isinstance(remote, Mapping):
        return []
    rows = [
        [
            "remote",
            f"{remote.get('upstream', NONE)}: ahead {remote.get('ahead', 0)}, "
            f"behind {remote.get('behind', 0)}, last fetch {remote.get('last_fetch_at') or NONE}",
        ]
    ]
    error = remote.get("last_error")
    if isinstance(error, Mapping):
        text = f"{error.get('kind')}: {error.get('message')}"
        if error.get("commit"):
            text += f" (commit {_short(error.get('commit'))}, path {error.get('path')!r})"
        rows.append(["remote error", text + f" at {error.get('at')}"])
    conflicts = [c for c in remote.get("conflicts") or () if isinstance(c, Mapping)]
    if conflicts:
        named = ", ".join(f"{c.get('id')} {c.get('path')}" for c in conflicts)
        rows.append(["conflicts", f"{len(conflicts)} open: {named} (headctl sync --resolve ID)"])
    return rows


def status(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    if not isinstance(result, Mapping):
        mapping(result, args, out)
        return
    vectors = result.get("vectors") or {}
    fill = result.get("vector_fill") or {}
    coverage = vectors.get("coverage")
    vector_text = NONE
    if vectors.get("space"):
        vector_text = f"{vectors['space']}: {vectors.get('entries', 0)} entries"
        if coverage is not None:
            vector_text += f", coverage {coverage:.0%}"
        if fill.get("filling"):
            vector_text += f" (filling, {fill.get('fill_remaining')} to go)"
    index = result.get("index") or {}
    index_text = str(result.get("index_path") or NONE)
    if isinstance(index, Mapping) and index.get("indexed_sha"):
        index_text += f" at {_short(index.get('indexed_sha'))}"
    advanced = result.get("last_advance_ms")
    rows = [
        ["store", str(result.get("store", NONE))],
        ["ref", f"{result.get('ref', NONE)} at {_short(result.get('sha'))}"],
        ["memories", f"{result.get('records', 0)} ({result.get('skipped', 0)} files skipped)"],
        [
            "loaded",
            f"from {result.get('load_source', NONE)} in {result.get('load_ms', NONE)} ms; "
            f"{result.get('advances', 0)} advances"
            + (f", last {advanced} ms" if advanced is not None else ""),
        ],
        ["embedder", embedder_line(result)],
        ["vectors", vector_text],
        ["sessions", f"{result.get('sessions', 0)} open"],
        ["index", index_text],
        ["socket", str(result.get("socket") or "inherited from systemd")],
        [
            "daemon",
            f"headd {result.get('version', NONE)}, pid {result.get('pid', NONE)}, "
            f"up {_duration(result.get('uptime_s'))}",
        ],
    ]
    if fill.get("last_error"):
        rows.append(["fill error", f"{fill.get('last_error_code')}: {fill.get('last_error')}"])
    rows += remote_rows(result.get("remote"))
    table(rows, out)
    _verbose(result, args, out)


# -- search and recall --------------------------------------------------------------------


def search(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    hits = result.get("hits", []) if isinstance(result, Mapping) else []
    rows = []
    for rank, hit in enumerate(hits, 1):
        rows.append(
            [
                f"{rank:>2}.",
                f"{hit.get('score', 0):.4f}",
                str(hit.get("path")),
                "+".join(hit.get("arms") or []) or NONE,
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else []
    pad = " " * (widths[0] + 2) if widths else ""
    for row, hit in zip(rows, hits, strict=True):
        print(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3],
            file=out,
        )
        if hit.get("title"):
            print(f"{pad}{hit['title']}", file=out)
        if hit.get("claim"):
            print(f"{pad}  {hit['claim']}", file=out)
    arms = "+".join(result.get("arms") or []) if isinstance(result, Mapping) else ""
    degraded = "; no vector arm (degraded)" if result.get("degraded") else ""
    took = result.get("took_ms")
    print(
        f"{len(hits)} hits at {_short(result.get('sha'))} ({arms or NONE}"
        + (f", {took} ms" if took is not None else "")
        + f"){degraded}",
        file=out,
    )
    _verbose(result, args, out)


def recall(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    """Each entry once: the quoted ones with their text, then the index lines."""
    entries = result.get("entries") or []
    for entry in entries:
        print(f"{entry.get('path')}  {entry.get('title') or ''}".rstrip(), file=out)
        if entry.get("claim"):
            print(f"  {entry['claim']}", file=out)
        body = str(entry.get("body") or "").strip()
        if body == str(entry.get("claim") or "").strip():
            continue  # the quote is the claim itself: shown once
        for line in body.splitlines():
            print(f"    {line}", file=out)
    lines = result.get("index_lines") or []
    if lines:
        print("also relevant (not quoted):", file=out)
        table([[str(x.get("path")), str(x.get("title") or "")] for x in lines], out, "  ")
    truncated = "; truncated to the budget" if result.get("truncated") else ""
    print(
        f"{len(entries)} quoted, {len(lines)} listed, {result.get('spent', 0)} chars "
        f"at {_short(result.get('sha'))}{truncated}",
        file=out,
    )


# -- reads --------------------------------------------------------------------------------


def read(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    record = result.get("record") or {}
    entities = record.get("entities") or []
    links = [f"{x.get('rel')} {x.get('href')}" for x in record.get("links") or []]
    rows = [
        ["path", str(record.get("path"))],
        ["title", str(record.get("title") or NONE)],
        ["claim", str(record.get("claim") or NONE)],
        [
            "type",
            f"{record.get('memory_type')}, {record.get('status')}"
            + (f", task {record['task_status']}" if record.get("task_status") else ""),
        ],
        ["tags", _word(record.get("tags"))],
        ["entities", _word(entities)],
        ["links", "; ".join(links) or NONE],
        ["updated", _word(record.get("updated_at"))],
        ["hash", _word(record.get("content_hash"))],
        ["at", _short(result.get("sha"))],
    ]
    table(rows, out)
    body = str(record.get("body_text") or "").strip()
    if body:
        print("", file=out)
        for line in body.splitlines():
            print(f"  {line}", file=out)
    _verbose(result, args, out)


def resolve(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    chain = result.get("chain") or []
    if len(chain) > 1:
        print(" -> ".join(str(x) for x in chain), file=out)
    else:
        print(f"{result.get('path')} (already the live memory)", file=out)


def paths(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    found = result.get("paths") or []
    for path in found:
        print(path, file=out)
    print(f"{len(found)} paths at {_short(result.get('sha'))}", file=out)


def skipped(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    files = result.get("files") or []
    table([[str(f.get("path")), str(f.get("reason"))] for f in files], out)
    print(f"{len(files)} files skipped at {_short(result.get('sha'))}", file=out)


def advance(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    changed = result.get("changed")
    count = len(changed) if isinstance(changed, list) else changed
    print(
        f"at {_short(result.get('sha'))} (from {_short(result.get('from'))}, "
        f"{_word(count)} changed, {result.get('took_ms', NONE)} ms)",
        file=out,
    )


def gate(report: Any, args: argparse.Namespace, out: TextIO) -> None:
    verdict = "passed" if report.get("passed") else "refused"
    inverted = list(report.get("inversions") or [])
    print(
        f"head gate {verdict}: {report.get('probes')} probes, MRR {report.get('mrr_before')} -> "
        f"{report.get('mrr')} (floor {report.get('floor')}), inversions "
        f"{report.get('inversions_before')} -> {len(inverted)}",
        file=out,
    )
    # The verbose table counts the inversions as the summary does and lists them after.
    shown = {**report, "inversions": len(inverted)}
    if inverted:
        shown["inverted"] = inverted
    _verbose(shown, args, out)


def vectors_fill(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    coverage = result.get("coverage")
    print(
        f"{result.get('space') or NONE}: {result.get('embedded', 0)} embedded now, "
        f"{result.get('reused', 0)} reused, {result.get('remaining', 0)} remaining"
        + (f", coverage {coverage:.0%}" if isinstance(coverage, float | int) else ""),
        file=out,
    )


def traces_search(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    hits = result.get("hits") or []
    rows = [["SESSION", "STARTED", "PROMPTS", "TITLE"]]
    for hit in hits:
        title = hit.get("ai_title") or hit.get("first_prompt") or ""
        rows.append(
            [
                str(hit.get("session_id")),
                str(hit.get("started_at") or NONE),
                str(hit.get("prompt_count", 0)),
                " ".join(str(title).split())[:80],
            ]
        )
    if hits:
        table(rows, out)
    print(f"{len(hits)} sessions", file=out)


# -- sessions -----------------------------------------------------------------------------


def session_open(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    print(f"{result.get('session')}  (base {_short(result.get('base'))})", file=out)


def session_apply(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    violations = result.get("violations") or []
    if violations:
        print("nothing appended:", file=out)
        for v in violations:
            where = v.get("path") or (f"op {v['op']}" if v.get("op") is not None else "")
            reasons = "; ".join(v.get("reasons") or ()) or v.get("existing") or ""
            print(f"  {v.get('kind')}  {where}  {reasons}".rstrip(), file=out)
        return
    deduped = result.get("deduped") or []
    print(
        f"session {result.get('session')} holds {result.get('ops')} ops"
        + (f" ({len(deduped)} already in the store)" if deduped else ""),
        file=out,
    )


def session_commit(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    outcome = result.get("outcome")
    if outcome == "committed":
        landed = result.get("paths") or []
        if not landed:
            print(
                f"nothing to commit: the session changes nothing; no commit made "
                f"(the branch stays at {_short(result.get('sha'))})",
                file=out,
            )
            return
        print(f"committed {_short(result.get('sha'))}: {len(landed)} paths", file=out)
        for path in landed:
            print(f"  {path}", file=out)
        for c in result.get("contradictions") or []:
            print(f"  contradicts: {c.get('path')} vs {c.get('against')}", file=out)
        return
    print(f"not committed: {outcome}", file=out)
    for path in result.get("overlapping") or []:
        print(f"  overlapping: {path}", file=out)
    for v in result.get("violations") or []:
        reasons = "; ".join(v.get("reasons") or ())
        print(f"  {v.get('kind')}  {v.get('path') or ''}  {reasons}".rstrip(), file=out)


def session_rebase(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    violations = result.get("violations") or []
    print(
        f"session {result.get('session')} now on {_short(result.get('base'))} with "
        f"{result.get('ops')} ops"
        + (f"; a commit would be refused ({len(violations)} violations)" if violations else ""),
        file=out,
    )


def session_close(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    dropped = result.get("dropped_ops", 0)
    print(
        f"session {result.get('session')} closed"
        + (f", {dropped} uncommitted ops dropped" if dropped else ""),
        file=out,
    )


def session_state(info: Mapping[str, Any]) -> str:
    """Where a session stands, in words: uncommitted ops, a commit in flight, or committed."""
    ops = int(info.get("ops") or 0)
    settled = info.get("last_settlement") or {}
    if info.get("pending"):
        return f"committing {_short(info['pending'])} (in flight)"
    if ops:
        return f"open, {ops} uncommitted ops"
    if settled:
        landed = "committed" if settled.get("landed") else "commit not landed"
        return f"{landed} {_short(settled.get('sha'))}, nothing pending"
    return "open, empty"


def session_list(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    sessions = result.get("sessions") or []
    if not sessions:
        print("no open sessions", file=out)
        return
    rows = [["SESSION", "BASE", "STATE", "UPDATED"]]
    for info in sessions:
        rows.append(
            [
                str(info.get("session")),
                _short(info.get("base")),
                session_state(info),
                str(info.get("updated_at") or NONE),
            ]
        )
    table(rows, out)


def init(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    print(f"created a store at {result['store']} ({_short(result['sha'])})", file=out)
    print(f"  serve it:  headd --store {result['store']}", file=out)
