"""The state plane's committed sidecar, ``.memhtml/state/access.jsonl``, in memhtml 0.15.1's bytes.

``state.db`` is not rebuildable from git, so this file is its only durable copy and the way state
moves between machines and to or from memhtml itself. Two properties matter:

- **Byte-stable export.** Rows come path-ordered from SQL, the outcome score is rounded to four
  decimals (the grid the EWMA lives on) with ``-0`` written as ``0``, keys go in a fixed order and
  numbers are written as JavaScript's ``JSON.stringify`` writes them. An unchanged plane therefore
  renders identical bytes, and exporting it twice commits nothing; memhtml's export of the same
  rows is the same file.
- **Export merges, never overwrites.** The file on disk may hold rows headd did not write
  (memhtml's own ``reinforce`` then ``state export``, another machine's import). Export merges
  them with ``state.access`` by the import's rule (larger count, later stamp; the score of the
  row updated last) and keeps every row only the file holds, so exporting never drops a bump.
  Instants are written in memhtml's form, whole seconds and ``Z`` (``2026-12-01T22:19:29Z``);
  headd's millisecond stamps are cut to the second.
- **Forgiving import.** A line that does not parse, or holds a count ``state.access`` cannot
  (negative, fractional, beyond 64 bits), is refused by its line number and reason and skipped,
  never fatal, so a file truncated by an interrupted write, or one a collaborator pushed with a
  bad row, still restores every other row it holds. Rows merge into a live
  plane by taking the larger of each monotone counter and the later of each stamp, so an import
  never loses a bump that happened after the export.

``render_sidecar``/``parse_sidecar`` are pure; ``export_sidecar``/``import_sidecar`` are the thin
I/O wrappers ``headctl state export|import`` and the daemon call.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import msgspec

from headd.errors import StorageFailure
from headd_plane.state import STATE_SCHEMA, has_state, transaction

#: Where the sidecar lives, relative to the store's work tree.
STATE_SIDECAR_PATH = ".memhtml/state/access.jsonl"

#: Decimal places of the outcome score in the file.
SIDECAR_PRECISION = 4


class SidecarEntry(msgspec.Struct, frozen=True):
    """One line of the sidecar, fields in the order they are written."""

    path: str
    accessCount: int | float  # noqa: N815 - the file's own key names
    reinforcementCount: int | float  # noqa: N815
    outcomeScore: float  # noqa: N815
    lastAccessedAt: str | None  # noqa: N815
    lastReinforcedAt: str | None  # noqa: N815
    updatedAt: str  # noqa: N815


class RefusedRow(msgspec.Struct, frozen=True):
    """A line of the sidecar that was not imported: its number (from 1), its path when it
    names one, and why."""

    line: int
    path: str | None
    reason: str


class ParsedSidecar(msgspec.Struct, frozen=True):
    entries: tuple[SidecarEntry, ...]
    skipped: int
    refused: tuple[RefusedRow, ...] = ()


class ExportReport(TypedDict):
    path: str
    rows: int
    bytes: int
    written: bool


class ImportReport(TypedDict):
    path: str
    rows: int
    restored: int
    skipped: int
    has_state: bool
    #: Each line not imported: ``{line, path, reason}``.
    refused: list[dict[str, Any]]


def _js_round(value: float) -> float:
    """JavaScript ``Math.round``: the nearest integer, ties toward +infinity."""
    floor = math.floor(value)
    return float(floor + 1) if value - floor >= 0.5 else float(floor)


def round4(value: float) -> float:
    """Round to the sidecar's grid exactly as memhtml does; ``-0`` becomes ``0``."""
    factor = 10**SIDECAR_PRECISION
    rounded = _js_round(value * factor) / factor
    return 0.0 if rounded == 0 else rounded


def js_number(value: int | float) -> str:
    """A number as JavaScript's ``JSON.stringify`` writes it (``1`` not ``1.0``, ``1e-7``).

    Python's ``repr`` and JavaScript both pick the shortest digit string that round-trips; only
    the placement of the point and the exponent notation differ (ECMA-262 Number::toString).
    """
    if isinstance(value, bool):
        raise TypeError("a boolean is not a sidecar number")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + (int(exp_text) if exp_text else 0)  # digits before the point
    point -= len(whole + frac) - len((whole + frac).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        head = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{head}e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + body


def _js_string(value: str | None) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def render_entry(entry: SidecarEntry) -> str:
    """One entry as one JSON line (no newline), byte-for-byte memhtml's ``JSON.stringify``."""
    return (
        "{"
        f'"path":{_js_string(entry.path)},'
        f'"accessCount":{js_number(entry.accessCount)},'
        f'"reinforcementCount":{js_number(entry.reinforcementCount)},'
        f'"outcomeScore":{js_number(entry.outcomeScore)},'
        f'"lastAccessedAt":{_js_string(entry.lastAccessedAt)},'
        f'"lastReinforcedAt":{_js_string(entry.lastReinforcedAt)},'
        f'"updatedAt":{_js_string(entry.updatedAt)}'
        "}"
    )


def entry_from_row(row: Sequence[Any]) -> SidecarEntry:
    """A ``state.access`` row (columns in table order) as an entry, score on the grid."""
    path, access, reinforcement, score, last_accessed, last_reinforced, updated = row
    return SidecarEntry(
        path=path,
        accessCount=access,
        reinforcementCount=reinforcement,
        outcomeScore=round4(float(score)),
        lastAccessedAt=last_accessed,
        lastReinforcedAt=last_reinforced,
        updatedAt=updated,
    )


def render_sidecar(entries: Sequence[SidecarEntry]) -> str:
    """The whole file: one line per entry, each ending in a newline; empty when no rows."""
    if not entries:
        return ""
    return "\n".join(render_entry(e) for e in entries) + "\n"


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _number_or(value: Any, fallback: float) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return fallback
    if isinstance(value, float) and not math.isfinite(value):
        return fallback
    return value


def _string_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


#: The largest count ``state.access`` holds (SQLite's INTEGER is 64-bit signed).
MAX_COUNT = 2**63 - 1


def _row_problem(parsed: Any) -> tuple[str | None, str | None]:
    """(the row's path if it names one, why the row cannot be imported or None)."""
    if not isinstance(parsed, dict):
        return None, "not a JSON object"
    path = parsed.get("path")
    if not isinstance(path, str) or path == "":
        return None, "no non-empty string path"
    for key in ("accessCount", "reinforcementCount"):
        count = _number_or(parsed.get(key), 0)
        if count > MAX_COUNT:  # first: a float() of a 400-digit count would overflow
            return path, f"{key} is out of range (above {MAX_COUNT})"
        if count < 0 or not float(count).is_integer():
            return path, f"{key} is negative or fractional"
    return path, None


def parse_sidecar(contents: str) -> ParsedSidecar:
    """Read entries back, refusing (not failing on) every line that is not a usable row.

    A line is refused, with its number and the reason, when it is not JSON, not an object, has
    no non-empty string ``path``, or carries a negative, fractional or out-of-range count (which
    ``state.access`` would refuse, failing every other row of the import with it). Missing fields
    take memhtml's defaults. The rest are kept.
    """
    entries: list[SidecarEntry] = []
    refused: list[RefusedRow] = []
    for number, line in enumerate(contents.split("\n"), 1):
        if line.strip() == "":
            continue
        try:
            parsed = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            refused.append(RefusedRow(number, None, "not JSON"))
            continue
        path, problem = _row_problem(parsed)
        if problem is not None or path is None:
            refused.append(RefusedRow(number, path, problem or "no path"))
            continue
        score = round4(float(_number_or(parsed.get("outcomeScore"), 0)))
        entries.append(
            SidecarEntry(
                path=path,
                accessCount=int(_number_or(parsed.get("accessCount"), 0)),
                reinforcementCount=int(_number_or(parsed.get("reinforcementCount"), 0)),
                outcomeScore=max(-1.0, min(1.0, score)),
                lastAccessedAt=_string_or_none(parsed.get("lastAccessedAt")),
                lastReinforcedAt=_string_or_none(parsed.get("lastReinforcedAt")),
                updatedAt=parsed["updatedAt"] if isinstance(parsed.get("updatedAt"), str) else "",
            )
        )
    return ParsedSidecar(entries=tuple(entries), skipped=len(refused), refused=tuple(refused))


def access_entries(conn: sqlite3.Connection) -> list[SidecarEntry]:
    """Every ``state.access`` row as an entry, ordered by path in SQL (so the file is stable)."""
    if not has_state(conn):
        return []
    rows = conn.execute(
        f"""SELECT path, access_count, reinforcement_count, outcome_score,
                   last_accessed_at, last_reinforced_at, updated_at
            FROM {STATE_SCHEMA}.access ORDER BY path ASC"""
    ).fetchall()
    return [entry_from_row(r) for r in rows]


_INSTANT = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z")


def memhtml_instant(value: str | None) -> str | None:
    """An instant in memhtml's form (UTC, whole seconds, ``Z``); anything else as it is."""
    if value is None:
        return None
    match = _INSTANT.fullmatch(value)
    return match.group(1) + "Z" if match else value


def _later(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a if b is None else b
    return max(a, b)


def _in_memhtml_form(entry: SidecarEntry) -> SidecarEntry:
    return msgspec.structs.replace(
        entry,
        lastAccessedAt=memhtml_instant(entry.lastAccessedAt),
        lastReinforcedAt=memhtml_instant(entry.lastReinforcedAt),
        updatedAt=memhtml_instant(entry.updatedAt) or "",
    )


def merge_entries(
    on_disk: Sequence[SidecarEntry], ours: Sequence[SidecarEntry]
) -> list[SidecarEntry]:
    """The file's rows and the plane's merged by path, path-ordered, instants in memhtml's form.

    Counts take the larger, stamps the later (as ``import_entries`` merges); the score comes
    from the row updated last (the plane's on a tie, it is the newer reading). A row only one
    side holds is kept as it is, so nothing the file held is ever dropped.
    """
    merged: dict[str, SidecarEntry] = {e.path: _in_memhtml_form(e) for e in on_disk}
    for entry in map(_in_memhtml_form, ours):
        theirs = merged.get(entry.path)
        if theirs is None:
            merged[entry.path] = entry
            continue
        newer = entry if entry.updatedAt >= theirs.updatedAt else theirs
        merged[entry.path] = SidecarEntry(
            path=entry.path,
            accessCount=max(entry.accessCount, theirs.accessCount),
            reinforcementCount=max(entry.reinforcementCount, theirs.reinforcementCount),
            outcomeScore=newer.outcomeScore,
            lastAccessedAt=_later(entry.lastAccessedAt, theirs.lastAccessedAt),
            lastReinforcedAt=_later(entry.lastReinforcedAt, theirs.lastReinforcedAt),
            updatedAt=max(entry.updatedAt, theirs.updatedAt),
        )
    return [merged[path] for path in sorted(merged)]


def export_sidecar(conn: sqlite3.Connection, store_root: Path) -> ExportReport:
    """Merge ``state.access`` into the sidecar under ``store_root`` (``merge_entries``) and
    write it when its bytes would change; never commit.

    ``written`` is False when the file already held exactly these bytes, so a caller that
    commits the file (``headctl state export``) has nothing to commit.
    """
    target = store_root / STATE_SIDECAR_PATH
    try:
        existing = target.read_bytes() if target.exists() else None
    except OSError as exc:
        raise StorageFailure("state export failed", {"operation": "state.export"}) from exc
    on_disk = parse_sidecar(existing.decode("utf-8", errors="replace")).entries if existing else ()
    contents = render_sidecar(merge_entries(on_disk, access_entries(conn))).encode("utf-8")
    rows = contents.count(b"\n")
    try:
        written = existing != contents
        if written:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_bytes(contents)
            tmp.replace(target)
    except OSError as exc:
        raise StorageFailure("state export failed", {"operation": "state.export"}) from exc
    return {"path": STATE_SIDECAR_PATH, "rows": rows, "bytes": len(contents), "written": written}


_IMPORT_SQL = f"""
    INSERT INTO {STATE_SCHEMA}.access
      (path, access_count, reinforcement_count, outcome_score,
       last_accessed_at, last_reinforced_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(path) DO UPDATE SET
      access_count = max(access_count, excluded.access_count),
      reinforcement_count = max(reinforcement_count, excluded.reinforcement_count),
      outcome_score = excluded.outcome_score,
      last_accessed_at = nullif(max(coalesce(last_accessed_at, ''),
                                    coalesce(excluded.last_accessed_at, '')), ''),
      last_reinforced_at = nullif(max(coalesce(last_reinforced_at, ''),
                                      coalesce(excluded.last_reinforced_at, '')), ''),
      updated_at = excluded.updated_at
"""


def import_entries(conn: sqlite3.Connection, entries: Sequence[SidecarEntry]) -> int:
    """Merge entries into ``state.access`` in one transaction; return rows written.

    Counts merge by max (they only grow, so max cannot lose a bump), stamps by the later one;
    the outcome score and ``updated_at`` take the file's value, as memhtml's import does.
    """
    if not entries or not has_state(conn):
        return 0
    try:
        with transaction(conn):
            conn.executemany(
                _IMPORT_SQL,
                [
                    (
                        e.path,
                        e.accessCount,
                        e.reinforcementCount,
                        e.outcomeScore,
                        e.lastAccessedAt,
                        e.lastReinforcedAt,
                        e.updatedAt,
                    )
                    for e in entries
                ],
            )
    except sqlite3.Error as exc:
        raise StorageFailure("state import failed", {"operation": "state.import"}) from exc
    return len(entries)


def import_sidecar(conn: sqlite3.Connection, store_root: Path) -> ImportReport:
    """Replay ``store_root``'s sidecar into ``state.access``; a missing file restores nothing."""
    target = store_root / STATE_SIDECAR_PATH
    try:
        raw = target.read_bytes() if target.exists() else None
    except OSError as exc:
        raise StorageFailure("state import failed", {"operation": "state.import"}) from exc
    state = has_state(conn)
    if raw is None:
        return {
            "path": STATE_SIDECAR_PATH,
            "rows": 0,
            "restored": 0,
            "skipped": 0,
            "has_state": state,
            "refused": [],
        }
    parsed = parse_sidecar(raw.decode("utf-8", errors="replace"))
    restored = import_entries(conn, parsed.entries) if state else 0
    return {
        "path": STATE_SIDECAR_PATH,
        "rows": len(parsed.entries),
        "restored": restored,
        "skipped": parsed.skipped,
        "has_state": state,
        "refused": [msgspec.to_builtins(row) for row in parsed.refused],
    }
