"""The console in a real headless Chromium, on a real store served by a real daemon.

One store, daemon, console and browser for the module: the reading tests come first, then the
ones that write through the forms (each on a memory no earlier test reads).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pygit2
import pytest
from headd_client.sync_client import Client
from support.console import (
    HOSTILE,
    POOL,
    POSTGRES,
    SCRIPTED,
    Running,
    browser,
    needs_chromium,
    running_console,
)
from support.daemon import wait_for
from support.git import external_commit
from support.memory import memory_html
from support.stores import Store

pytestmark = [needs_chromium, pytest.mark.slow]

FILE_MODE = pygit2.GIT_FILEMODE_BLOB


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with running_console(tmp_path_factory.mktemp("console") / "store") as running:
        yield running


@pytest.fixture(scope="module")
def context(console: Running) -> Iterator[Any]:
    with browser() as ctx:
        page = ctx.new_page()
        page.goto(console.server.url)  # the printed URL: sets the cookie, drops the token
        assert "token" not in page.url
        page.close()
        ctx.set_default_timeout(10_000)
        yield ctx


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    page = context.new_page()
    yield page
    page.close()


def search(page: Any, console: Running, query: str) -> None:
    page.goto(console.origin + "/")
    page.fill("form[role=search] input[type=search][name=q]", query)
    page.press("form[role=search] input[type=search][name=q]", "Enter")
    page.wait_for_load_state()


def test_search_shows_each_hit_with_why_it_ranked(page: Any, console: Running) -> None:
    search(page, console, "postgres orders")
    first = page.locator("li.hit").first
    assert first.locator("a.title").inner_text() == "Postgres is the system of record"
    assert "Postgres is the system of record for orders." in first.inner_text()
    assert POSTGRES in first.inner_text()
    why = first.locator(".why").inner_text()
    assert "score" in why and "lexical" in why
    # each arm's contribution (the daemon's explain) and the vector's share of the score
    score = float(re.search(r"score (\d+\.\d+)", why).group(1))  # type: ignore[union-attr]
    parts = [float(x) for x in re.findall(r"(?:lexical|vector) \+(\d+\.\d+)", why)]
    assert parts and abs(sum(parts) - score) < 2e-4, why
    assert re.search(r"vector share \d+%", why)
    assert sorted(first.locator(".why mark").all_inner_texts()) == ["orders", "postgres"]


def test_search_filters_as_the_wire_has_them(page: Any, console: Running) -> None:
    page.goto(console.origin + "/?q=connection+pool+postgres&entity=service:checkout-api")
    titles = page.locator("li.hit a.title").all_inner_texts()
    assert "Connection pool size is forty" in titles
    page.goto(console.origin + "/?q=short+answers&type=user_preference")
    assert page.locator("li.hit a.title").all_inner_texts() == ["User prefers short answers"]
    page.goto(console.origin + "/?q=short+answers&type=episodic")
    assert page.locator("li.hit a.title").count() == 0


def test_a_memory_page_shows_claim_links_and_backlinks(page: Any, console: Running) -> None:
    search(page, console, "connection pool")
    page.locator("li.hit a.title", has_text="Connection pool size is forty").click()
    assert page.locator("h1").inner_text() == "Connection pool size is forty"
    assert page.locator("p.claim mark").inner_text() == "The connection pool size is forty per pod."
    assert "service:checkout-api" in page.locator("section.facts").inner_text()
    page.locator("ul.links a", has_text=f"/{POSTGRES}").click()
    assert page.locator("h1").inner_text() == "Postgres is the system of record"
    backlinks = page.locator("section.facts ul.links").nth(1)
    assert backlinks.locator("a").all_inner_texts() == [POOL]


def test_history_lists_commits_and_opens_an_old_version(page: Any, console: Running) -> None:
    store = Store.open(console.store)
    store.commit(
        {
            POSTGRES: memory_html(
                "Postgres is the system of record",
                "Postgres is the system of record for orders and refunds.",
                body="Replicas serve reads only.",
                entities=("service:checkout-api",),
                tags=("database",),
            )
        },
        "refunds moved to the orders database",
    )
    page.goto(f"{console.origin}/memory?path={POSTGRES}")
    assert "refunds" in page.locator("p.claim").inner_text()  # the daemon followed the branch
    page.get_by_role("link", name="History").click()
    versions = page.locator("li.version")
    assert versions.count() == 2
    assert "refunds moved to the orders database" in versions.first.inner_text()
    assert "+" in versions.first.locator("pre.diff .add").first.inner_text()
    versions.nth(1).get_by_role("link", name="Open this version").click()
    assert page.locator("#time-travel").is_visible()
    assert console.seed[:12] in page.locator("#time-travel").inner_text()
    assert (
        page.locator("p.claim mark").inner_text() == "Postgres is the system of record for orders."
    )


def test_time_travel_answers_search_as_of_that_commit(page: Any, console: Running) -> None:
    page.goto(f"{console.origin}/?q=refunds&at={console.seed}")
    assert page.locator("#time-travel").is_visible()
    assert page.locator("li.hit").count() == 0  # no memory said refunds back then
    page.get_by_role("link", name="Back to now").click()
    assert "at=" not in page.url
    assert page.locator("li.hit a.title").first.inner_text() == "Postgres is the system of record"
    page.goto(f"{console.origin}/?q=x&at=notasha")
    assert "at must be a commit" in page.inner_text("main")


def test_time_travel_follows_an_old_hit_to_the_memory_as_it_was(
    page: Any, console: Running
) -> None:
    old_claim = "Postgres is the system of record for orders."
    page.goto(f"{console.origin}/?q=postgres+orders&at={console.seed}")
    assert console.seed[:12] in page.locator("#time-travel").inner_text()
    hit = page.locator("li.hit", has_text="Postgres is the system of record").first
    assert old_claim in hit.inner_text() and "refunds" not in hit.inner_text()
    hit.locator("a.title").click()
    assert f"at={console.seed}" in page.url  # the hit's link carries the commit along
    assert console.seed[:12] in page.locator("#time-travel").inner_text()
    assert page.locator("p.claim mark").inner_text() == old_claim
    page.get_by_role("link", name="History").click()
    # history as of that commit: the versions up to it, the later one not yet written
    assert console.seed[:12] in page.locator("#time-travel").inner_text()
    assert page.locator("li.version").count() == 1
    assert "refunds" not in page.inner_text("main")
    page.goto(f"{console.origin}/memory?path={POSTGRES}&at={console.seed}")
    page.get_by_role("link", name="Back to now").click()
    assert page.locator("#time-travel").count() == 0
    assert "refunds" in page.locator("p.claim mark").inner_text()


def test_hostile_memory_markup_does_nothing(page: Any, console: Running) -> None:
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    target = f"{console.origin}/memory?path={HOSTILE}"
    page.goto(target)
    assert "The hostile memory keeps its claim." in page.locator("section.body").inner_text()
    page.locator("section.body a", has_text="click me").click()
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert page.url == target  # neither the refresh nor the javascript: link navigated
    embedded = "section.body :is(iframe, img, object, form, base, meta)"
    assert page.locator(embedded).count() == 0
    assert all(url.startswith(console.origin) for url in requests), requests
    memory_link = page.locator("section.body a", has_text="a memory link")
    assert memory_link.get_attribute("href") == (
        "/memory?path=areas/inbox/user-prefers-short-answers.html"
    )


def test_hostile_memory_is_inert_on_every_page_that_shows_it(page: Any, console: Running) -> None:
    """Search hits, the history's diffs and the memory as of its first commit show the same
    hostile file: none of them runs, loads or navigates anything."""
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    search(page, console, "hostile memory claim")
    assert page.locator("li.hit a.title", has_text="Hostile markup").count() == 1
    page.goto(f"{console.origin}/history?path={HOSTILE}")
    assert "attacker.invalid" in page.locator("pre.diff").first.inner_text()  # shown as text
    page.locator("a", has_text="Open this version").last.click()
    page.wait_for_load_state()
    assert page.locator("#time-travel").is_visible()
    body = page.locator("section.body")
    assert "The hostile memory keeps its claim." in body.inner_text()
    assert body.locator(":is(iframe, img, object, form, base, meta, script)").count() == 0
    assert all(
        not (a or "").startswith("javascript:")
        for a in body.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    )
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert all(url.startswith(console.origin) for url in requests), requests


def test_a_scripted_file_shows_as_text_in_history_and_review(page: Any, console: Running) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{console.origin}/memory?path={SCRIPTED}")
    assert "no memory at" in page.inner_text("main")  # the parser refused it
    page.goto(f"{console.origin}/history?path={SCRIPTED}")
    assert "<script>window.__pwned" in page.locator("pre.diff").inner_text()
    page.goto(f"{console.origin}/review")
    assert SCRIPTED in page.inner_text("section.health")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []


def test_activity_groups_commits_by_day_and_session(page: Any, console: Running) -> None:
    page.goto(console.origin + "/")
    page.get_by_role("link", name="Activity").click()
    text = page.inner_text("main")
    assert "refunds moved to the orders database" in text and "seed" in text
    assert re.search(r"\d+ commit", page.locator("section.day h2").first.inner_text())


def test_archive_through_the_form_commits_through_a_session(page: Any, console: Running) -> None:
    path = "areas/inbox/user-prefers-short-answers.html"
    page.goto(f"{console.origin}/memory?path={path}")
    page.fill("form.archive input[name=reason]", "no longer true")
    page.click("form.archive button")
    page.wait_for_load_state()
    assert page.locator(".notice").count() == 1, page.inner_text("main")
    assert "archived as archive/" in page.inner_text(".notice")
    assert "archived" in page.locator("p.meta").first.inner_text()  # the moved memory's own page
    assert page.locator("form.archive").count() == 0
    repo = pygit2.Repository(str(console.store))
    head = repo.head.peel(pygit2.Commit)
    assert "memhtml(archive): " + path in head.message
    assert path not in _tree_paths(head)
    page.goto(f"{console.origin}/?q=short+answers")
    assert page.locator("li.hit").count() == 0


def test_correct_through_the_form_supersedes_the_memory(page: Any, console: Running) -> None:
    page.goto(f"{console.origin}/memory?path={POOL}")
    page.fill("form.correct textarea[name=claim]", "The connection pool size is sixty per pod.")
    page.fill("form.correct input[name=reason]", "raised again in December")
    page.click("form.correct button")
    page.wait_for_load_state()
    assert page.locator("p.claim mark").inner_text() == "The connection pool size is sixty per pod."
    assert "Replaces:" in page.inner_text("main")
    repo = pygit2.Repository(str(console.store))
    head = repo.head.peel(pygit2.Commit)
    assert "memhtml(correct)" in head.message
    assert POOL not in _tree_paths(head)


def test_a_form_posted_without_its_csrf_field_changes_nothing(page: Any, console: Running) -> None:
    before = pygit2.Repository(str(console.store)).head.target
    page.goto(f"{console.origin}/memory?path={POSTGRES}")
    page.evaluate("document.querySelector('form.archive input[name=csrf]').value = 'forged'")
    page.fill("form.archive input[name=reason]", "forged")
    page.click("form.archive button")
    page.wait_for_load_state()
    assert "stale" in page.inner_text("main")
    assert pygit2.Repository(str(console.store)).head.target == before


def test_review_shows_a_sleep_run_with_its_gate(page: Any, console: Running) -> None:
    repo = pygit2.Repository(str(console.store))
    tip = repo.head.peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(tip.tree)
    html = memory_html("Orders are archived yearly", "Orders older than a year are archived.")
    blob = repo.create_blob(html)
    index.add(pygit2.IndexEntry("areas/inbox/orders-archived-yearly.html", blob, FILE_MODE))
    tree = index.write_tree(repo)
    sig = pygit2.Signature("sleep", "sleep@example.org")
    message = "memhtml(sleep): consolidate"
    repo.create_commit("refs/heads/sleep/2026-12-04", sig, sig, message, tree, [tip.id])
    page.goto(console.origin + "/")
    page.get_by_role("link", name="Review").click()
    run = page.locator("article.run")
    assert run.locator("h3").inner_text() == "2026-12-04"
    assert "1 added" in run.inner_text()
    assert run.locator("figure.gate svg").count() == 1
    # per-phase counts come from the daemon's sleep.review; without it the page says so
    assert run.locator("dl.phase-counts").count() == 1 or "sleep.review" in run.inner_text()
    assert run.get_by_role("button", name="Merge").is_visible()
    assert run.get_by_role("button", name="Discard").is_visible()
    assert "No open conflicts" in page.inner_text("section.remote") or "follows no remote" in (
        page.inner_text("section.remote")
    )
    assert "broken-memory.html" in page.inner_text("section.health")


def _tree_paths(commit: pygit2.Commit) -> set[str]:
    out: set[str] = set()

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if isinstance(entry, pygit2.Tree):
                walk(entry, f"{prefix}{entry.name}/")
            else:
                out.add(f"{prefix}{entry.name}")

    walk(commit.tree, "")
    return out


def test_merge_asks_the_daemon_and_a_refusal_moves_nothing(page: Any, console: Running) -> None:
    """Merge is the daemon's ``sleep.merge``: a daemon without it (or gates that refuse this
    hand-made run, which carries no phase trailers) answers a refusal the page shows, and the
    branch stays where it was; the console never moves a ref itself."""
    repo = pygit2.Repository(str(console.store))
    before = repo.head.target
    page.goto(console.origin + "/review")
    page.locator("article.run").get_by_role("button", name="Merge").click()
    page.wait_for_load_state()
    shown = page.inner_text("main")
    if "sleep run merged" in shown:  # a daemon with sleep.merge that took the run
        assert "orders-archived-yearly.html" in _tree_paths(repo.head.peel(pygit2.Commit))
        return
    refusal = page.locator("p.error[role=alert]").inner_text()
    assert refusal.startswith(("ERR_", "RPC ")), refusal  # a coded refusal, never a crash
    if refusal.startswith("ERR_NOT_OFFERED"):
        assert "sleep.merge" in refusal
    assert repo.head.target == before


def test_discard_asks_the_daemon_and_the_run_leaves_the_list(page: Any, console: Running) -> None:
    """Discard is the daemon's ``sleep.discard``: the run's branch goes, main stays."""
    before = pygit2.Repository(str(console.store)).head.target
    page.goto(console.origin + "/review")
    page.locator("article#run-2026-12-04").get_by_role("button", name="Discard").click()
    page.wait_for_load_state()
    assert "sleep run discarded" in page.locator(".notice").inner_text(), page.inner_text("main")
    assert page.locator("article#run-2026-12-04").count() == 0
    repo = pygit2.Repository(str(console.store))
    assert repo.references.get("refs/heads/sleep/2026-12-04") is None
    assert repo.head.target == before


def test_a_real_sleep_run_is_reviewed_by_phase_and_merged(page: Any, console: Running) -> None:
    """The daemon's own sleep run: its phases' counts on the review page, then Merge lands it
    through the gates (``sleep.merge``) and the run leaves the list."""
    settled = "resources/geology/basalt-is-volcanic.html"
    inbox = "areas/inbox/zircon-dates-the-basalt.html"
    sha = external_commit(
        console.store,
        {
            settled: memory_html("Basalt is volcanic", "Basalt is a volcanic rock."),
            inbox: memory_html("Zircon dates", "Zircon dates the basalt.", tags=("geology",)),
        },
    )
    with Client(console.daemon.socket_path, timeout=120) as client:
        assert wait_for(lambda: client.call("status")["sha"] == sha, 20, 0.1)
        report = client.call("sleep.run", {"date": "2026-12-05"})
    assert report["head"] != report["base"], report  # placement moved the inbox memory
    page.goto(console.origin + "/review")
    last = page.locator("section.last-sleep")
    assert "sleep/2026-12-05" in last.inner_text() and "awaiting review" in last.inner_text()
    assert last.locator("dl.phase-counts dt").count() >= 1
    run = page.locator("article#run-2026-12-05")
    assert run.locator("dl.phase-counts dt").count() >= 1
    assert "The file moved unchanged." in (run.text_content() or "")  # a move, not a diff
    run.get_by_role("button", name="Merge").click()
    page.wait_for_load_state()
    assert "sleep run merged" in page.locator(".notice").inner_text(), page.inner_text("main")
    head = pygit2.Repository(str(console.store)).head.peel(pygit2.Commit)
    assert "resources/geology/zircon-dates-the-basalt.html" in _tree_paths(head)
    assert inbox not in _tree_paths(head)
    assert page.locator("article#run-2026-12-05").count() == 0
    last = page.locator("section.last-sleep").inner_text()
    assert "sleep/2026-12-05" in last and "merged" in last and "awaiting" not in last


def test_a_replayed_merge_leaves_the_list(page: Any, console: Running) -> None:
    """A run merged after main moved lands as a replay, so its branch's tip is not on main; the
    page asks ``sleep.review`` and leaves it out all the same."""
    inbox = "areas/inbox/obsidian-is-volcanic-glass.html"
    sha = external_commit(
        console.store,
        {inbox: memory_html("Obsidian", "Obsidian is volcanic glass.", tags=("geology",))},
    )
    with Client(console.daemon.socket_path, timeout=120) as client:
        assert wait_for(lambda: client.call("status")["sha"] == sha, 20, 0.1)
        report = client.call("sleep.run", {"date": "2026-12-06"})
        assert report["head"] != report["base"], report
        moved = external_commit(
            console.store,
            {"resources/notes/tea-is-brewed.html": memory_html("Tea", "Tea is brewed hot.")},
        )
        assert wait_for(lambda: client.call("status")["sha"] == moved, 20, 0.1)
        merged = client.call("sleep.merge", {"run": report["run_id"]})
    assert merged["merged"] and merged["replayed"], merged
    page.goto(console.origin + "/review")
    assert page.locator("article#run-2026-12-06").count() == 0
    last = page.locator("section.last-sleep").inner_text()
    assert "sleep/2026-12-06" in last and "merged" in last
