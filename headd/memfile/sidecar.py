"""memhtml's committed state sidecar, ``.memhtml/state/access.jsonl``, as pure functions.

The file is one of memhtml's formats, like the memory file itself: one JSON line per path with its
access and reinforcement counts, outcome score and stamps, in exactly the bytes memhtml 0.15.1's
``JSON.stringify`` writes (keys in a fixed order, the score on a four-decimal grid, numbers as
JavaScript prints them). Rendering, parsing and the merge rule live here, with no SQLite, so
both the plane's export/import (``headd_plane.sidecar``) and the remote replay
(``headd.remote.replay``), which merges two machines' sidecars, use the one definition.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import msgspec

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
