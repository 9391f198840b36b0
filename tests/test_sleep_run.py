"""Sleep runs on a real git store: the branch, its trailers, each phase's rule, and main and the
work tree left alone."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest
from headd_plane.db import open_writer
from headd_plane.sleep_rows import record_run
from support.git import external_commit, file_at, git, tip, tree_paths
from support.sleep_store import RUN_DAY, SLEEP_FILES, make_sleep_store

from headd.errors import InvalidParams
from headd.memfile.head_edit import read_links, read_meta
from headd.sleep import phases as phase_module
from headd.sleep.branch import phase_commits, trailers_of
from headd.sleep.catalog import MODEL_PHASES, NO_MODEL_REASON, PHASES
from headd.sleep.review import plan_run, review_run
from headd.sleep.run import resume_run, start_run
from headd.store import git_io

DAY = date.fromisoformat(RUN_DAY)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_sleep_store(root)
    return root


def _by_phase(report):  # type: ignore[no-untyped-def]
    return {p.phase: p for p in report.phases}


def test_run_builds_the_branch_with_trailers_and_leaves_main_alone(store: Path) -> None:
    main_before = tip(store)
    worktree_before = {p: (store / p).read_text() for p in SLEEP_FILES}
    repo = git_io.open_repo(store)
    report = start_run(repo, day=DAY)
    assert report.run_id == "sleep/2026-12-04"
    assert tip(store) == main_before
    assert git(store, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert {p: (store / p).read_text() for p in SLEEP_FILES} == worktree_before
    assert git(store, "status", "--porcelain") == ""
    branch = tip(store, "refs/heads/sleep/2026-12-04")
    assert branch == report.head != main_before
    log = git(store, "log", "--format=%B%x00", f"{main_before}..{branch}").split("\x00")
    messages = [m.strip() for m in log if m.strip()]
    assert messages, "the run committed nothing"
    for message in messages:
        trailers = trailers_of(message)
        assert trailers["Memhtml-Run"] == "sleep/2026-12-04"
        assert trailers["Memhtml-Phase"] in PHASES
        assert trailers["Memhtml-Counts"].startswith("{")
    phases = _by_phase(report)
    for name in MODEL_PHASES:
        assert phases[name].status == "skipped" and phases[name].reason == NO_MODEL_REASON
    for name in ("preflight", "relationship-mining", "report"):
        assert phases[name].commit is None
    assert [c.phase for c in phase_commits(repo, report.run_id, branch)] == [
        p.phase for p in report.phases if p.commit is not None
    ]


def test_a_second_run_the_same_day_gets_a_suffixed_branch(store: Path) -> None:
    repo = git_io.open_repo(store)
    start_run(repo, day=DAY)
    assert start_run(repo, day=DAY).run_id == "sleep/2026-12-04-2"


def test_each_phase_rule_on_the_branch(store: Path) -> None:
    repo = git_io.open_repo(store)
    report = start_run(repo, day=DAY)
    head = report.head
    paths = tree_paths(store, head)
    # exact duplicates fold into the older, which links the archived copy as superseded
    folded = "archive/2026/areas/inbox/pool-size-again.html"
    assert "areas/inbox/pool-size-again.html" not in paths and folded in paths
    assert read_meta(file_at(store, head, folded) or "", "memhtml-status") == "archived"
    keeper = file_at(store, head, "areas/inbox/pool-size.html") or ""
    assert any(link.href == "/" + folded for link in read_links(keeper))
    # a claim and its negation stay apart
    assert {"areas/inbox/cache-is-safe.html", "areas/inbox/cache-is-not-safe.html"} <= paths
    # past valid-until: the used one is reprieved, the other archived with its stamps
    oncall = file_at(store, head, "resources/ops/oncall-rotation.html") or ""
    assert read_meta(oncall, "memhtml-valid-until") == "2026-12-18"
    assert read_meta(oncall, "memhtml-reprieves") == "1"
    frozen = file_at(store, head, "archive/2026/resources/ops/freeze-window.html") or ""
    assert read_meta(frozen, "memhtml-archived") and read_meta(frozen, "memhtml-updated")
    # stale, thin and unused: evicted by triage; the task is never touched
    assert "archive/2026/projects/legacy/fax-gateway.html" in paths
    task = "projects/legacy/tasks/retire-fax.html"
    assert file_at(store, head, task) == SLEEP_FILES[task]
    # inbox placement: a directory named by the entity, and a new one for a shared entity,
    # with the link between the two moved memories repointed in the same commit
    assert "resources/billing/billing-retries.html" in paths
    moved = file_at(store, head, "resources/ledger/ledger-snapshots-nightly.html") or ""
    assert [link.href for link in read_links(moved)] == [
        "/resources/ledger/ledger-is-append-only.html"
    ]
    # a dangling link repaired by the archive path algebra
    index = file_at(store, head, "resources/ops/runbook-index.html") or ""
    assert [link.href for link in read_links(index)] == [
        "/archive/2026/resources/ops/old-runbook.html"
    ]
    # nothing is ever deleted: every memory at the base is somewhere on the branch
    base_memories = {p for p in SLEEP_FILES if p.endswith(".html")}
    archived = {p.split("/", 2)[2] for p in paths if p.startswith("archive/2026/")}
    moved_from = {f.path for f in review_run(repo, report.run_id).files if f.kind == "moved"}
    assert base_memories <= paths | archived | moved_from


def test_dry_run_and_plan_commit_nothing(store: Path) -> None:
    repo = git_io.open_repo(store)
    refs_before = set(repo.references)
    report = start_run(repo, day=DAY, dry_run=True)
    assert report.status == "dry-run" and all(p.commit is None for p in report.phases)
    plan = plan_run(repo, day=DAY)
    assert plan.would_change and plan.phases["dedup-merge"]["folded"] == 1
    assert set(repo.references) == refs_before


def test_unknown_phase_is_refused(store: Path) -> None:
    with pytest.raises(InvalidParams, match="nap"):
        start_run(git_io.open_repo(store), day=DAY, phases=["preflight", "nap"])


def test_a_failed_phase_keeps_earlier_commits_and_skips_its_dependents(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(working, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("dedup broke")

    monkeypatch.setitem(phase_module.DETERMINISTIC, "dedup-merge", broken)
    import headd.sleep.run as run_module

    monkeypatch.setattr(run_module, "DETERMINISTIC", phase_module.DETERMINISTIC)
    report = start_run(git_io.open_repo(store), day=DAY)
    phases = _by_phase(report)
    assert phases["dedup-merge"].status == "failed" and "dedup broke" in (
        phases["dedup-merge"].reason or ""
    )
    assert phases["retention-triage"].status == "skipped"
    assert phases["reprieve"].status == "ok" and phases["reprieve"].commit is not None
    assert phases["placement-triage"].commit is not None
    # the reporting rows say failed, as memhtml's do; a resume that runs clean says review
    db = open_writer(store / ".memhtml" / "index.db")
    try:
        record_run(db.conn, report)
        assert _run_row(db.conn) == ("failed", report.head)
        rows = dict(db.conn.execute("SELECT phase, error FROM sleep_phases").fetchall())
        assert "dedup broke" in (rows["dedup-merge"] or "")
        monkeypatch.undo()
        resumed = resume_run(git_io.open_repo(store), report.run_id, day=DAY)
        record_run(db.conn, resumed)
        assert _run_row(db.conn) == ("review", resumed.head)
    finally:
        db.close()


def _run_row(conn: sqlite3.Connection) -> tuple[str, str]:
    status, head = conn.execute("SELECT status, head_sha FROM sleep_runs").fetchone()
    return status, head


def test_resume_runs_only_the_phases_without_a_trailer(store: Path) -> None:
    repo = git_io.open_repo(store)
    first = start_run(repo, day=DAY, phases=["preflight", "dedup-merge"])
    assert [c.phase for c in phase_commits(repo, first.run_id, first.head)] == ["dedup-merge"]
    resumed = resume_run(repo, first.run_id, day=DAY)
    phases = _by_phase(resumed)
    assert phases["dedup-merge"].reason == "committed earlier"
    assert resumed.base == first.base
    committed = [c.phase for c in phase_commits(repo, first.run_id, resumed.head)]
    assert committed[0] == "dedup-merge" and committed.count("dedup-merge") == 1
    assert "placement-triage" in committed


def test_a_run_after_one_that_fast_forwarded_main_is_its_own(store: Path) -> None:
    """The first run's phase commits sit below the second run's branch, trailers and all: the
    second run's base, commits and resume are its own (seen red: walking trailers alone gave the
    second run the first one's base and phases, so its resume skipped them as committed)."""
    repo = git_io.open_repo(store)
    first = start_run(repo, day=DAY)
    git(store, "merge", "-q", "--ff-only", first.run_id)  # as a fast-forward merge lands it
    second = start_run(repo, day=DAY)
    assert second.base == first.head
    earlier = {c.sha for c in phase_commits(repo, first.run_id, first.head)}
    own = phase_commits(repo, second.run_id, second.head)
    assert earlier and not earlier & {c.sha for c in own}
    review = review_run(repo, second.run_id)
    assert review.base == first.head and [c.sha for c in review.commits] == [c.sha for c in own]
    resumed = resume_run(repo, second.run_id, day=DAY)
    skipped = {p.phase for p in resumed.phases if p.reason == "committed earlier"}
    assert skipped == {c.phase for c in own}
    assert resumed.base == first.head


def test_main_moving_during_a_run_does_not_touch_the_branch(store: Path) -> None:
    repo = git_io.open_repo(store)
    report = start_run(repo, day=DAY, phases=["preflight", "dedup-merge"])
    from support.memory import memory_html

    external_commit(store, {"areas/inbox/new.html": memory_html("New", "A new fact.")})
    assert tip(store, "refs/heads/sleep/2026-12-04") == report.head
    assert "areas/inbox/new.html" not in tree_paths(store, report.head)


def test_an_agent_committing_to_main_mid_run_lands_on_main_only(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's commit between two phases (made inside a phase, so the timing is certain)
    lands on main with the work tree in step, and the branch never sees it."""
    from support.memory import memory_html

    original = phase_module.DETERMINISTIC["confidence-decay"]
    agent_commits: list[str] = []

    def decay_while_an_agent_writes(working, ctx):  # type: ignore[no-untyped-def]
        agent_commits.append(
            external_commit(store, {"areas/inbox/mid-run.html": memory_html("Mid", "Mid run.")})
        )
        return original(working, ctx)

    monkeypatch.setitem(phase_module.DETERMINISTIC, "confidence-decay", decay_while_an_agent_writes)
    report = start_run(git_io.open_repo(store), day=DAY)
    assert tip(store) == agent_commits[0]
    assert (store / "areas/inbox/mid-run.html").exists()
    assert git(store, "status", "--porcelain") == ""
    assert "areas/inbox/mid-run.html" not in tree_paths(store, report.head)
    later = [p for p in report.phases if p.ordinal > 7 and p.commit is not None]
    assert later, "phases after the agent's commit still committed on the branch"


def test_plan_on_a_store_with_nothing_to_curate_says_so(tmp_path: Path) -> None:
    from support.memory import memory_html
    from support.stores import make_store

    root = tmp_path / "tidy"
    make_store(
        root,
        {
            "resources/search/shards.html": memory_html(
                "Search shards",
                "The search cluster runs eight shards.",
                created="2026-11-30T09:00:00Z",
            )
        },
    )
    plan = plan_run(git_io.open_repo(root), day=DAY)
    assert plan.would_change is False and plan.phases["preflight"]["active"] == 1
