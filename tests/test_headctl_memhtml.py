"""memhtml's command line in headctl (``write``, ``apply``, ``correct``, ``link``, ``archive``,
``list``, ``neighbors``): the real ``headctl`` in a subprocess against a real daemon on a real
store, each write checked in the git history (one commit, or none)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.daemon import Daemon, short_socket_dir
from support.headctl_cli import Cli
from support.stores import make_store

POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
POOL = "resources/database/connection-pool-size-is-forty.html"


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    store = tmp_path_factory.mktemp("memhtml-cli") / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock")
    daemon.wait_ready()
    yield Cli(store, daemon.socket_path)
    assert daemon.stop() == 0, daemon.log()


WRITE = (
    "write",
    "--title",
    "Checkout retries twice",
    "--claim",
    "The checkout service retries twice.",
    "--body",
    "Then it gives up.",
    "--type",
    "procedural",
    "--entity",
    "service:checkout",
    "--workspace",
    "payments",
)


def test_write_is_one_commit_and_a_duplicate_none(cli: Cli) -> None:
    before = cli.commits()
    written = cli.json(*WRITE)
    assert written["path"] == "projects/payments/checkout-retries-twice.html"
    assert (written["created"], written["deduped"]) == (True, False)
    assert written["commitSha"] == cli.head()
    assert written["contentHash"].startswith("sha256:")
    assert cli.commits() == before + 1
    html = (cli.store / written["path"]).read_text(encoding="utf-8")
    assert "<mark>The checkout service retries twice.</mark>" in html
    again = cli.json(*WRITE)
    assert again["deduped"] is True and again["commitSha"] is None
    assert again["existingPath"] == written["path"]
    assert cli.commits() == before + 1
    human = cli.run(*WRITE)
    assert human.returncode == 0 and "already held at" in human.stdout


def test_write_refusals_keep_their_codes(cli: Cli) -> None:
    before = cli.commits()
    neither = cli.run("write", "--title", "T", "--type", "semantic")
    assert neither.returncode == 2 and neither.stderr.startswith("ERR_USAGE:")
    occupied = cli.run(
        "write", "--title", "T", "--claim", "A new fact.", "--type", "semantic", "--path", POSTGRES
    )
    assert occupied.returncode == 1
    assert occupied.stderr.startswith("ERR_WRITE_CONFLICT:")
    strict = cli.run(
        "write",
        *("--title", "T", "--claim", "Another fact.", "--type", "semantic"),
        *("--path", "nowhere/x.txt", "--strict-path"),
    )
    assert strict.returncode == 1 and strict.stderr.startswith("ERR_INVALID_MEMORY:")
    assert cli.commits() == before


def _line(title: str, body: str, **more: Any) -> str:
    return json.dumps({"op": "write", "title": title, "type": "semantic", "body": body, **more})


def test_apply_checks_the_whole_stream_first_and_is_atomic_by_default(cli: Cli) -> None:
    before = cli.commits()
    good = _line("Cache ttl is ten minutes", "The cache ttl is ten minutes.")
    bad_json = cli.run("apply", "--file", "-", stdin=f"{good}\nnot json\n")
    assert bad_json.returncode == 2 and bad_json.stderr.startswith("ERR_INVALID_FLAG:")
    unknown = cli.run("apply", stdin=json.dumps({"op": "write", "claim": "x"}) + "\n")
    assert unknown.returncode == 2 and "unknown field `claim`" in unknown.stderr
    clash = _line("Clash", "A clashing fact.", path=POSTGRES)
    later = _line("Queue depth is nine", "The queue depth is nine.")
    stream = f"{good}\n{clash}\n{later}\n"
    atomic = cli.json("apply", "-", stdin=stream)
    assert [r["skipped"] for r in atomic["results"]] == [True, False, True]
    assert atomic["results"][1]["code"] == "ERR_WRITE_CONFLICT"
    assert atomic["commit_sha"] is None and cli.commits() == before
    best = cli.json("apply", "--continue-on-error", stdin=stream)
    assert best["summary"]["written"] == 2 and best["summary"]["failed"] == 1
    assert best["commit_sha"] == cli.head() and cli.commits() == before + 1
    assert (cli.store / "areas/inbox/cache-ttl-is-ten-minutes.html").exists()


def test_apply_reports_a_stored_duplicate_by_its_path_in_memhtml_row_order(cli: Cli) -> None:
    """A batch op whose content is already stored is deduped onto it: the row names the stored
    path twice (``path``, ``existing_path``), its keys in memhtml's order, and nothing commits."""
    stored = cli.json("write", "--title", "Pool size", "--claim", "The pool size is 8.", "--type",
                      "semantic")["path"]  # fmt: skip
    before = cli.commits()
    out = cli.json("apply", stdin=_line("Pool size again", "The pool size is 8.") + "\n")
    row = out["results"][0]
    assert list(row) == [
        "index", "ok", "path", "deduped", "existing_path", "code", "error", "skipped",
        "conflict", "near_duplicates", "consolidated_into", "superseded_path",
    ]  # fmt: skip
    assert (row["ok"], row["deduped"], row["path"], row["existing_path"]) == (
        True, True, stored, stored,
    )  # fmt: skip
    assert out["summary"]["deduped"] == 1 and out["commit_sha"] is None
    assert cli.commits() == before


def test_apply_help_shows_the_op_format(cli: Cli) -> None:
    shown = cli.run("apply", "--help")
    assert shown.returncode == 0
    assert '{"op":"write","title":' in shown.stdout and "--continue-on-error" in shown.stdout


def test_apply_last_wins_folds_restatements_and_supersedes_the_stored_slot(cli: Cli) -> None:
    stored = cli.json(
        "write", "--title", "Worker retry limit", "--claim", "The retry limit of the worker is 3.",
        "--type", "semantic",
    )["path"]  # fmt: skip
    before = cli.commits()
    stream = "\n".join(
        [
            _line("Cache ttl ten", "The cache ttl of the api is 10 seconds."),
            _line("Backups nightly", "Backups run every night."),
            _line("Cache ttl twenty", "The cache ttl of the api is 20 seconds."),
            _line("Worker retry limit five", "The retry limit of the worker is 5."),
            _line("Cache ttl thirty", "The cache ttl of the api is 30 seconds."),
        ]
    )
    out = cli.json("apply", "--consolidate", "last-wins", "--detect-conflicts", stdin=stream + "\n")
    rows = out["results"]
    # one file per slot, at the first index that claimed it, holding the last value
    assert rows[0]["path"] == "areas/inbox/cache-ttl-thirty.html"
    assert [r["consolidated_into"] for r in rows] == [None, None, 0, None, 0]
    assert rows[2]["path"] is None and rows[2]["ok"] is True
    assert out["summary"] == {
        "total": 5, "written": 3, "deduped": 0, "failed": 0, "skipped": 0, "consolidated": 2,
    }  # fmt: skip
    moved = f"archive/2026/{stored}"
    assert rows[3]["superseded_path"] == moved
    assert [r["superseded_path"] for r in rows if r["index"] != 3] == [None] * 4
    assert rows[3]["conflict"] == {
        "path": stored, "batch_index": None, "claim": "The retry limit of the worker is 3.",
    }  # fmt: skip
    assert [r["conflict"] for r in rows if r["index"] != 3] == [None] * 4
    # the batch and the supersede are one commit
    assert out["commit_sha"] == cli.head() and cli.commits() == before + 1
    assert not (cli.store / "areas/inbox/cache-ttl-ten.html").exists()
    assert "30 seconds" in (cli.store / rows[0]["path"]).read_text(encoding="utf-8")
    winner = (cli.store / rows[3]["path"]).read_text(encoding="utf-8")
    assert f'<link rel="memhtml-supersedes" href="/{moved}">' in winner
    old = (cli.store / moved).read_text(encoding="utf-8")
    assert f'name="memhtml-superseded-by" content="/{rows[3]["path"]}"' in old
    assert 'name="memhtml-valid-until"' in old and not (cli.store / stored).exists()


def test_apply_last_wins_skips_restatements_of_a_slot_that_did_not_land(cli: Cli) -> None:
    before = cli.commits()
    stream = "\n".join(
        [
            _line("Queue cap", "The queue cap of the ingest is 9.", path=POSTGRES),
            _line("Queue cap again", "The queue cap of the ingest is 12.", path=POSTGRES),
            _line("Lint rules", "Lint runs on every push."),
        ]
    )
    out = cli.json("apply", "--consolidate", "last-wins", stdin=stream + "\n")
    assert [(r["ok"], r["skipped"]) for r in out["results"]] == [
        (False, False), (False, True), (False, True),
    ]  # fmt: skip
    assert out["results"][0]["code"] == "ERR_WRITE_CONFLICT"
    assert out["summary"]["consolidated"] == 0 and out["summary"]["skipped"] == 2
    assert out["commit_sha"] is None and cli.commits() == before


def test_correct_supersedes_and_archives_in_one_commit(cli: Cli) -> None:
    target = cli.json(
        "write",
        "--title",
        "Shards are six",
        "--claim",
        "The cluster runs six shards.",
        "--type",
        "semantic",
    )["path"]
    before = cli.commits()
    corrected = cli.json(
        "correct", target, "--title", "Shards are twelve",
        "--claim", "The cluster runs twelve shards.", "--reason", "resharded",
    )  # fmt: skip
    assert corrected["archivedPath"].startswith("archive/") and corrected["archivedPath"].endswith(
        target
    )
    assert corrected["commitSha"] == cli.head() and cli.commits() == before + 1
    assert not (cli.store / target).exists()
    new_html = (cli.store / corrected["path"]).read_text(encoding="utf-8")
    assert f'href="/{corrected["archivedPath"]}"' in new_html
    gone = cli.run("correct", target, "--title", "X", "--claim", "Y.")
    assert gone.returncode == 1 and gone.stderr.startswith("ERR_PATH_NOT_FOUND:")


def test_link_is_idempotent_and_neighbors_see_it_both_ways(cli: Cli) -> None:
    before = cli.commits()
    linked = cli.json("link", POSTGRES, "supports", POOL)
    assert linked["commitSha"] == cli.head() and linked["rel"] == "supports"
    again = cli.json("link", POSTGRES, "supports", POOL)
    assert again["commitSha"] is None and cli.commits() == before + 1  # memhtml: null, no commit
    out = cli.json("neighbors", POOL)
    assert out["center"] == POOL and out["depth"] == 1
    # each memory once, at its first hop, by the first link found (links out before links in)
    assert [(n["path"], n["rel"], n["hop"]) for n in out["nodes"]] == [(POSTGRES, "relates_to", 1)]
    assert out["edges"] == 1 and out["nodesDropped"] == 0
    narrowed = cli.json("neighbors", POSTGRES, "--depth", "2", "--rel", "supports")
    assert [n["path"] for n in narrowed["nodes"]] == [POOL]
    missing = cli.run("neighbors", "areas/inbox/none.html")
    assert missing.returncode == 1 and missing.stderr.startswith("ERR_PATH_NOT_FOUND:")
    assert cli.run("link", POSTGRES, "befriends", POOL).returncode == 2


def test_archive_then_list_with_filters_and_a_cursor(cli: Cli) -> None:
    path = cli.json(
        "write", "--title", "Old runbook", "--claim", "The old runbook is in the wiki.",
        "--type", "procedural", "--tag", "ops",
    )["path"]  # fmt: skip
    before = cli.commits()
    moved = cli.json("archive", path, "--reason", "replaced")
    assert moved["path"] == path and moved["archivePath"].startswith("archive/")
    assert moved["commitSha"] == cli.head() and cli.commits() == before + 1
    everything = cli.json("list", "--limit", "200")["files"]
    assert [f["path"] for f in everything] == sorted(f["path"] for f in everything)
    assert not any(f["archived"] for f in everything)
    assert {"memoryType", "updatedAt", "gist", "para"} <= set(everything[0])
    with_archived = cli.json("list", "--include-archived", "--limit", "200")["files"]
    assert moved["archivePath"] in [f["path"] for f in with_archived]
    assert cli.json("list", "--para", "archive")["files"] == []
    assert [
        f["path"] for f in cli.json("list", "--para", "archive", "--include-archived")["files"]
    ] == [f["path"] for f in with_archived if f["archived"]]
    first = cli.json("list", "--limit", "2")
    rest = cli.json("list", "--limit", "200", "--cursor", first["nextCursor"])
    assert rest["nextCursor"] is None  # memhtml's key, null on the last page
    assert [f["path"] for f in first["files"] + rest["files"]] == [f["path"] for f in everything]
    prefs = cli.json("list", "--type", "user_preference", "--entity", "person:dana")["files"]
    assert [f["path"] for f in prefs] == ["areas/inbox/user-prefers-short-answers.html"]
    assert cli.json("list", "--workspace", "payments")["files"][0]["workspace"] == "payments"
    shown = cli.run("list", "--limit", "1")
    assert shown.returncode == 0 and "more: --cursor" in shown.stdout


def test_without_a_daemon_a_write_says_how_to_start_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    lonely = Cli(store, short_socket_dir() / "none.sock")
    done = lonely.run(*WRITE)
    assert done.returncode == 1
    assert done.stderr.startswith("ERR_DAEMON_UNAVAILABLE:") and "headd --store" in done.stderr
    assert lonely.commits() == 1


def test_search_and_recall_take_memhtml_scope_flags(cli: Cli) -> None:
    def hits(*flags: str) -> list[str]:
        return [h["path"] for h in cli.json("search", "postgres", "record", *flags)["hits"]]

    assert POSTGRES in hits()
    assert POSTGRES in hits("--entity", "service:checkout-api")
    assert hits("--entity", "person:dana") == []
    assert hits("--workspace", "nowhere") == []
    assert POSTGRES in hits("--include-archived", "--as-of", "2030-01-01T00:00:00Z")
    recalled = cli.run("--json", "recall", "postgres", "--workspace", "nowhere")
    assert recalled.returncode == 0, recalled.stderr


def test_apply_detect_near_duplicates_through_the_daemons_embedder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        cli = Cli(store, daemon.socket_path)
        assert cli.run("vectors", "fill").returncode == 0
        stream = "\n".join(
            [
                _line("Ledger database", "The ledger runs on Postgres 15 in the primary region."),
                _line("Ledger database", "The ledger runs on Postgres 15 in the primary region!"),
                _line("Lint", "Lint runs on every push."),
            ]
        )
        out = cli.json("apply", "--detect-near-duplicates", stdin=stream + "\n")
        assert out["near_duplicates_degraded"] is False
        rows = out["results"]
        assert rows[0]["near_duplicates"] is None
        later = rows[1]["near_duplicates"]
        assert later[0]["batch_index"] == 0 and later[0]["path"] is None
        assert later[0]["similarity"] >= 0.92
        assert later[0]["claim"] == "The ledger runs on Postgres 15 in the primary region."
        assert cli.run("vectors", "fill").returncode == 0
        again = cli.json(
            "apply",
            "--detect-near-duplicates",
            stdin=_line("Ledger database", "The ledger runs on Postgres 15 in the primary region?")
            + "\n",
        )
        # the stored restatements, best first, a tie by path
        stored = again["results"][0]["near_duplicates"]
        assert [m["path"] for m in stored] == [rows[1]["path"], rows[0]["path"]]
        assert stored[0]["batch_index"] is None and stored[0]["similarity"] >= 0.92
        assert stored[0]["claim"] == "The ledger runs on Postgres 15 in the primary region!"
        plain = cli.json("apply", stdin=_line("Plain", "A plain fact.") + "\n")
        assert plain["near_duplicates_degraded"] is False
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_apply_near_duplicates_without_an_embedder_are_unchecked(cli: Cli) -> None:
    line = _line("Unchecked fact", "The unchecked fact is recorded once.")
    out = cli.json("apply", "--detect-near-duplicates", stdin=line + "\n")
    assert out["near_duplicates_degraded"] is True
    assert out["results"][0]["near_duplicates"] is None and out["results"][0]["ok"] is True
