"""The commit path on real repositories: every outcome, the checkout, the ref race.

Mutation notes (each applied once, the named test seen red, then reverted):
- step 1: ``if verdict.violations`` -> ``if False`` -> ``test_refused_writes_nothing``.
- step 2: ``tip != base`` -> ``False`` -> ``test_a_moved_branch_needs_a_rebase``.
- step 3: drop the ``add_link`` call -> ``test_a_frame_key_rival_gets_a_contradicts_link``.
- step 5: skip ``dirty_paths`` -> ``test_a_dirty_touched_path_refuses_and_moves_nothing``.
- step 6: ignore the ``swap_ref`` answer -> ``test_losing_the_ref_race_rolls_back``.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from support.git import file_at, git, tip, tree_paths
from support.memory import memory_html
from support.stores import ALPHA, CAPITAL, SEED_FILES, WRITTEN, Store, TickingClock, make_store

from headd.errors import InvalidParams
from headd.memfile.head_edit import add_entity, add_link
from headd.ops import Archive, Label, LinkOp, Move, Put, Write
from headd.store.commit import commit_message
from headd.store.manager import SessionManager
from headd.store.ports import record_text

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)
LINK_ALPHA = LinkOp(
    path="areas/inbox/alpha.html", rel="relates_to", href="/areas/inbox/capital.html"
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store


@pytest.fixture
def manager(store: Path) -> SessionManager:
    return SessionManager(store, clock=TickingClock())


def session_with(manager: SessionManager, *ops) -> str:
    s = manager.open().session
    result = manager.apply(s, list(ops))
    assert result.violations == (), result.violations
    return s


def test_commit_message_form() -> None:
    assert commit_message("  add\ntwo  facts ", "s1", 2) == (
        "memhtml(session): add\n\ntwo  facts\n\nMemhtml-Session: s1\n"
    )
    assert commit_message(None, "s1", 1) == "memhtml(session): 1 path\n\nMemhtml-Session: s1\n"
    long = commit_message("x" * 100, "s\nForged: yes", 3)
    assert long.splitlines()[0] == "memhtml(session): " + "x" * 71 + "…"
    assert long.splitlines()[2] == "x" * 100  # the whole line kept in the body
    assert long.endswith("Memhtml-Session: s Forged: yes\n")


def test_a_put_lands_with_trailer_author_and_checkout(manager: SessionManager, store: Path) -> None:
    base = tip(store)
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    result = manager.commit(s, "add beta")
    assert result.outcome == "committed"
    assert result.paths == ("areas/inbox/beta.html",) and result.contradictions == ()
    assert result.worktree_synced is True
    assert tip(store) == result.sha
    assert git(store, "rev-parse", f"{result.sha}^") == base
    assert file_at(store, result.sha, "areas/inbox/beta.html") == BETA
    assert git(store, "log", "-1", "--format=%s%n%an <%ae>%n%(trailers:key=Memhtml-Session)") == (
        f"memhtml(session): add beta\nStore Owner <owner@example.org>\nMemhtml-Session: {s}"
    )
    # The checkout followed: the file is there and git sees nothing to commit.
    assert (store / "areas/inbox/beta.html").read_text() == BETA
    assert git(store, "status", "--porcelain") == ""
    info = manager.info(s)
    assert info.base == result.sha and info.ops == 0
    # The log replays to the same session; the landing is compacted by the next event logged
    # (not by the commit, which would pay two more fsyncs for it), to the two lines that fold
    # to the same session plus that event, in this process or after a restart.
    log_file = store / ".memhtml/headd/sessions" / f"{s}.jsonl"
    assert len(log_file.read_text().splitlines()) == 4
    assert SessionManager(store, clock=TickingClock()).info(s) == info
    # A second commit with nothing pending is answered with the session's base.
    again = manager.commit(s)
    assert again.outcome == "committed" and again.sha == result.sha and again.paths == ()
    gamma = memory_html("Gamma", "Gamma is the third letter of the Greek alphabet.", **WRITTEN)
    long_log = log_file.read_text()
    for restart in (False, True):
        live = manager
        if restart:  # the same log, found by a restarted process
            log_file.write_text(long_log)
            live = SessionManager(store, clock=TickingClock())
        assert live.apply(s, [Put(path="areas/inbox/gamma.html", html=gamma)]).violations == ()
        events = [line.split(",")[0] for line in log_file.read_text().splitlines()]
        assert events == ['{"ev":"open"', '{"ev":"settled"', '{"ev":"apply"']
        replayed = SessionManager(store, clock=TickingClock()).info(s)
        assert (replayed.base, replayed.ops) == (result.sha, 1)
        assert replayed.last_settlement == info.last_settlement


def test_refused_writes_nothing(manager: SessionManager, store: Path) -> None:
    base = tip(store)
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    # The file lands on the branch by hand, then the session is rebased onto it.
    Store.open(store).commit({"areas/inbox/beta.html": BETA})
    manager.rebase(s)
    moved = tip(store)
    result = manager.commit(s)
    assert result.outcome == "refused"
    assert [(v.kind, v.path, v.existing) for v in result.violations or ()] == [
        ("duplicate", "areas/inbox/beta.html", "areas/inbox/beta.html")
    ]
    assert tip(store) == moved != base
    assert manager.info(s).ops == 1  # kept for the caller to decide


def test_a_moved_branch_needs_a_rebase(manager: SessionManager, store: Path) -> None:
    """With ``rebase="never"``, disjoint or not, a moved branch answers rebase-needed; a rebase
    then lands it."""
    s = session_with(
        manager,
        Put(path="areas/inbox/beta.html", html=BETA),
        LinkOp(path="areas/inbox/alpha.html", rel="relates_to", href="/areas/inbox/capital.html"),
    )
    t = session_with(
        manager, Put(path="areas/inbox/other.html", html=memory_html("O", "Other fact.", **WRITTEN))
    )
    Store.open(store).commit({"areas/inbox/alpha.html": ALPHA.replace("</title>", " </title>")})
    moved = tip(store)
    blocked = manager.commit(s, rebase="never")
    assert blocked.outcome == "rebase-needed"
    assert blocked.overlapping == ("areas/inbox/alpha.html",) and blocked.sha == moved
    disjoint = manager.commit(t, rebase="never")
    assert disjoint.outcome == "rebase-needed" and disjoint.overlapping == ()
    assert tip(store) == moved
    assert manager.rebase(t).violations == ()
    landed = manager.commit(t)
    assert landed.outcome == "committed"
    assert git(store, "rev-parse", f"{landed.sha}^") == moved
    manager.rebase(s)
    assert manager.commit(s).outcome == "committed"
    linked = file_at(store, tip(store), "areas/inbox/alpha.html") or ""
    assert '<link rel="memhtml-relates-to" href="/areas/inbox/capital.html">' in linked
    assert "Alpha </title>" in linked  # the hand edit is kept under the link


def test_auto_rebase_lands_a_disjoint_session_on_the_moved_tip(
    manager: SessionManager, store: Path
) -> None:
    """The default, ``rebase="auto"``: a session whose base went stale is judged at the tip
    inside the commit lock and lands on it, no client retry."""
    base = tip(store)
    t = session_with(
        manager, Put(path="areas/inbox/other.html", html=memory_html("O", "Other fact.", **WRITTEN))
    )
    Store.open(store).commit({"areas/inbox/alpha.html": ALPHA.replace("</title>", " </title>")})
    moved = tip(store)
    landed = manager.commit(t)
    assert landed.outcome == "committed" and landed.paths == ("areas/inbox/other.html",)
    assert git(store, "rev-parse", f"{landed.sha}^") == moved != base
    assert "Alpha </title>" in (file_at(store, landed.sha, "areas/inbox/alpha.html") or "")
    assert manager.info(t).base == landed.sha and manager.info(t).ops == 0
    assert git(store, "status", "--porcelain") == ""


def test_auto_rebase_answers_rebase_needed_for_a_touched_path_and_moves_nothing(
    manager: SessionManager, store: Path
) -> None:
    base = tip(store)
    s = session_with(manager, LINK_ALPHA)
    Store.open(store).commit({"areas/inbox/alpha.html": ALPHA.replace("</title>", " </title>")})
    moved = tip(store)
    blocked = manager.commit(s)
    assert blocked.outcome == "rebase-needed" and blocked.sha == moved
    assert blocked.overlapping == ("areas/inbox/alpha.html",)
    assert manager.info(s).base == base and manager.info(s).ops == 1, "the session stays put"
    assert tip(store) == moved


def test_auto_rebase_answers_rebase_needed_for_a_duplicate_that_landed_meanwhile(
    manager: SessionManager, store: Path
) -> None:
    """Same content at another path: no path overlaps, the judgement at the tip finds it."""
    base = tip(store)
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    Store.open(store).commit({"areas/inbox/beta-twin.html": BETA})
    moved = tip(store)
    blocked = manager.commit(s)
    assert blocked.outcome == "rebase-needed" and blocked.sha == moved
    assert blocked.overlapping == ()
    assert [(v.kind, v.existing) for v in blocked.violations or ()] == [
        ("duplicate", "areas/inbox/beta-twin.html")
    ]
    assert manager.info(s).base == base
    assert tip(store) == moved


def test_auto_rebase_links_a_rival_that_landed_meanwhile(
    manager: SessionManager, store: Path
) -> None:
    """A frame-key rival is no conflict: the session lands on the tip with a contradicts link
    to the rival it could not have seen on its base."""
    s = session_with(
        manager,
        Put(
            path="areas/inbox/pool-b.html",
            html=memory_html("Pool B", "The pool ceiling is 128.", **WRITTEN),
        ),
    )
    Store.open(store).commit(
        {"areas/inbox/pool-a.html": memory_html("Pool A", "The pool ceiling is 64.", **WRITTEN)}
    )
    landed = manager.commit(s)
    assert landed.outcome == "committed"
    assert [(c.path, c.against) for c in landed.contradictions or ()] == [
        ("areas/inbox/pool-b.html", "areas/inbox/pool-a.html")
    ]
    written = file_at(store, landed.sha, "areas/inbox/pool-b.html") or ""
    assert 'href="/areas/inbox/pool-a.html"' in written


def test_auto_rebase_drops_a_write_whose_content_landed_meanwhile(
    manager: SessionManager, store: Path
) -> None:
    s = manager.open().session
    write = Write(title="Gamma", type="semantic", claim="Gamma is the third letter.")
    applied = manager.apply(s, [write])
    assert applied.violations == ()
    view = manager.view(s)
    record = view.record(applied.paths[0]) or pytest.fail("no record")
    html = record_text(view, record, manager.read_blob)
    Store.open(store).commit({"areas/inbox/gamma-elsewhere.html": html})
    moved = tip(store)
    result = manager.commit(s)
    assert result.outcome == "committed" and result.sha == moved and result.paths == ()
    assert [(d.op, d.existing) for d in result.deduped or ()] == [
        (0, "areas/inbox/gamma-elsewhere.html")
    ]
    assert manager.info(s).ops == 0


def test_commit_refuses_an_unknown_rebase_mode(manager: SessionManager) -> None:
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    with pytest.raises(InvalidParams):
        manager.commit(s, rebase="sometimes")


def test_same_path_from_two_sessions(manager: SessionManager, store: Path) -> None:
    shared = memory_html("Shared", "Shared claim one.", **WRITTEN)
    a = session_with(manager, Put(path="areas/inbox/shared.html", html=shared))
    b = session_with(
        manager, Put(path="areas/inbox/shared.html", html=memory_html("Shared", "Two.", **WRITTEN))
    )
    c = session_with(manager, Put(path="areas/inbox/shared.html", html=shared))
    first = manager.commit(a)
    assert first.outcome == "committed"
    blocked = manager.commit(b)
    assert blocked.outcome == "rebase-needed"
    assert blocked.overlapping == ("areas/inbox/shared.html",)
    assert [v.kind for v in manager.rebase(b).violations] == ["claim-edit"]
    assert [v.kind for v in manager.commit(b).violations or ()] == ["claim-edit"]
    manager.rebase(c)
    refused = manager.commit(c)
    assert [(v.kind, v.existing) for v in refused.violations or ()] == [
        ("duplicate", "areas/inbox/shared.html")
    ]
    assert tip(store) == first.sha


def test_a_frame_key_rival_gets_a_contradicts_link(manager: SessionManager, store: Path) -> None:
    rival = memory_html("Capital, revised", "The capital of India is Mumbai.", **WRITTEN)
    s = session_with(manager, Put(path="areas/inbox/capital-2.html", html=rival))
    result = manager.commit(s, "rival")
    assert result.outcome == "committed"
    assert [(c.path, c.against) for c in result.contradictions or ()] == [
        ("areas/inbox/capital-2.html", "areas/inbox/capital.html")
    ]
    assert {"areas/inbox/capital.html", "areas/inbox/capital-2.html"} <= tree_paths(
        store, result.sha or ""
    )
    written = file_at(store, result.sha or "", "areas/inbox/capital-2.html") or ""
    assert '<link rel="memhtml-contradicts" href="/areas/inbox/capital.html">' in written
    assert file_at(store, result.sha or "", "areas/inbox/capital.html") == CAPITAL
    # Both stay live: the new version holds both as active with one frame key.
    from headd.head.version import load_head

    version = load_head(pygit2.Repository(str(store)), result.sha or "")
    assert version.by_frame_key("the capital of india is") == [
        "areas/inbox/capital-2.html",
        "areas/inbox/capital.html",
    ]
    new = version.record("areas/inbox/capital-2.html")
    assert (
        new is not None
        and new.content_hash == manager.view(s).record("areas/inbox/capital-2.html").content_hash
    )  # type: ignore[union-attr]


def test_archive_moves_through_the_tree_with_stamps(manager: SessionManager, store: Path) -> None:
    s = session_with(manager, Archive(path="areas/inbox/alpha.html"))
    result = manager.commit(s, "archive alpha")
    assert result.paths == ("archive/2026/areas/inbox/alpha.html", "areas/inbox/alpha.html")
    paths = tree_paths(store, result.sha or "")
    assert "areas/inbox/alpha.html" not in paths
    archived = file_at(store, result.sha or "", "archive/2026/areas/inbox/alpha.html") or ""
    assert '<meta name="memhtml-status" content="archived">' in archived
    assert '<meta name="memhtml-archived" content="2026-11-30T09:00:' in archived
    rename = git(store, "diff", "--name-status", "-M", f"{result.sha}^", result.sha or "")
    assert rename.startswith("R0") and rename.endswith(
        "areas/inbox/alpha.html\tarchive/2026/areas/inbox/alpha.html"
    )
    assert not (store / "areas/inbox/alpha.html").exists()
    assert git(store, "status", "--porcelain") == ""


def test_a_dirty_touched_path_refuses_and_moves_nothing(
    manager: SessionManager, store: Path
) -> None:
    base = tip(store)
    s = session_with(manager, LINK_ALPHA)
    (store / "areas/inbox/alpha.html").write_text(ALPHA + "<!-- local -->\n")
    result = manager.commit(s)
    assert result.outcome == "refused"
    assert [(v.kind, v.paths) for v in result.violations or ()] == [
        ("worktree-dirty", ("areas/inbox/alpha.html",))
    ]
    assert tip(store) == base
    assert (store / "areas/inbox/alpha.html").read_text().endswith("<!-- local -->\n")
    assert manager.info(s).ops == 1 and manager.info(s).pending is None


def test_an_unrelated_edit_survives_the_checkout_following(
    manager: SessionManager, store: Path
) -> None:
    (store / "areas/inbox/capital.html").write_text(CAPITAL + "<!-- mine -->\n")
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    result = manager.commit(s)
    assert result.outcome == "committed" and result.worktree_synced
    assert git(store, "status", "--porcelain") == "M areas/inbox/capital.html"
    assert (store / "areas/inbox/beta.html").read_text() == BETA


def test_a_branch_not_checked_out_leaves_the_checkout_alone(store: Path) -> None:
    git(store, "branch", "memory")
    manager = SessionManager(store, ref="memory", clock=TickingClock())
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    result = manager.commit(s)
    assert result.outcome == "committed" and result.worktree_synced is False
    assert tip(store, "refs/heads/memory") == result.sha
    assert not (store / "areas/inbox/beta.html").exists()
    assert git(store, "status", "--porcelain") == ""


def test_losing_the_ref_race_rolls_back(manager: SessionManager, store: Path) -> None:
    """Someone moves the branch between our judgement and our swap: the CAS sees it."""
    base = tip(store)
    intruder = git(store, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "intruder")

    def intrude() -> None:
        git(store, "update-ref", "refs/heads/main", intruder, base)

    manager.before_swap = intrude
    s = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    result = manager.commit(s)
    assert result.outcome == "rebase-needed" and result.sha == intruder
    assert result.overlapping == ()
    assert tip(store) == intruder
    # The checkout had followed before the swap; it is rolled back, the file is not left behind.
    assert not (store / "areas/inbox/beta.html").exists()
    git(store, "reset", "-q")  # HEAD moved under the index by the intruder's update-ref
    assert git(store, "status", "--porcelain") == ""
    info = manager.info(s)
    assert info.ops == 1 and info.pending is None and info.base == base
    manager.before_swap = None
    manager.rebase(s)
    assert manager.commit(s).outcome == "committed"


def test_commit_on_a_clone_of_the_anchor_corpus(tmp_path: Path, anchor_store: Path) -> None:
    clone = tmp_path / "anchor"
    git(tmp_path, "clone", "-q", str(anchor_store), str(clone))
    git(clone, "config", "user.name", "Anchor")
    git(clone, "config", "user.email", "anchor@example.org")
    manager = SessionManager(clone, clock=TickingClock())
    view = manager.view(manager.open(id="probe").session)
    some = next(
        p for p in sorted(view.paths()) if p.startswith("areas/") and not view.record(p).archived
    )  # type: ignore[attr-defined, union-attr]
    s = session_with(
        manager,
        Put(
            path="areas/inbox/headd-probe.html",
            html=memory_html("Headd probe", "Headd can commit here.", **WRITTEN),
        ),
        LinkOp(path="areas/inbox/headd-probe.html", rel="relates_to", href="/" + some),
    )
    result = manager.commit(s, "probe")
    assert result.outcome == "committed"
    assert git(clone, "status", "--porcelain") == ""
    from headd.head.version import load_head

    landed = load_head(pygit2.Repository(str(clone)), result.sha or "")
    assert landed.record("areas/inbox/headd-probe.html") is not None
    assert landed.size == view.size + 1  # type: ignore[attr-defined]


def test_the_judgement_kept_from_apply_lands_what_a_fresh_one_would(tmp_path: Path) -> None:
    """``commit`` reuses apply's judgement; a restarted manager judges afresh: same tree."""
    ops = [
        Put(path="areas/inbox/beta.html", html=BETA),
        Put(
            path="areas/inbox/capital-2.html",
            html=memory_html("C2", "The capital of India is Pune.", **WRITTEN),
        ),
        LinkOp(path="areas/inbox/beta.html", rel="supports", href="/areas/inbox/alpha.html"),
        Archive(path="areas/inbox/alpha.html"),
    ]
    trees = []
    for fresh in (False, True):
        store = tmp_path / f"store-{fresh}"
        make_store(store, SEED_FILES, ignore=None)
        manager = SessionManager(store, clock=TickingClock())
        s = manager.open(id="same").session
        for op in ops:
            assert manager.apply(s, [op]).violations == ()
        if fresh:
            manager = SessionManager(store, clock=TickingClock())
            assert manager._judged(manager._state(s)) is None
        else:
            assert manager._judged(manager._state(s)) is not None
        result = manager.commit(s)
        assert result.outcome == "committed"
        trees.append(git(store, "rev-parse", f"{result.sha}^{{tree}}"))
    assert trees[0] == trees[1]


def test_commit_judges_again_when_it_holds_no_judgement(store: Path) -> None:
    """A restarted manager with a lower cap refuses at commit what apply let through."""
    first = SessionManager(store, clock=TickingClock())
    s = first.open().session
    puts = [
        Put(path=f"areas/p{i}.html", html=memory_html(f"P{i}", f"Fact number {i}.", **WRITTEN))
        for i in range(3)
    ]
    assert first.apply(s, puts).ops == 3
    base = tip(store)
    strict = SessionManager(store, clock=TickingClock(), cap=2)
    result = strict.commit(s)
    assert result.outcome == "refused"
    assert [(v.kind, v.count, v.cap) for v in result.violations or ()] == [("batch-cap", 3, 2)]
    assert tip(store) == base


def test_index_changes_made_between_commits_are_kept(manager: SessionManager, store: Path) -> None:
    """The manager keeps its repository (and so its parsed index) open across commits; a
    person's staging between two commits is read back in, not overwritten by a stale copy, and a
    touched path they staged is seen as dirty."""
    first = session_with(manager, Put(path="areas/inbox/beta.html", html=BETA))
    assert manager.commit(first).outcome == "committed"
    (store / "areas/inbox/staged.html").write_text("staged by hand\n")
    git(store, "add", "areas/inbox/staged.html")
    gamma = memory_html("Gamma", "Gamma is the third letter of the Greek alphabet.", **WRITTEN)
    second = session_with(manager, Put(path="areas/inbox/gamma.html", html=gamma))
    assert manager.commit(second).outcome == "committed"
    assert git(store, "status", "--porcelain") == "A  areas/inbox/staged.html"
    git(store, "rm", "-q", "--cached", "areas/inbox/beta.html")
    third = session_with(
        manager,
        LinkOp(path="areas/inbox/beta.html", rel="relates_to", href="/areas/inbox/alpha.html"),
    )
    result = manager.commit(third)
    assert result.outcome == "refused"
    assert [(v.kind, v.paths) for v in result.violations or ()] == [
        ("worktree-dirty", ("areas/inbox/beta.html",))
    ]


def test_splices_and_moves_of_committed_files_write_their_bytes_from_git(
    manager: SessionManager, store: Path
) -> None:
    # A record keeps no file text: the link, the label and the move read each committed file
    # from git by its blob id, and the commit writes exactly that text with the one splice.
    s = session_with(
        manager,
        LINK_ALPHA,
        Label(path="areas/inbox/capital.html", entity="place:india"),
        Move(path="areas/inbox/capital.html", to="resources/geo/capital.html"),
    )
    result = manager.commit(s, "splice and move")
    assert result.outcome == "committed"
    linked = add_link(ALPHA, "relates_to", "/areas/inbox/capital.html")
    assert file_at(store, result.sha or "", "areas/inbox/alpha.html") == linked
    moved = file_at(store, result.sha or "", "resources/geo/capital.html")
    assert moved == add_entity(CAPITAL, "place:india")
    assert file_at(store, result.sha or "", "areas/inbox/capital.html") is None


def test_a_session_pays_one_fsync_its_intents_and_a_lost_settled_line_recovers(
    manager: SessionManager, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Open, apply and commit pay one fsync, the intent's (it flushes the lines before it); the
    ``Settled`` after it is written without one (a restart re-derives it from git); cut from
    the log, as a power cut could, the session comes back on its commit."""
    import os

    synced: list[int] = []
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting)
    s = session_with(manager, Put(path="areas/fsync.html", html=memory_html("Fsync fact")))
    assert synced == []
    result = manager.commit(s, "one fsync")
    monkeypatch.undo()
    assert result.outcome == "committed"
    assert len(synced) == 1
    log_path = manager.log.path_of(s)
    lines = log_path.read_bytes().splitlines(keepends=True)
    assert b'"ev":"settled"' in lines[-1] and b'"ev":"intent"' in lines[-2]
    log_path.write_bytes(b"".join(lines[:-1]))
    again = SessionManager(store, clock=TickingClock())
    assert again.info(s).base == result.sha == tip(store)
    assert again.info(s).ops == 0
