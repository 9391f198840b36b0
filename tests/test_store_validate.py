"""``judge`` folds runs of puts at once; it must answer exactly as a fold op by op would.

The reference below is the plain definition: every op judged against the view left by every
earlier accepted op, one ``with_overlay`` call per op.
"""

from __future__ import annotations

import functools

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.git import tip
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, make_store

from headd.errors import HeaddError, InvalidMemory
from headd.head.overlay import with_overlay
from headd.head.version import load_head
from headd.ops import Archive, LinkOp, Put
from headd.store.git_io import blob_text
from headd.store.ports import parse_memory
from headd.store.results import Deduped, Violation
from headd.store.sessions import LoggedOp
from headd.store.validate import judge, path_problems

CONTENTS = [memory_html(f"T{i}", f"Claim number {i} is here.", **WRITTEN) for i in range(3)]
PATHS = ["areas/inbox/alpha.html", "areas/a.html", "areas/b.html", "areas/c.html"]


def reference(version, ops, read_blob):
    violations, deduped, accepted = [], [], []
    view = version
    for index, logged in enumerate(ops):
        op = logged.op
        if isinstance(op, Put):
            try:
                record = parse_memory(op.path, op.html)
            except InvalidMemory as exc:
                violations.append(("format", index, exc.violations))
                continue
            existing = view.by_content_hash(record.content_hash)
            if existing is not None:
                if logged.from_write:
                    deduped.append((index, existing))
                else:
                    violations.append(("duplicate", index, existing))
                continue
            current = view.record(op.path)
            if current is not None and not current.archived:
                violations.append(("claim-edit", index, None))
                continue
        if isinstance(op, Archive) and op.to is not None and view.record(op.to) is not None:
            # every archived version stays at the tip: a held destination is refused
            violations.append(("format", index, None))
            continue
        try:
            view = with_overlay(view, [op], read_blob)
        except HeaddError:
            violations.append(("format", index, None))
            continue
        accepted.append(index)
    return violations, deduped, accepted, view


def summary(violations: tuple[Violation, ...], deduped: tuple[Deduped, ...]):
    out = []
    for v in violations:
        detail = (
            v.existing if v.kind == "duplicate" else (v.reasons if v.kind == "format" else None)
        )
        out.append((v.kind, v.op, detail))
    return out, [(d.op, d.existing) for d in deduped]


@pytest.fixture(scope="module")
def judged_store(tmp_path_factory):
    """The seed store's version and the reader of its blobs (a link re-parses its file)."""
    store = tmp_path_factory.mktemp("judge") / "store"
    make_store(store, SEED_FILES, ignore=None)
    repo = pygit2.Repository(str(store))
    return load_head(repo, tip(store)), functools.partial(blob_text, repo)


op_strategy = st.one_of(
    st.builds(
        lambda p, c, w: LoggedOp(op=Put(path=p, html=CONTENTS[c]), from_write=w),
        st.sampled_from(PATHS),
        st.integers(0, len(CONTENTS) - 1),
        st.booleans(),
    ),
    st.sampled_from(PATHS).map(
        lambda p: LoggedOp(op=Archive(path=p, to="archive/2026/" + p, html=None))
    ),
    st.sampled_from(PATHS).map(
        lambda p: LoggedOp(op=LinkOp(path=p, rel="relates_to", href="/areas/inbox/capital.html"))
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(op_strategy, max_size=8))
def test_judge_equals_the_op_by_op_fold(judged_store, ops) -> None:
    version, read_blob = judged_store
    # Fill archive html from the version so archives can resolve (as resolve.py does).
    filled = []
    for logged in ops:
        op = logged.op
        if isinstance(op, Archive):
            record = version.record(op.path)
            html = read_blob(record.blob_sha) if record is not None else CONTENTS[0]
            op = Archive(path=op.path, to=op.to, html=html)
        filled.append(LoggedOp(op=op, from_write=logged.from_write))
    got = judge(version, filled, functools.partial(with_overlay, read_blob=read_blob))
    want_v, want_d, want_a, want_view = reference(version, filled, read_blob)
    got_v, got_d = summary(got.violations, got.deduped)
    assert [(k, i) for k, i, _ in got_v] == [(k, i) for k, i, _ in want_v]
    for (kind, _, detail), (_, _, expected) in zip(got_v, want_v, strict=True):
        if kind == "duplicate":
            assert detail == expected
    assert got_d == want_d
    assert list(got.accepted) == want_a
    for path in [*PATHS, *("archive/2026/" + p for p in PATHS)]:
        assert got.view.record(path) == want_view.record(path)


def test_path_problems() -> None:
    assert path_problems("areas/x.html") == []
    assert len(path_problems("/areas/../x")) == 3
    assert path_problems("elsewhere/x.html") == [
        "path: must be under projects/, areas/, resources/ or archive/"
    ]


def test_an_applied_put_is_parsed_once(tmp_path, monkeypatch) -> None:
    """Judging a put parses it (its content hash finds duplicates) and the overlay folds the
    same text in: the parser's memo of recent texts makes that one parse, not two."""
    from support.stores import TickingClock

    from headd.memfile import parse as parse_mod
    from headd.store.manager import SessionManager

    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    manager = SessionManager(store, clock=TickingClock())
    session = manager.open().session
    manager.view(session)  # the base version, loaded before counting
    parsed: list[str] = []
    real = parse_mod._parse

    def counted(path, text, raw):
        parsed.append(path)
        return real(path, text, raw)

    monkeypatch.setattr(parse_mod, "_parse", counted)
    result = manager.apply(session, [Put(path="areas/inbox/once.html", html=CONTENTS[0])])
    assert result.violations == ()
    assert parsed == ["areas/inbox/once.html"]
    assert manager.commit(session, "once").outcome == "committed"
    assert parsed == ["areas/inbox/once.html"]
