"""Following a git remote, one round at a time: two clones of one bare repository on this machine.

Every test drives real repositories through the real ``git`` (fetch and push over a local path, as
over ``file://``) and the head core; nothing is faked. Guards seen failing when broken:

- ``replay``'s "the tip already holds ours" skip removed -> ``test_a_rescue_is_replayed_...``
  calls the replayed path a conflict.
- ``rescue.keep`` not called before the replay -> ``test_a_refused_push_keeps_the_local_commit_...``
  finds no rescue ref.
- the sidecar merge replaced by "remote wins" -> ``test_the_state_sidecar_merges_by_max``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from support.git import external_commit, git
from support.memory import memory_html
from support.remote import fsck, sync_of
from support.stores import make_store

from headd.head.version import load_head
from headd.memfile.sidecar import STATE_SIDECAR_PATH, parse_sidecar
from headd.remote import rescue, transport
from headd.remote.replay import merge_sidecar_entries


@pytest.fixture(params=["path", "file-url"])
def hub(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path, Path]:
    """(bare hub, clone a, clone b), both clones at the seed commit with ``origin`` = the hub,
    named by its path or by a ``file://`` URL (git's two transports for a shared disk)."""
    a = tmp_path / "a"
    make_store(a)
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(a), str(hub)], check=True)
    url = str(hub) if request.param == "path" else hub.as_uri()
    git(a, "remote", "add", "origin", url)
    git(a, "fetch", "-q", "origin")
    b = tmp_path / "b"
    subprocess.run(["git", "clone", "-q", url, str(b)], check=True)
    return hub, a, b


def memory(slug: str, claim: str, **kw: object) -> dict[str, str]:
    return {f"areas/inbox/{slug}.html": memory_html(slug.replace("-", " "), claim, **kw)}  # type: ignore[arg-type]


def commit_sidecar(store: Path, text: str) -> None:
    """Commit the state sidecar (the test stores ignore ``.memhtml/``, so it is added by force,
    as ``headctl state export`` leaves it for a person to commit)."""
    target = store / STATE_SIDECAR_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(store, "add", "-f", "--", STATE_SIDECAR_PATH)
    git(store, "commit", "-q", "-m", "state")


def tip(store: Path, ref: str = "main") -> str:
    return git(store, "rev-parse", ref)


def tree_paths(store: Path, ref: str = "main") -> set[str]:
    return set(git(store, "ls-tree", "-r", "--name-only", ref).splitlines())


def assert_linear(store: Path, ref: str = "main") -> None:
    for line in git(store, "rev-list", "--parents", ref).splitlines():
        assert len(line.split()) <= 2, f"a merge commit: {line}"


def test_behind_moves_the_branch_and_the_checkout_forward(hub: tuple[Path, Path, Path]) -> None:
    _, a, b = hub
    external_commit(a, memory("alpha-fact", "Alpha keeps one fact."))
    assert sync_of(a).round().action == "pushed"
    report = sync_of(b).round()
    assert report.action == "fast-forward"
    assert tip(b) == tip(a)
    assert (b / "areas/inbox/alpha-fact.html").read_text() == (
        a / "areas/inbox/alpha-fact.html"
    ).read_text()
    assert git(b, "status", "--porcelain") == ""


def test_both_moved_replays_ours_onto_theirs_without_a_merge(hub: tuple[Path, Path, Path]) -> None:
    remote, a, b = hub
    external_commit(a, memory("alpha-fact", "Alpha keeps one fact."), "a1")
    external_commit(b, memory("bravo-fact", "Bravo keeps another fact."), "b1")
    assert sync_of(a).round().action == "pushed"
    report = sync_of(b).round()
    assert report.action == "replayed" and report.replayed == 1
    assert tip(b) == git(remote, "rev-parse", "main")
    assert sync_of(a).round().action == "fast-forward"
    assert tip(a) == tip(b)
    assert {"areas/inbox/alpha-fact.html", "areas/inbox/bravo-fact.html"} <= tree_paths(b)
    message = git(b, "log", "-1", "--format=%B", "main")
    assert message.startswith("b1") and "Headd-Replayed-From: " in message
    assert_linear(remote)
    fsck(remote)
    assert rescue.rescues(pygit2.Repository(str(b))) == {}
    assert git(b, "status", "--porcelain") == ""


def test_the_same_fact_on_both_sides_lands_once(hub: tuple[Path, Path, Path]) -> None:
    _, a, b = hub
    html = memory_html("Cache warms nightly", "The cache warms every night at two.")
    external_commit(a, {"areas/inbox/cache-warms.html": html})
    external_commit(b, {"resources/ops/cache-warms-nightly.html": html})
    sync_of(a).round()
    report = sync_of(b).round()
    assert report.deduped == 1
    paths = tree_paths(b)
    assert "areas/inbox/cache-warms.html" in paths
    assert "resources/ops/cache-warms-nightly.html" not in paths


def test_a_frame_key_rival_gets_its_contradicts_link(hub: tuple[Path, Path, Path]) -> None:
    _, a, b = hub
    external_commit(a, memory("capital", "The capital of Atlantis is Poseidonia."))
    external_commit(b, memory("capital-revised", "The capital of Atlantis is Ys."))
    sync_of(a).round()
    sync_of(b).round()
    revised = (b / "areas/inbox/capital-revised.html").read_text()
    assert '<link rel="memhtml-contradicts" href="/areas/inbox/capital.html">' in revised
    version = load_head(pygit2.Repository(str(b)), tip(b))
    record = version.record("areas/inbox/capital-revised.html")
    original = memory_html("capital revised", "The capital of Atlantis is Ys.")
    from headd.memfile.parse import parse_memory

    assert record is not None
    assert record.content_hash == parse_memory("x/y.html", original).content_hash


def test_a_path_both_sides_changed_keeps_both_versions(hub: tuple[Path, Path, Path]) -> None:
    remote, a, b = hub
    external_commit(a, memory("disputed", "The deploy window opens on Monday."))
    external_commit(b, memory("disputed", "The deploy window opens on Friday."))
    sync_of(a).round()
    theirs = (a / "areas/inbox/disputed.html").read_text()
    b_sync = sync_of(b)
    report = b_sync.round()
    assert report.new_conflicts == ("areas/inbox/disputed.html",)
    assert (b / "areas/inbox/disputed.html").read_text() == theirs
    assert tip(b) == git(remote, "rev-parse", "main")
    [conflict] = b_sync.status().conflicts
    kept = git(b, "show", f"{conflict.ref}:areas/inbox/disputed.html")
    assert "Friday" in kept
    assert b_sync.resolve("areas/inbox/disputed.html")
    assert b_sync.status().conflicts == ()
    fsck(remote)


def test_the_state_sidecar_merges_by_max(hub: tuple[Path, Path, Path]) -> None:
    _, a, b = hub
    row = (
        '{{"path":"areas/inbox/x.html","accessCount":{n},"reinforcementCount":{r},'
        '"outcomeScore":0,"lastAccessedAt":"{t}","lastReinforcedAt":null,'
        '"updatedAt":"{t}"}}\n'
    )
    base = row.format(n=1, r=0, t="2026-11-01T00:00:00.000Z")
    commit_sidecar(a, base)
    sync_of(a).round()
    sync_of(b).round()
    commit_sidecar(a, row.format(n=5, r=0, t="2026-11-02T00:00:00.000Z"))
    commit_sidecar(b, row.format(n=2, r=3, t="2026-11-03T00:00:00.000Z"))
    sync_of(a).round()
    assert sync_of(b).round().new_conflicts == ()
    [entry] = parse_sidecar((b / STATE_SIDECAR_PATH).read_text()).entries
    assert (entry.accessCount, entry.reinforcementCount) == (5, 3)
    assert entry.lastAccessedAt == "2026-11-03T00:00:00Z"  # memhtml writes whole seconds


def test_merge_sidecar_keeps_rows_only_one_side_has() -> None:
    one = '{"path":"a.html","accessCount":1,"reinforcementCount":0,"outcomeScore":0,"lastAccessedAt":null,"lastReinforcedAt":null,"updatedAt":"2026-11-01T00:00:00.000Z"}\n'
    two = one.replace("a.html", "b.html")
    merged = parse_sidecar(merge_sidecar_entries(one, two)).entries
    assert [e.path for e in merged] == ["a.html", "b.html"]


def test_a_hook_refusal_is_permanent_and_loses_nothing(hub: tuple[Path, Path, Path]) -> None:
    remote, a, _ = hub
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no writes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    local = external_commit(a, memory("alpha-fact", "Alpha keeps one fact."))
    a_sync = sync_of(a)
    report = a_sync.round()
    assert report.action == "failed" and report.error is not None
    assert report.error.kind == "hook" and report.error.transient is False
    assert report.attempts == 1  # a permanent refusal is not retried in a loop
    assert a_sync.status().last_error == report.error
    assert tip(a) == local
    hook.unlink()
    assert a_sync.round().action == "pushed"
    assert a_sync.status().last_error is None
    assert git(remote, "rev-parse", "main") == local


def test_an_unreachable_remote_never_blocks_and_catches_up(
    hub: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    remote, a, _ = hub
    away = tmp_path / "away.git"
    remote.rename(away)
    local = external_commit(a, memory("alpha-fact", "Alpha keeps one fact."))
    a_sync = sync_of(a)
    report = a_sync.round()
    assert report.action == "failed" and report.error is not None
    assert report.error.kind in ("not-found", "network")
    assert tip(a) == local
    away.rename(remote)
    assert a_sync.round().action == "pushed"
    assert git(remote, "rev-parse", "main") == local


def test_a_refused_push_keeps_the_local_commit_under_a_rescue_ref(
    hub: tuple[Path, Path, Path],
) -> None:
    remote, a, b = hub
    external_commit(a, memory("alpha-fact", "Alpha keeps one fact."))
    sync_of(a).round()
    ours = external_commit(b, memory("bravo-fact", "Bravo keeps another fact."))
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    b_sync = sync_of(b)
    assert b_sync.round().action == "failed"
    repo = pygit2.Repository(str(b))
    assert rescue.rescues(repo) == {rescue.RESCUE_PREFIX + ours: ours}
    assert b_sync.status().rescues == 1
    hook.unlink()
    report = b_sync.round()
    assert report.action == "pushed"
    assert rescue.rescues(repo) == {}
    on_remote = git(remote, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert on_remote.count("areas/inbox/bravo-fact.html") == 1


def test_a_rescue_is_replayed_idempotently_after_a_crash(hub: tuple[Path, Path, Path]) -> None:
    """A round that died after moving the branch but before the push: the rescue ref and the
    replayed branch are both there, and the next round writes each change once."""
    remote, a, b = hub
    external_commit(a, memory("alpha-fact", "Alpha keeps one fact."))
    sync_of(a).round()
    ours = external_commit(b, memory("bravo-fact", "Bravo keeps another fact."))
    repo = pygit2.Repository(str(b))
    rescue.keep(repo, ours)
    # What the dead round had done: fetched, replayed ours onto theirs, moved the branch.
    git(b, "fetch", "-q", "origin")
    git(b, "rebase", "-q", "origin/main")
    replayed = tip(b)
    report = sync_of(b).round()
    assert report.action == "pushed" and report.new_conflicts == ()
    assert git(remote, "rev-parse", "main") == replayed  # nothing rewritten a second time
    assert rescue.rescues(repo) == {}
    assert_linear(remote)


def test_an_empty_remote_gets_the_branch(tmp_path: Path) -> None:
    a = tmp_path / "a"
    make_store(a)
    remote = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(a, "remote", "add", "origin", str(remote))
    assert sync_of(a).round().action == "pushed"
    assert git(remote, "rev-parse", "main") == tip(a)


@pytest.mark.parametrize(
    ("stderr", "kind"),
    [
        (" ! [rejected]        main -> main (non-fast-forward)", "non-fast-forward"),
        (" ! [rejected]        main -> main (fetch first)", "non-fast-forward"),
        (" ! [remote rejected] main -> main (pre-receive hook declined)", "hook"),
        ("fatal: Authentication failed for 'https://example.invalid/x.git/'", "auth"),
        ("git@example.invalid: Permission denied (publickey).", "auth"),
        ("fatal: could not read Username for 'https://x': terminal prompts disabled", "auth"),
        ("ssh: Could not resolve hostname example.invalid: Name or service not known", "network"),
        ("fatal: unable to access 'https://x/': Failed to connect: Connection refused", "network"),
        ("fatal: '/nowhere.git' does not appear to be a git repository", "not-found"),
        ("something nobody has seen", "other"),
    ],
)
def test_failures_are_classified_honestly(stderr: str, kind: str) -> None:
    assert transport.classify(stderr) == kind
    assert (kind in transport.TRANSIENT) == (kind == "network")


def test_push_local_pushes_the_tip_and_falls_back_to_a_round(
    hub: tuple[Path, Path, Path],
) -> None:
    remote, a, b = hub
    a_sync, b_sync = sync_of(a), sync_of(b)
    a_sync.round()
    b_sync.round()
    ours = external_commit(a, memory("alpha-fact", "Alpha keeps one fact."))
    report = a_sync.push_local()
    assert (report.action, report.attempts) == ("pushed", 1)
    assert git(remote, "rev-parse", "main") == ours
    # b's tracking ref is stale: its push is refused, and the round it falls back to replays.
    external_commit(b, memory("bravo-fact", "Bravo keeps another fact."))
    report = b_sync.push_local()
    assert report.action == "replayed"
    assert {"areas/inbox/alpha-fact.html", "areas/inbox/bravo-fact.html"} <= tree_paths(remote)


def test_a_hand_rewritten_remote_gets_our_commits_back_and_a_forget_one_does_not(
    hub: tuple[Path, Path, Path],
) -> None:
    """A branch force-pushed back by hand loses nothing of ours: our commits, published before,
    are replayed onto it. Rewritten by ``forget`` (its mark on the remote), they are not."""
    remote, a, b = hub
    seed = tip(a)
    external_commit(a, memory("alpha-fact", "Alpha keeps one fact."), "a1")
    assert sync_of(a).round().action == "pushed"
    assert sync_of(b).round().action == "fast-forward"
    git(a, "push", "-q", "--force", "origin", f"{seed}:refs/heads/main")
    assert sync_of(b).round().action == "pushed"
    assert "areas/inbox/alpha-fact.html" in tree_paths(remote)

    published = git(remote, "rev-parse", "main")
    assert sync_of(b).round().action == "up-to-date"
    git(a, "push", "-q", "--force", "origin", f"{seed}:refs/heads/main")
    git(a, "push", "-q", "origin", f"{seed}:{transport.REWRITTEN_PREFIX}{published}")
    report = sync_of(b).round()
    assert report.replayed == 0 and tip(b) == seed == git(remote, "rev-parse", "main")
    assert "areas/inbox/alpha-fact.html" not in tree_paths(b)
