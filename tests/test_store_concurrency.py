"""Sixteen sessions committing at once from threads: every put lands once or is answered.

Two setups: one manager on the checked-out branch (the daemon's shape: commits serialized by its
lock, the checkout following), and four managers on a branch nobody has checked out, so their
commits really race and only the ref compare-and-swap keeps them apart.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pygit2
import pytest
from support.git import file_at, git, tip
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.head.version import load_head
from headd.memfile.hashes import blob_sha_of
from headd.ops import Put
from headd.store import git_io
from headd.store.manager import SessionManager

SAME_CONTENT = memory_html("Twin", "Twins share exactly one claim.", **WRITTEN)


def plan() -> list[tuple[str, Put]]:
    """16 sessions: 6 disjoint, 4 on one path, 3 with one content, 3 frame-key rivals."""
    out: list[tuple[str, Put]] = []
    for i in range(6):
        out.append(
            (
                "disjoint",
                Put(path=f"areas/d/{i}.html", html=memory_html(f"D{i}", f"Fact {i}.", **WRITTEN)),
            )
        )
    for i in range(4):
        html = memory_html("Same path", f"Same path version {i} here.", **WRITTEN)
        out.append(("same-path", Put(path="areas/inbox/same.html", html=html)))
    for i in range(3):
        out.append(("same-content", Put(path=f"areas/twins/t{i}.html", html=SAME_CONTENT)))
    for i in range(3):
        html = memory_html(f"Pool {i}", f"The pool ceiling is {64 * (i + 1)}.", **WRITTEN)
        out.append(("rival", Put(path=f"areas/pool/p{i}.html", html=html)))
    return out


def run_all(managers: list[SessionManager], jobs: list[tuple[str, Put]]) -> list[dict]:
    sessions = []
    for n, (_, put) in enumerate(jobs):
        manager = managers[n % len(managers)]
        s = manager.open(id=f"job-{n}").session
        assert manager.apply(s, [put]).violations == ()
        sessions.append((manager, s))
    barrier = threading.Barrier(len(jobs))
    outcomes: list[dict] = [{} for _ in jobs]

    def worker(n: int) -> None:
        manager, s = sessions[n]
        barrier.wait()
        history = []
        for _ in range(60):
            result = manager.commit(s, f"job {n}")
            history.append(result.outcome)
            if result.outcome != "rebase-needed":
                break
            manager.rebase(s)
        outcomes[n] = {"history": history, "result": result}

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(not t.is_alive() for t in threads)
    return outcomes


def check(store: Path, ref: str, base: str, jobs, outcomes) -> None:
    final = tip(store, ref)
    landed = [o["result"] for o in outcomes if o["result"].outcome == "committed"]
    # A linear history: one commit per landed session, each on the one before it.
    chain = git(store, "rev-list", "--first-parent", f"{base}..{final}").splitlines()
    assert sorted(chain) == sorted(r.sha for r in landed)
    assert git(store, "rev-list", "--merges", f"{base}..{final}") == ""
    counts = Counter()
    for (kind, put), outcome in zip(jobs, outcomes, strict=True):
        result = outcome["result"]
        assert result.outcome in ("committed", "refused"), outcome["history"]
        counts[(kind, result.outcome)] += 1
        if result.outcome == "committed":
            assert result.paths == (put.path,)
        else:
            expected = {"same-path": "claim-edit", "same-content": "duplicate"}[kind]
            assert [v.kind for v in result.violations] == [expected]
    assert counts[("disjoint", "committed")] == 6
    assert counts[("same-path", "committed")] == 1 and counts[("same-path", "refused")] == 3
    assert counts[("same-content", "committed")] == 1
    assert counts[("same-content", "refused")] == 2
    assert counts[("rival", "committed")] == 3
    version = load_head(pygit2.Repository(str(store)), final)
    for kind, put in jobs:
        if kind == "disjoint":
            assert file_at(store, final, put.path) == put.html
    twins = [p for p in version.paths() if p.startswith("areas/twins/")]
    assert len(twins) == 1
    same = version.record("areas/inbox/same.html")
    assert (
        same is not None
        and sum(
            1
            for kind, put in jobs
            if kind == "same-path" and blob_sha_of(put.html) == same.blob_sha
        )
        == 1
    )
    # Frame-key rivals all live; each landed later links every rival landed before it.
    rivals = version.by_frame_key("the pool ceiling is")
    assert rivals == ["areas/pool/p0.html", "areas/pool/p1.html", "areas/pool/p2.html"]
    links = sorted(
        len([x for x in version.record(p).links if x.rel == "contradicts"])  # type: ignore[union-attr]
        for p in rivals
    )
    assert links == [0, 1, 2]


@pytest.mark.slow
def test_sixteen_sessions_one_manager_checked_out(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    base = tip(store)
    manager = SessionManager(store, clock=TickingClock())
    jobs = plan()
    outcomes = run_all([manager], jobs)
    check(store, "refs/heads/main", base, jobs, outcomes)
    # rebase="auto": a commit queued behind another is rebased inside the lock, so nothing
    # without a real conflict is ever sent back.
    for (kind, _), outcome in zip(jobs, outcomes, strict=True):
        if kind in ("disjoint", "rival"):
            assert outcome["history"] == ["committed"], (kind, outcome["history"])
    assert git(store, "status", "--porcelain") == ""
    assert all(s.pending is None for s in manager.list().sessions)


@pytest.mark.slow
def test_sixteen_sessions_four_managers_racing_on_the_ref(tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    git(store, "branch", "shared")
    base = tip(store)
    managers = [SessionManager(store, ref="shared", clock=TickingClock()) for _ in range(4)]
    swaps = Counter()
    real_swap = git_io.swap_ref

    def counted_swap(*args, **kwargs) -> bool:
        won = real_swap(*args, **kwargs)
        swaps[won] += 1
        return won

    monkeypatch.setattr(git_io, "swap_ref", counted_swap)
    for manager in managers:
        manager.before_swap = lambda: time.sleep(0.005)  # widen the window between read and swap
    jobs = plan()
    outcomes = run_all(managers, jobs)
    check(store, "refs/heads/shared", base, jobs, outcomes)
    assert tip(store) == base  # main untouched
    assert swaps[True] == sum(1 for o in outcomes if o["result"].outcome == "committed")
    assert swaps[False] >= 1  # the compare-and-swap really refused someone
