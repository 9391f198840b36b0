"""Agents writing to main while sleep runs and merges, driven at random on a real repository.

Hypothesis interleaves an agent's new memory and an agent's edit of a memory on main (each a
``git commit`` in the work tree, as a person or another tool makes one), a sleep run, and a merge
of the pending run. Whatever the order:

- a run never moves main or touches the work tree: main's tip is the one before the run;
- a merge either lands (main moves, and the work tree follows it) or is refused with nothing
  moved; a refusal names the paths main changed that the run also changed, or a gate, or the
  run changed nothing;
- no agent write is lost: each memory an agent wrote is found on main by its path, by its
  content where placement moved it, or by ``resolve`` where a phase folded or evicted it; and an
  edit made while a run waited for review is on main, byte for byte, after the run lands.

Seen red: with the merge's conflict check skipped (a landing then overwrites an agent's edit made
during the review with the run's version of the file).
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import date
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from support.git import external_commit, file_at, git, tip
from support.memory import memory_html
from support.sleep_store import RUN_DAY, SLEEP_FILES, make_sleep_store

from headd.errors import PathNotFound
from headd.head.successors import resolve
from headd.head.version import load_head
from headd.memfile.head_edit import set_meta
from headd.sleep.branch import phase_commits, run_ref
from headd.sleep.merge import merge_run
from headd.sleep.run import start_run
from headd.store import git_io
from headd.store.ports import parse_memory

DAY = date.fromisoformat(RUN_DAY)
#: Memories of the seed store an agent may edit on main (some a run changes, some it leaves).
EDITABLE = sorted(
    p
    for p in SLEEP_FILES
    if p.endswith(".html") and p.startswith(("areas/inbox/", "resources/search/"))
)


class SleepBesideAgents(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="sleep-machine-"))
        self.store = self.dir / "store"
        make_sleep_store(self.store)
        self.repo = git_io.open_repo(self.store)
        #: Path -> content hash of every memory an agent wrote.
        self.written: dict[str, str] = {}
        #: The pending run's id, and the edits agents made to main since it started.
        self.pending: str | None = None
        self.edited_since_run: dict[str, str] = {}
        self.counter = 0

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def _main_text(self, path: str) -> str | None:
        return file_at(self.store, tip(self.store), path)

    @rule(claim=st.sampled_from(["Queues drain hourly.", "The pool holds forty connections."]))
    def agent_writes(self, claim: str) -> None:
        self.counter += 1
        path = f"areas/inbox/agent-{self.counter}.html"
        html = memory_html(f"Agent note {self.counter}", f"{claim} Note {self.counter}.")
        external_commit(self.store, {path: html}, f"agent writes {path}")
        self.written[path] = parse_memory(path, html).content_hash

    @rule(path=st.sampled_from(EDITABLE), importance=st.integers(min_value=1, max_value=10))
    def agent_edits(self, path: str, importance: int) -> None:
        before = self._main_text(path)
        if before is None:  # moved or archived by a merged run: nothing at this path to edit
            return
        after = set_meta(before, "memhtml-importance", str(importance))
        if after == before:
            return
        external_commit(self.store, {path: after}, f"agent edits {path}")
        if self.pending is not None:
            self.edited_since_run[path] = after

    @precondition(lambda self: self.pending is None)
    @rule()
    def run(self) -> None:
        main_before = tip(self.store)
        report = start_run(self.repo, day=DAY)
        assert tip(self.store) == main_before
        assert git(self.store, "status", "--porcelain") == ""
        self.pending = report.run_id
        self.edited_since_run = {}

    @precondition(lambda self: self.pending is not None)
    @rule()
    def merge(self) -> None:
        assert self.pending is not None
        main_before = tip(self.store)
        report = merge_run(
            self.repo,
            self.pending,
            versions=lambda sha: load_head(self.repo, sha),
            today=DAY,
        )
        if report.merged:
            assert tip(self.store) == report.landed != main_before
            for path, text in self.edited_since_run.items():
                assert self._main_text(path) == text, path
        else:
            assert tip(self.store) == main_before
            gates = (report.head_gate, report.retention_gate)
            refused_by_gate = any(g is not None and not g.passed for g in gates)
            _, run_tip = run_ref(self.repo, self.pending)
            empty = not phase_commits(
                self.repo, self.pending, run_tip
            )  # a run that changed nothing
            assert report.conflicts or refused_by_gate or empty, report.reason
            assert set(report.conflicts) <= set(self.edited_since_run), report.conflicts
        assert git(self.store, "status", "--porcelain") == ""
        self.pending = None
        self.edited_since_run = {}

    @invariant()
    def no_agent_write_is_lost(self) -> None:
        if not self.written:
            return
        view = load_head(self.repo, tip(self.store))
        for path, content_hash in self.written.items():
            if view.record(path) is not None or view.by_content_hash(content_hash):
                continue
            try:
                end = resolve(view, path).path
            except PathNotFound:
                raise AssertionError(f"{path} is nowhere on main") from None
            assert view.record(end) is not None, (path, end)


SleepBesideAgents.TestCase.settings = settings(
    max_examples=6,
    stateful_step_count=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_sleep_beside_agents = SleepBesideAgents.TestCase
