"""The head core's functions the daemon calls, gathered in one injectable value.

The daemon never imports ``headd.head`` from deep inside a handler: ``HeadApi.from_head()`` binds
the real functions once at start, and the view helpers below absorb the small differences in how
a version exposes its indexes (a method taking a key, or a mapping), so the handlers read as the
contract does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from headd.head.ids import utf16_sorted


@dataclass(frozen=True, slots=True)
class HeadApi:
    load_head: Callable[..., Any]
    advance_head: Callable[..., Any]
    search_head: Callable[..., Any]
    gate_heads: Callable[..., Any]
    describe_gate_failure: Callable[[Any], str]
    scope: Callable[..., Any]

    @classmethod
    def from_head(cls) -> HeadApi:
        import headd.head as head

        return cls(
            load_head=head.load_head,
            advance_head=head.advance_head,
            search_head=head.search_head,
            gate_heads=head.gate_heads,
            describe_gate_failure=head.describe_head_gate_failure,
            scope=head.Scope,
        )


def _lookup(index: Any, key: str) -> Any:
    if callable(index):
        return index(key)
    if isinstance(index, Mapping):
        return index.get(key)
    raise TypeError(f"cannot look up {type(index).__name__}")


def paths_of(index: Any, key: str) -> list[str]:
    """Paths an index names for ``key``, sorted ascending (UTF-16 order, as the contract's)."""
    found = _lookup(index, key)
    if found is None:
        return []
    if isinstance(found, str):
        return [found]
    return utf16_sorted(list(found))


def skipped_files(view: Any) -> list[dict[str, str]]:
    """``[{path, reason}]`` from whatever shape the version keeps its skips in."""
    skipped = getattr(view, "skipped_files", None)
    if skipped is None:
        skipped = getattr(view, "skipped", ())
    if isinstance(skipped, int):
        return []
    items: Iterable[Any]
    if isinstance(skipped, Mapping):
        items = list(skipped.items())
    else:
        items = skipped or ()
    out: list[dict[str, str]] = []
    for item in items:
        if isinstance(item, tuple):
            path, reason = item[0], item[1]
        else:
            path, reason = item.path, item.reason
        if not isinstance(reason, str):
            reason = "; ".join(str(r) for r in reason)
        out.append({"path": str(path), "reason": reason})
    out.sort(key=lambda row: row["path"])
    return out


def skipped_count(view: Any) -> int:
    skipped = getattr(view, "skipped", 0)
    if isinstance(skipped, int):
        return skipped
    return len(skipped)


def record_count(view: Any) -> int:
    size = getattr(view, "size", None)
    if size is None:
        return len(view)
    return int(size() if callable(size) else size)
