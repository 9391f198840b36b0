"""``headctl import claude-code`` on a fixture tree written from Claude Code's documented memory
layout, with the awkward cases: no front matter, unknown keys, ``metadata: {type}``, one store
under two worktree slugs, a broken link, an empty index, an index line without its file,
non-UTF-8 bytes, a 2 MB file and a credential.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``claude_code``: drop the ``seen_files`` check -> ``test_parse_reads_every_case``.
- ``run.plan``: treat every key match as a correction -> ``test_reimport_writes_nothing``.
- ``run.check_item``: skip the secret check -> ``test_import_lands_one_commit_with_provenance``
  (the batch is refused by the door and nothing lands).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.daemon import Daemon, headctl, short_socket_dir
from support.data import REPO
from support.git import git, tip, tree_paths
from support.stores import make_store

from headd.importers.claude_code import parse
from headd.store.ports import parse_memory

FIXTURE = REPO / "tests" / "data" / "importers" / "claude-code"
SHOP = "-home-dana-shop"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    shutil.copytree(FIXTURE, root)
    memory = root / SHOP / "memory"
    (memory / "project_legacy.md").write_bytes(b"# Legacy\n\nThe caf\xe9 service is old.\n")
    (memory / "reference_dump.md").write_text("x" * (2 * 1024 * 1024), encoding="utf-8")
    return root


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_store(root)
    return root


def test_parse_reads_every_case(tree: Path) -> None:
    parsed = parse(tree)
    by_file = {i.file.rsplit("/", 1)[-1]: i for i in parsed.items}
    assert sorted(by_file) == [
        "MEMORY.md",
        "feedback_db_access.md",
        "feedback_testing.md",
        "project_launch.md",
        "reference_links.md",
        "user_role.md",
    ]
    role = by_file["user_role.md"]
    assert (role.title, role.type, role.workspace) == ("User role", "user_preference", SHOP[1:])
    assert role.claim == "Dana is a backend engineer who reads Go daily and is new to React."
    testing = by_file["feedback_testing.md"]
    assert testing.type == "procedural"  # from metadata: {type: feedback}
    assert any("- run the migrations" in p for p in testing.body)  # the list stays whole
    targets = {t.rsplit("/", 1)[-1] for _, t in testing.links}
    assert targets == {"user_role.md", "project_launch.md"}
    launch = by_file["project_launch.md"]  # no front matter: heading and first sentence
    assert (launch.title, launch.type) == ("Launch plan", "semantic")
    assert launch.claim == "The shop launches on 3 March with card payments only."
    assert by_file["reference_links.md"].type == "semantic"  # unknown keys ignored
    freeze = by_file["MEMORY.md"]  # an index line without its file
    assert (freeze.title, freeze.claim) == ("Deploy freeze", "no deploys on Fridays after 14:00")
    reasons = {s.what.rsplit("/", 1)[-1]: s.reason for s in parsed.skipped}
    assert reasons["project_legacy.md"].startswith("not UTF-8")
    assert reasons["reference_dump.md"].startswith("too large")
    assert reasons["user_role.md"].startswith("the same file as -home-dana-shop/")
    assert reasons["feedback_testing.md"].startswith("the same file as")
    assert [t for _, t in parsed.broken_links] == ["missing-topic"]


def import_(store: Path, tree: Path, *extra: str, sock: Path | None = None) -> dict:
    socket = sock or short_socket_dir() / "none.sock"
    run = headctl(
        "--store",
        str(store),
        "--socket",
        str(socket),
        "--json",
        "import",
        "claude-code",
        str(tree),
        *extra,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_import_lands_one_commit_with_provenance(store: Path, tree: Path) -> None:
    before = tip(store)
    report = import_(store, tree)
    assert (report["new"], report["corrected"], report["unchanged"]) == (5, 0, 0)
    assert report["types"] == {"procedural": 1, "semantic": 3, "user_preference": 1}
    secret = [s for s in report["skipped"] if s["what"].endswith("feedback_db_access.md")]
    assert "password-assignment" in secret[0]["reason"] and "hunter" not in json.dumps(report)
    assert "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1" in report["advice"]
    assert git(store, "rev-list", "--count", f"{before}..main").strip() == "1"  # one commit
    added = sorted(tree_paths(store, tip(store)) - tree_paths(store, before))
    assert len(added) == 5 and all(p.startswith("projects/home-dana-shop/") for p in added)
    testing = (store / "projects/home-dana-shop/testing-feedback.html").read_text("utf-8")
    record = parse_memory("projects/home-dana-shop/testing-feedback.html", testing)
    assert record.claim == "Run integration tests against a real database, never mocks."
    assert "Imported from claude-code: -home-dana-shop/memory/feedback_testing.md (sha256:" in (
        record.body_text
    )
    assert {link.href for link in record.links} == {
        "/projects/home-dana-shop/user-role.html",
        "/projects/home-dana-shop/launch-plan.html",
    }


def test_dry_run_writes_nothing(store: Path, tree: Path) -> None:
    before = tip(store)
    report = import_(store, tree, "--dry-run")
    assert report["dry_run"] and report["new"] == 5 and report["commits"] == []
    assert "Testing feedback" in report["titles"]
    assert tip(store) == before and git(store, "status", "--porcelain") == ""


def test_reimport_writes_nothing_and_an_edit_is_a_correction(store: Path, tree: Path) -> None:
    import_(store, tree)
    landed = tip(store)
    again = import_(store, tree)
    assert (again["new"], again["corrected"], again["unchanged"]) == (0, 0, 5)
    assert tip(store) == landed
    launch = tree / SHOP / "memory" / "project_launch.md"
    launch.write_text(launch.read_text("utf-8").replace("3 March", "10 March"), "utf-8")
    edited = import_(store, tree)
    assert (edited["new"], edited["corrected"], edited["unchanged"]) == (0, 1, 4)
    paths = tree_paths(store, tip(store))
    archived = [p for p in paths if p.startswith("archive/") and p.endswith("launch-plan.html")]
    assert len(archived) == 1
    new = [p for p in paths if "launch-plan" in p and not p.startswith("archive/")]
    record = parse_memory(new[0], (store / new[0]).read_text("utf-8"))
    assert "10 March" in record.claim
    assert ("supersedes", "/" + archived[0]) in {(link.rel, link.href) for link in record.links}


def test_import_goes_through_a_running_daemon(store: Path, tree: Path) -> None:
    sock = short_socket_dir() / "h.sock"
    daemon = Daemon(store, sock).wait_ready()
    try:
        report = import_(store, tree, sock=sock)
        assert report["new"] == 5
        found = headctl("--store", str(store), "--socket", str(sock), "--json", "search", "compose")
        paths = [hit["path"] for hit in json.loads(found.stdout)["hits"]]
        assert "projects/home-dana-shop/testing-feedback.html" in paths
    finally:
        daemon.stop()


def test_a_large_import_is_a_bounded_number_of_commits(store: Path, tmp_path: Path) -> None:
    """230 topic files, every tenth linking the one before: two write batches of at most 200
    ops and one round of links, each its own commit, every memory and link landed."""
    from datetime import UTC, datetime

    from headd_client.import_cli import LocalSink

    from headd.importers.run import run_import

    memory = tmp_path / "big" / "-home-dana-big" / "memory"
    memory.mkdir(parents=True)
    for i in range(230):
        link = f" See [[topic-{i - 1}]]." if i % 10 == 9 else ""
        (memory / f"project_topic_{i}.md").write_text(
            f"---\nname: topic-{i}\ndescription: Topic {i} holds fact number {i}.\n---\n\n"
            f"Body of topic {i}.{link}\n",
            encoding="utf-8",
        )
    before = tip(store)
    sink = LocalSink(store)
    report = run_import(parse(tmp_path / "big"), sink, source="claude-code", now=datetime.now(UTC))
    assert (report.new, report.links, len(report.commits)) == (230, 23, 3)
    assert git(store, "rev-list", "--count", f"{before}..main").strip() == "3"
    again = run_import(parse(tmp_path / "big"), sink, source="claude-code", now=datetime.now(UTC))
    assert (again.unchanged, again.commits) == (230, [])
