"""Sessions driven at random against a plain model, and every earlier version still answering as
it did (pyrsistent's ``hypothesis_vector_test`` habit, for the store).

Hypothesis opens up to three sessions on a real repository and interleaves ``apply`` (a put of a
new memory, an archive of a live one), ``commit``, ``rebase`` and ``close``. The model is a dict of
paths per commit and per session (path -> archived?, claim), replayed from the ops; a commit lands
exactly when no path it touches changed on the branch since the session's base, and the branch
then holds the tip's model with the session's ops replayed on it.

After every step, every view handed out so far (each session's overlay after each apply, each
committed version) must answer exactly as it answered when it was handed out: a version is a
value, and nothing a later session does may reach back into it.

Seen red: with the commit path's rebase onto the tip skipped (a stale session's commit answers
``rebase-needed`` where the model lands it). With the overlapping-paths check of that rebase
skipped it stays green: the judgement at the tip refuses the same commits, which is the point of
judging there.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from support.git import tip
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.ops import Archive, Put
from headd.store.manager import SessionManager

Model = dict[str, tuple[bool, str]]
Op = tuple[str, str, str]  # ("put", path, claim) or ("archive", path, "")
YEAR = "2026"  # the ticking clock's year: where an archive op puts its file


def answers(view: object) -> Model:
    """What a view says: every path, whether it is archived, and its claim."""
    out: Model = {}
    for path in view.paths():  # type: ignore[attr-defined]
        record = view.record(path)  # type: ignore[attr-defined]
        out[path] = (record.archived, record.claim)
    return out


def replay(model: Model, ops: list[Op]) -> Model:
    out = dict(model)
    for kind, path, claim in ops:
        if kind == "put":
            out[path] = (False, claim)
        else:
            _, kept = out.pop(path)
            out[f"archive/{YEAR}/{path}"] = (True, kept)
    return out


def touched(ops: list[Op]) -> set[str]:
    paths = set()
    for kind, path, _ in ops:
        paths.add(path)
        if kind == "archive":
            paths.add(f"archive/{YEAR}/{path}")
    return paths


class Sessions(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="headd-sessions-"))
        self.store = self.dir / "store"
        make_store(self.store, SEED_FILES, ignore=None)
        self.manager = SessionManager(self.store, clock=TickingClock())
        self.tip = tip(self.store)
        self.committed: dict[str, Model] = {}
        #: Session id -> (its base, its ops so far).
        self.sessions: dict[str, tuple[str, list[Op]]] = {}
        #: Every view handed out, with what it answered then.
        self.held: list[tuple[object, Model]] = []
        self.counter = 0

    @initialize()
    def seed(self) -> None:
        version = self.manager.versions.version(self.tip)
        self.committed[self.tip] = answers(version)
        self.held.append((version, self.committed[self.tip]))

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- the model's view of a session ------------------------------------------------------

    def pending(self, session: str) -> Model:
        base, ops = self.sessions[session]
        return replay(self.committed[base], ops)

    def conflicts(self, session: str) -> bool:
        """Whether a path the session touches changed on the branch since its base."""
        base, ops = self.sessions[session]
        before, now = self.committed[base], self.committed[self.tip]
        return any(before.get(p) != now.get(p) for p in touched(ops))

    def hold(self, session: str) -> None:
        view = self.manager.view(session)
        expected = self.pending(session)
        assert answers(view) == expected
        self.held.append((view, expected))

    # -- rules ------------------------------------------------------------------------------

    @precondition(lambda self: len(self.sessions) < 3)
    @rule()
    def open(self) -> None:
        self.counter += 1
        opened = self.manager.open(id=f"machine-{self.counter}")  # named: draws must replay
        assert opened.base == self.tip
        self.sessions[opened.session] = (opened.base, [])
        self.hold(opened.session)

    @precondition(lambda self: bool(self.sessions))
    @rule(data=st.data())
    def put(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.sessions)))
        self.counter += 1
        path = f"areas/inbox/note-{self.counter}.html"
        claim = f"Note {self.counter} records fact number {self.counter}."
        html = memory_html(f"Note {self.counter}", claim, **WRITTEN)
        result = self.manager.apply(session, [Put(path=path, html=html)])
        assert result.violations == ()
        self.sessions[session][1].append(("put", path, claim))
        self.hold(session)

    @precondition(lambda self: bool(self.sessions))
    @rule(data=st.data())
    def archive(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.sessions)))
        live = sorted(p for p, (archived, _) in self.pending(session).items() if not archived)
        if not live:
            return
        path = data.draw(st.sampled_from(live))
        result = self.manager.apply(session, [Archive(path=path)])
        assert result.violations == ()
        self.sessions[session][1].append(("archive", path, ""))
        self.hold(session)

    @precondition(lambda self: bool(self.sessions))
    @rule(data=st.data())
    def commit(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.sessions)))
        base, ops = self.sessions[session]
        result = self.manager.commit(session, message="machine")
        if not ops:
            assert (result.outcome, result.paths) == ("committed", ())
            return
        if self.conflicts(session):
            assert result.outcome == "rebase-needed"
            assert tip(self.store) == self.tip
            return
        assert result.outcome == "committed", result
        landed = replay(self.committed[self.tip], ops)
        self.tip = tip(self.store)
        assert result.sha == self.tip
        self.committed[self.tip] = landed
        version = self.manager.versions.version(self.tip)
        assert answers(version) == landed
        self.held.append((version, landed))
        self.sessions[session] = (self.tip, [])
        self.hold(session)

    @precondition(lambda self: bool(self.sessions))
    @rule(data=st.data())
    def rebase(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.sessions)))
        if self.conflicts(session):
            return
        result = self.manager.rebase(session)
        assert result.violations == () and result.base == self.tip
        self.sessions[session] = (self.tip, self.sessions[session][1])
        self.hold(session)

    @precondition(lambda self: bool(self.sessions))
    @rule(data=st.data())
    def close(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.sessions)))
        self.manager.close(session)
        del self.sessions[session]

    # -- the property -----------------------------------------------------------------------

    @invariant()
    def every_earlier_view_answers_as_it_did(self) -> None:
        for view, expected in self.held:
            assert answers(view) == expected


Sessions.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=14,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_sessions_against_a_dict_of_paths = Sessions.TestCase
