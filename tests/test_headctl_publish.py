"""``headctl publish``: the real ``headctl`` in a subprocess against a real daemon on a real store.

The listings and the sitemap land in one commit (a session's, with memhtml's subject), a second
run with nothing changed lands none, a write then rewrites only the listings it touches, and the
generated files never become memories: not in the records, not in the skipped count, not in
``headctl check``. The bytes are memhtml 0.15.1's, checked against a listing it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support.daemon import Daemon, headctl, short_socket_dir
from support.headctl_cli import Cli
from support.stores import make_store

from headd.memfile.publish import Row, artifacts


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    store = tmp_path_factory.mktemp("publish-cli") / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock")
    daemon.wait_ready()
    yield Cli(store, daemon.socket_path)
    assert daemon.stop() == 0, daemon.log()


def _memory_paths(cli: Cli) -> list[str]:
    listed = cli.json("list", "--include-archived", "--limit", "500")
    return [row["path"] for row in listed["files"]]


def test_publish_commits_listings_once_and_they_stay_out_of_the_memories(cli: Cli) -> None:
    memories = _memory_paths(cli)
    skipped = cli.json("skipped")["files"]
    before = cli.commits()
    published = cli.json("publish")
    assert cli.commits() == before + 1
    assert published["commitSha"] == cli.head()
    assert published["root"] == str(cli.store)
    assert published["written"] == published["artifacts"] == len(published["paths"])
    assert "index.html" in published["paths"] and "sitemap.xml" in published["paths"]
    assert published["paths"] == sorted(published["paths"])
    directories = {p.rsplit("/", 1)[0] for p in memories}
    for directory in directories:
        assert f"{directory}/index.html" in published["paths"], directory
    subject = cli.git("log", "-1", "--format=%s")
    assert subject == f"memhtml(publish): regenerate {published['artifacts']} generated artifacts"
    assert cli.git("status", "--porcelain") == ""  # the checkout came along
    sitemap = (cli.store / "sitemap.xml").read_text(encoding="utf-8")
    assert sitemap.count("<url>") == len(memories)

    assert _memory_paths(cli) == memories
    assert cli.json("skipped")["files"] == skipped
    assert cli.json("status")["skipped"] == len(skipped)
    checked = headctl("check", "--json", str(cli.store))
    rows = json.loads(checked.stdout)
    assert not any(row["path"].endswith("index.html") for row in rows)
    assert sorted(r["path"] for r in rows if not r["ok"]) == sorted(f["path"] for f in skipped)

    again = cli.json("publish")
    assert (again["written"], again["paths"], again["commitSha"]) == (0, [], None)
    assert cli.commits() == before + 1
    human = cli.run("publish")
    assert human.returncode == 0 and "already current" in human.stdout


def test_a_write_republishes_only_what_it_touched(cli: Cli) -> None:
    cli.json("publish")
    before = cli.commits()
    cli.json(
        *("write", "--title", "Gauges read hourly", "--claim", "Gauges are read every hour."),
        *("--type", "procedural", "--workspace", "metrics"),
    )
    published = cli.json("publish")
    assert published["paths"] == [
        "projects/index.html",
        "projects/metrics/index.html",
        "sitemap.xml",
    ]
    assert cli.commits() == before + 2
    listing = (cli.store / "projects/metrics/index.html").read_text(encoding="utf-8")
    assert "<mark>projects/metrics holds 1 memory.</mark>" in listing
    assert "Gauges are read every hour." in listing


def test_a_hand_edited_listing_refuses_and_keeps_the_edit(cli: Cli) -> None:
    cli.json(
        "write", "--title", "Queue depth", "--claim", "The queue holds ten.", "--type", "semantic"
    )
    listing = cli.store / "areas/inbox/index.html"
    edited = listing.read_text(encoding="utf-8") + "<!-- mine -->\n"
    listing.write_text(edited, encoding="utf-8")
    before = cli.commits()
    refused = cli.run("publish")
    assert refused.returncode == 1
    assert refused.stderr.startswith("ERR_WRITE_CONFLICT:"), refused.stderr
    assert cli.commits() == before
    assert listing.read_text(encoding="utf-8") == edited
    cli.git("checkout", "--", "areas/inbox/index.html")
    assert cli.json("publish")["written"] >= 1


#: What memhtml 0.15.1's ``publish`` wrote for one memory in ``areas/inbox`` (its bytes).
MEMHTML_LISTING = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>areas/inbox</title>
</head>
<body>
<article>
<p><mark>areas/inbox holds 1 memory.</mark>
This listing is generated from the tree; it is not itself a memory.</p>
<ul>
<li><a href="/areas/inbox/long-b.html">Long &lt;b&gt;</a> <code>semantic</code> \
<time datetime="2026-12-07T04:10:24Z">2026-12-07T04:10:24Z</time><br><code>long-b.html</code> \
— First sentence &amp; here.</li>
</ul>
</article>
</body>
</html>
"""

MEMHTML_ROOT = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Memory</title>
</head>
<body>
<article>
<p><mark>Memory holds 0 memories.</mark>
This listing is generated from the tree; it is not itself a memory.</p>
<ul>
<li><a href="/areas/index.html">areas/</a></li>
</ul>
</article>
</body>
</html>
"""


def test_the_bytes_are_memhtmls() -> None:
    row = Row(
        "areas/inbox/long-b.html",
        "Long <b>",
        "First sentence & here.",
        "semantic",
        "2026-12-07T04:10:24Z",
    )
    files = artifacts([row])
    assert list(files) == [
        "areas/inbox/index.html",
        "areas/index.html",
        "index.html",
        "sitemap.xml",
    ]
    assert files["areas/inbox/index.html"] == MEMHTML_LISTING
    assert files["index.html"] == MEMHTML_ROOT
    assert files["sitemap.xml"] == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "  <url>\n    <loc>/areas/inbox/long-b.html</loc>\n"
        "    <lastmod>2026-12-07T04:10:24Z</lastmod>\n  </url>\n</urlset>\n"
    )
    assert artifacts([]) == {
        "sitemap.xml": '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n\n</urlset>\n'
    }
