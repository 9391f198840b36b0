"""Landing a sleep run on main through the head gate and the retention gate, on real git stores:
a clean landing, a branch damaged by hand, a concurrent main change replayed or refused."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pygit2
import pytest
from support.git import external_commit, file_at, git, tip, tree_paths
from support.memory import memory_html
from support.sleep_store import RUN_DAY, SLEEP_FILES, make_sleep_store

from headd.head.gate import probe_query_for
from headd.head.search import SEED_EXACT, search_head
from headd.head.successors import resolve
from headd.head.version import load_head
from headd.memfile.archive import archive_stamps
from headd.memfile.head_edit import set_meta
from headd.sleep.catalog import COUNTS_TRAILER, PHASE_TRAILER, RUN_TRAILER
from headd.sleep.merge import merge_run
from headd.sleep.run import start_run
from headd.store import git_io

DAY = date.fromisoformat(RUN_DAY)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_sleep_store(root)
    return root


def _merge(repo: pygit2.Repository, run_id: str, **kwargs: object):  # type: ignore[no-untyped-def]
    return merge_run(repo, run_id, versions=lambda sha: load_head(repo, sha), today=DAY, **kwargs)


def test_merge_lands_and_base_titles_still_find_their_facts(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    run = start_run(repo, day=DAY)
    report = _merge(repo, run.run_id)
    assert report.merged, report.reason
    assert report.head_gate is not None and report.head_gate.passed
    assert report.retention_gate is not None and report.retention_gate.passed
    assert tip(store) == run.head and not report.replayed
    assert git(store, "status", "--porcelain") == ""
    assert (store / "resources/billing/billing-retries.html").exists()
    assert not (store / "areas/inbox/billing-retries.html").exists()
    before, after = load_head(repo, base), load_head(repo, tip(store))
    for record in before.indexes.active:
        if record.memory_type == "task" or record.path.endswith("fax-gateway.html"):
            continue
        if record.path.endswith("freeze-window.html"):
            continue  # declared evictions: resolve still reaches their archive path
        found = resolve(after, record.path).path if after.record(record.path) else None
        if found is None:
            moved = after.by_content_hash(record.content_hash)
            found = moved or resolve(after, record.path).path
        hits = search_head(after, probe_query_for(record), limit=10, mode=SEED_EXACT)
        assert found in [h.path for h in hits], record.path
    # folded and evicted paths resolve to a live successor or their archive path
    assert resolve(after, "areas/inbox/pool-size-again.html").path == "areas/inbox/pool-size.html"
    assert resolve(after, "resources/ops/freeze-window.html").path.startswith("archive/2026/")


def _damage(store: Path, run_head: str, repo: pygit2.Repository) -> str:
    """A commit on the run branch, with the run's trailers, that rewrites titles to nonsense and
    archives the most-used memory without declaring it."""
    used = "areas/inbox/pool-size.html"
    html = file_at(store, run_head, used) or ""
    from datetime import UTC, datetime

    writes = {
        f"archive/2026/{used}": archive_stamps(html, datetime(2026, 12, 4, tzinfo=UTC)),
    }
    for n, path in enumerate(sorted(tree_paths(store, run_head))):
        if path.startswith("resources/") and path.endswith(".html"):
            text = file_at(store, run_head, path) or ""
            record = load_head(repo, run_head).record(path)
            if record is not None and record.title:
                writes[path] = text.replace(
                    f"<title>{record.title}</title>", f"<title>zzq{n} qqz{n}</title>"
                )
    message = (
        "sleep(placement-triage): moved 0\n\n"
        f"{RUN_TRAILER}: sleep/2026-12-04\n{PHASE_TRAILER}: placement-triage\n"
        f'{COUNTS_TRAILER}: {{"moved":0}}\n'
    )
    who = git_io.signature(repo, datetime(2026, 12, 4, tzinfo=UTC))
    sha = git_io.write_commit(repo, run_head, writes, [used], message, who)
    assert git_io.swap_ref(repo, "refs/heads/sleep/2026-12-04", sha, run_head, "damage")
    return sha


def test_a_damaged_branch_is_refused_with_the_report(store: Path) -> None:
    repo = git_io.open_repo(store)
    main_before = tip(store)
    run = start_run(repo, day=DAY)
    _damage(store, run.head, repo)
    report = _merge(repo, run.run_id)
    assert not report.merged
    assert tip(store) == main_before
    retention = report.retention_gate
    assert retention is not None and not retention.passed
    assert "areas/inbox/pool-size.html" in retention.undeclared_evictions
    assert "areas/inbox/pool-size.html" in retention.used_evicted
    assert retention.fell, "renamed titles must make base-title probes fall"
    # the head gate probes by the landed titles and skips what the landing archives: it passes
    # this branch, which is why the retention gate exists
    assert report.head_gate is not None and report.head_gate.passed


def test_skip_gate_lands_the_damaged_branch_and_records_it(store: Path) -> None:
    repo = git_io.open_repo(store)
    run = start_run(repo, day=DAY)
    _damage(store, run.head, repo)
    report = _merge(repo, run.run_id, skip_gate=True)
    assert report.merged and report.skipped_gate and report.head_gate is None
    message = repo[tip(store)].peel(pygit2.Commit).message
    assert "Headd-Sleep-Skip-Gate: sleep/2026-12-04" in message


def test_a_main_change_elsewhere_is_replayed(store: Path) -> None:
    repo = git_io.open_repo(store)
    run = start_run(repo, day=DAY)
    external_commit(
        store, {"areas/inbox/meanwhile.html": memory_html("Meanwhile", "Agents wrote.")}
    )
    moved_main = tip(store)
    report = _merge(repo, run.run_id)
    assert report.merged and report.replayed, report.reason
    landed = tip(store)
    assert repo[landed].peel(pygit2.Commit).parents[0].id == pygit2.Oid(hex=moved_main)
    paths = tree_paths(store, landed)
    assert "areas/inbox/meanwhile.html" in paths
    assert "resources/billing/billing-retries.html" in paths
    assert "Headd-Replayed-From: " + run.head in repo[landed].peel(pygit2.Commit).message
    assert (store / "resources/billing/billing-retries.html").exists()


def test_a_main_change_to_a_path_the_run_changed_is_refused(store: Path) -> None:
    repo = git_io.open_repo(store)
    run = start_run(repo, day=DAY)
    path = "areas/inbox/billing-retries.html"
    external_commit(store, {path: set_meta(SLEEP_FILES[path], "memhtml-importance", "9")})
    main_before = tip(store)
    report = _merge(repo, run.run_id)
    assert not report.merged and report.conflicts == [path]
    assert tip(store) == main_before


def test_both_sides_exporting_usage_merge_their_rows(store: Path) -> None:
    from headd_plane.sidecar import STATE_SIDECAR_PATH, SidecarEntry, parse_sidecar
    from support.sleep_store import SIDECAR

    repo = git_io.open_repo(store)
    live = [
        SidecarEntry(
            "resources/search/shards-are-eight.html",
            5,
            0,
            0.0,
            "2026-12-03T10:00:00Z",
            None,
            "2026-12-03T10:00:00Z",
        )
    ]
    run = start_run(repo, day=DAY, live_usage=live)
    main_row = (
        '{"path":"resources/ops/runbook-index.html","accessCount":4,"reinforcementCount":0,'
        '"outcomeScore":0,"lastAccessedAt":"2026-12-02T10:00:00Z","lastReinforcedAt":null,'
        '"updatedAt":"2026-12-02T10:00:00Z"}\n'
    )
    (store / STATE_SIDECAR_PATH).write_text(SIDECAR + main_row, encoding="utf-8")
    git(store, "add", "-f", STATE_SIDECAR_PATH)  # ignored, as `headctl state export` commits it
    git(store, "commit", "-qm", "state export")
    report = _merge(repo, run.run_id)
    assert report.merged and report.replayed, (report.reason, report.conflicts)
    rows = parse_sidecar(file_at(store, tip(store), STATE_SIDECAR_PATH) or "").entries
    assert {
        "resources/search/shards-are-eight.html",
        "resources/ops/runbook-index.html",
        "areas/inbox/pool-size.html",
    } <= {row.path for row in rows}


def test_a_used_memory_folded_into_its_duplicate_is_not_an_eviction(store: Path) -> None:
    from headd_plane.sidecar import SidecarEntry

    from headd.head.retention_gate import gate_retention

    repo = git_io.open_repo(store)
    base = tip(store)
    run = start_run(repo, day=DAY, phases=["preflight", "dedup-merge"])
    folded = "areas/inbox/pool-size-again.html"
    used = SidecarEntry(folded, 9, 0, 0.0, "2026-12-03T10:00:00Z", None, "2026-12-03T10:00:00Z")
    report = gate_retention(
        load_head(repo, base),
        load_head(repo, run.head),
        declared=(),
        usage={folded: used},
        today=DAY,
    )
    assert report.passed and not report.used_evicted and not report.undeclared_evictions
    assert [r.how for r in report.results if r.path == folded] == ["moved"]


def test_a_discard_deletes_only_the_tip_it_read(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch moving between the read and the delete (a resume committing) is a
    WriteConflict, and the moved branch stands; main never moves."""
    from headd.errors import WriteConflict
    from headd.sleep import discard

    repo = git_io.open_repo(store)
    main_before = tip(store)
    run = start_run(repo, day=DAY)
    read_base = discard.run_base

    def resume_in_between(repo: pygit2.Repository, run_id: str, branch_sha: str) -> str:
        git(store, "update-ref", f"refs/heads/{run_id}", run.base)  # another writer's move
        return read_base(repo, run_id, branch_sha)

    monkeypatch.setattr(discard, "run_base", resume_in_between)
    with pytest.raises(WriteConflict):
        discard.discard_run(repo, run.run_id)
    assert git(store, "rev-parse", f"refs/heads/{run.run_id}") == run.base
    assert tip(store) == main_before
    monkeypatch.undo()
    answer = discard.discard_run(git_io.open_repo(store), run.run_id)
    assert answer.head == run.base and git(store, "branch", "--list", run.run_id) == ""
