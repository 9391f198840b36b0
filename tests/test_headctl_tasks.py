"""memhtml's ``task add``/``status``/``list`` and ``entity activity`` in headctl: the real
``headctl`` in a subprocess against a real daemon on a real store, each write checked in git."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.daemon import Daemon, short_socket_dir
from support.headctl_cli import Cli
from support.stores import make_store


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    store = tmp_path_factory.mktemp("tasks-cli") / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock")
    daemon.wait_ready()
    yield Cli(store, daemon.socket_path)
    assert daemon.stop() == 0, daemon.log()


def test_a_task_is_opened_moved_and_archived_when_done(cli: Cli) -> None:
    before = cli.commits()
    added = cli.json(
        "task", "add", "--title", "Rotate the keys", "--due", "2026-12-20",
        "--workspace", "payments", "--entity", "service:checkout",
    )  # fmt: skip
    path = "projects/payments/tasks/rotate-the-keys.html"
    assert (added["path"], added["taskStatus"], added["dueAt"]) == (path, "todo", "2026-12-20")
    assert added["commitSha"] == cli.git("rev-parse", "HEAD") and cli.commits() == before + 1
    inbox = cli.json("task", "add", "--title", "Write the runbook", "--status", "doing")
    assert inbox["path"] == "areas/inbox/tasks/write-the-runbook.html"
    listed = cli.json("task", "list")["tasks"]
    assert [(t["path"], t["taskStatus"]) for t in listed] == [
        (inbox["path"], "doing"),
        (path, "todo"),
    ]
    assert listed[1]["dueAt"] == "2026-12-20" and listed[1]["blockedBy"] == []
    assert [t["path"] for t in cli.json("task", "list", "--status", "todo")["tasks"]] == [path]
    due = cli.json("task", "list", "--due-before", "2026-12-21")["tasks"]
    assert [t["path"] for t in due] == [path]
    assert cli.json("task", "list", "--due-before", "2026-12-20")["tasks"] == []

    moved = cli.json("task", "status", path, "doing")
    assert (moved["taskStatus"], moved["archived"], moved["unchanged"]) == ("doing", False, False)
    html = (cli.store / path).read_text(encoding="utf-8")
    assert '<meta name="memhtml-task-status" content="doing">' in html
    same = cli.json("task", "status", path, "doing")
    assert same["unchanged"] is True and same["commitSha"] is None
    count = cli.commits()
    done = cli.json("task", "status", path, "done", "--reason", "rotated")
    assert done["archived"] is True and done["archivePath"].startswith("archive/")
    assert cli.commits() == count + 1 and not (cli.store / path).exists()
    archived = (cli.store / done["archivePath"]).read_text(encoding="utf-8")
    assert '<meta name="memhtml-task-status" content="done">' in archived
    assert "rotated" in cli.git("log", "-1", "--format=%B")
    assert path not in [t["path"] for t in cli.json("task", "list")["tasks"]]
    finished = cli.json("task", "list", "--include-archived")["tasks"]
    assert done["archivePath"] in [t["path"] for t in finished]


def test_task_status_refusals(cli: Cli) -> None:
    not_a_task = cli.run(
        "task", "status", "areas/inbox/postgres-is-the-system-of-record.html", "done"
    )
    assert not_a_task.returncode == 1 and not_a_task.stderr.startswith("ERR_INVALID_MEMORY:")
    missing = cli.run("task", "status", "areas/inbox/tasks/none.html", "done")
    assert missing.returncode == 1 and missing.stderr.startswith("ERR_PATH_NOT_FOUND:")
    assert cli.run("task", "status", "areas/inbox/tasks/none.html", "finished").returncode == 2


def test_entity_activity_counts_and_orders_newest_first(cli: Cli) -> None:
    found = cli.json("entity", "activity")
    names = [row["entity"] for row in found["entities"]]
    assert {"service:checkout-api", "person:dana", "project:search-platform"} <= set(names)
    api = next(row for row in found["entities"] if row["entity"] == "service:checkout-api")
    assert (api["entityType"], api["entityName"], api["fileCount"]) == (
        "service",
        "checkout-api",
        2,
    )
    stamps = [row["lastActivityAt"] or "" for row in found["entities"]]
    assert stamps == sorted(stamps, reverse=True)
    assert found["entityCount"] == len(names) and found["limit"] == 50
    services = cli.json("entity", "activity", "--type", "service", "--limit", "1")
    assert [row["entityType"] for row in services["entities"]] == ["service"]
    assert services["limit"] == 1 and services["entityCount"] >= 1
    assert cli.json("entity", "activity", "--limit", "9999")["limit"] == 500
