"""``SessionManager.publish`` on a real repository: generated files land as one session's commit
with the sessions' compare-and-swap, only the files whose bytes differ, and a lost race leaves
neither the branch, the checkout nor an open session behind.

Mutation notes (each applied once, the named test seen red, then reverted):
- ignore ``land``'s answer (report committed) -> ``test_a_lost_race_lands_nothing``.
"""

from __future__ import annotations

from pathlib import Path

from support.git import git, tip
from support.stores import SEED_FILES, TickingClock, make_store

from headd.store.manager import SessionManager
from headd.store.ports import View

FILES = {"index.html": "<p>root</p>\n", "sitemap.xml": "<urlset/>\n"}


def _render(_view: View) -> dict[str, str]:
    return dict(FILES)


def _manager(tmp_path: Path) -> tuple[Path, SessionManager]:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store, SessionManager(store, clock=TickingClock())


def test_publish_lands_what_differs_once(tmp_path: Path) -> None:
    store, manager = _manager(tmp_path)
    base = tip(store)
    count, paths, result = manager.publish(_render)
    assert (count, paths, result.outcome) == (2, ("index.html", "sitemap.xml"), "committed")
    assert result.sha == tip(store) != base
    message = git(store, "log", "-1", "--format=%B")
    assert message.startswith("memhtml(publish): regenerate 2 generated artifacts\n")
    assert "Memhtml-Session: s-" in message
    assert (store / "index.html").read_text(encoding="utf-8") == FILES["index.html"]
    assert git(store, "status", "--porcelain") == ""
    assert manager.list().sessions == ()

    count, paths, again = manager.publish(_render)
    assert (count, paths, again.sha) == (2, (), result.sha)
    assert tip(store) == result.sha


def test_a_lost_race_lands_nothing(tmp_path: Path) -> None:
    store, manager = _manager(tmp_path)
    base = tip(store)
    intruder = git(store, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "intruder")

    def intrude() -> None:
        git(store, "update-ref", "refs/heads/main", intruder, base)

    manager.before_swap = intrude
    _count, _paths, result = manager.publish(_render)
    assert result.outcome == "rebase-needed" and result.sha == intruder
    assert tip(store) == intruder
    assert not (store / "index.html").exists()
    assert manager.list().sessions == ()
