"""The other importers on fixture trees written from each source's documented format:
``claude-md`` (sections, never split mid-list, each linked to its file), ``codex``,
``basic-memory`` (observations, relations as links, a broken relation) and ``openmemory`` (a
real zip, archived and deleted states, categories and app), each landed once through
``headctl import`` and imported again without a write.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``markdown.sections``: split at every heading level -> ``test_claude_md_sections``.
- ``openmemory``: ignore ``state`` -> ``test_openmemory_zip_lands_archived_states_archived``.
- ``markdown.read_source`` decodes with ``"replace"`` -> ``test_non_utf8_and_2_mb_files_...``
  (all three sources).
"""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from support.daemon import headctl, short_socket_dir
from support.data import REPO
from support.git import tip, tree_paths
from support.stores import make_store

from headd.importers import basic_memory, claude_md, codex, openmemory
from headd.store.ports import parse_memory

DATA = REPO / "tests" / "data" / "importers"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_store(root)
    return root


def import_(store: Path, source: str, path: Path, *extra: str) -> dict:
    sock = short_socket_dir() / "none.sock"
    run = headctl(
        "--store",
        str(store),
        "--socket",
        str(sock),
        "--json",
        "import",
        source,
        str(path),
        *extra,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_claude_md_sections() -> None:
    parsed = claude_md.parse(DATA / "claude-md" / "shop")
    titles = [i.title for i in parsed.items]
    assert titles[:5] == [
        "CLAUDE.md of shop",
        "Shop (shop CLAUDE.md)",
        "Build (shop CLAUDE.md)",
        "Testing (shop CLAUDE.md)",
        "Style (shop CLAUDE.md)",
    ]
    assert "Migrations (shop .claude/rules/migrations.md)" in titles
    assert all(i.type == "procedural" for i in parsed.items)
    testing = next(i for i in parsed.items if i.title.startswith("Testing"))
    assert testing.claim == "run make test before every commit"
    assert testing.body[0] == (
        "- run `make test` before every commit\n- integration tests need the compose stack\n"
        "- never mock the database"
    )
    assert testing.body[1:] == ("### Flaky tests", "Retry a flaky test once, then file it.")
    style = next(i for i in parsed.items if i.title.startswith("Style"))
    assert any("# not a heading" in p for p in style.body)  # a fence is never split
    assert testing.links == (("part_of", "shop/CLAUDE.md"),)


def test_claude_md_lands_with_part_of_links(store: Path) -> None:
    report = import_(store, "claude-md", DATA / "claude-md" / "shop")
    assert (report["new"], report["types"]) == (9, {"procedural": 9})
    assert report["links"] == 6
    paths = tree_paths(store, tip(store))
    section = next(p for p in paths if p.endswith("testing-shop-claude-md.html"))
    record = parse_memory(section, (store / section).read_text("utf-8"))
    (link,) = record.links
    assert link.rel == "part_of" and link.href.endswith("/claude-md-of-shop.html")
    assert "Imported from claude-md: shop/CLAUDE.md § Testing (sha256:" in record.body_text
    again = import_(store, "claude-md", DATA / "claude-md" / "shop")
    assert (again["new"], again["unchanged"], again["commits"]) == (0, 9, [])


def test_codex_memories_and_agents_md() -> None:
    memories = codex.parse(DATA / "codex" / "memories")
    assert [i.type for i in memories.items] == ["semantic"] * 5
    assert "Preferences (memories MEMORY.md)" in [i.title for i in memories.items]
    agents = codex.parse(DATA / "codex" / "project" / "AGENTS.md")
    assert [i.type for i in agents.items] == ["procedural", "procedural"]


def test_basic_memory_notes_and_relations(store: Path) -> None:
    parsed = basic_memory.parse(DATA / "basic-memory" / "notes")
    by_title = {i.title: i for i in parsed.items}
    brewing = by_title["Coffee Brewing Methods"]
    assert brewing.claim == "method: Pour over gives a clean, bright cup"
    assert set(brewing.tags) >= {"coffee", "brewing", "freshness"}
    assert brewing.links == (
        ("relates_to", "coffee-bean-origins"),
        ("part_of", "kitchen.md"),
    )
    assert parsed.broken_links == [("coffee-brewing-methods", "Missing Note")]
    report = import_(store, "basic-memory", DATA / "basic-memory" / "notes")
    assert report["new"] == 4 and report["links"] == 3
    assert report["broken_links"] == [{"from": "coffee-brewing-methods", "target": "Missing Note"}]


def test_openmemory_zip_lands_archived_states_archived(store: Path, tmp_path: Path) -> None:
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as archive:
        archive.write(DATA / "openmemory" / "memories.json", "export/memories.json")
    parsed = openmemory.parse(export)
    assert [(i.key, i.archived) for i in parsed.items][:4] == [
        ("m-1", False),
        ("m-2", False),
        ("m-3", True),
        ("m-4", True),
    ]
    assert parsed.items[1].tags == ("openmemory", "health", "food", "app-claude")
    before = tip(store)
    dry = import_(store, "openmemory", export, "--dry-run")
    assert dry["new"] == 4 and tip(store) == before
    reasons = {s["what"]: s["reason"] for s in dry["skipped"]}
    assert "password-assignment" in reasons["m-6"] and "Rout3r" not in json.dumps(dry)
    assert reasons["export.zip#5"] == "empty content"
    report = import_(store, "openmemory", export)
    assert (report["new"], report["archived"]) == (4, 2)
    paths = tree_paths(store, tip(store))
    archived = [p for p in paths if p.startswith("archive/") and "lisbon" in p]
    assert len(archived) == 1
    again = import_(store, "openmemory", export)
    assert again["new"] == 0 and again["commits"] == []


def test_the_jsonl_gz_export_reads_as_the_json_one(tmp_path: Path) -> None:
    """The other shape of the export: one entry a line, gzipped, in the zip."""
    entries = json.loads((DATA / "openmemory" / "memories.json").read_text("utf-8"))["memories"]
    lines = "".join(json.dumps(entry) + "\n" for entry in entries).encode()
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("memories.jsonl.gz", gzip.compress(lines))
    as_json = tmp_path / "json.zip"
    with zipfile.ZipFile(as_json, "w") as archive:
        archive.write(DATA / "openmemory" / "memories.json", "memories.json")
    parsed, expected = openmemory.parse(export), openmemory.parse(as_json)
    assert [(i.key, i.claim, i.archived) for i in parsed.items] == [
        (i.key, i.claim, i.archived) for i in expected.items
    ]
    assert len(parsed.items) == 5  # the credential one is skipped when landing, not here


def test_a_broken_export_is_one_skip(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    parsed = openmemory.parse(bad)
    assert parsed.items == [] and parsed.skipped[0].reason.startswith("not a readable export")
    shutil.rmtree(tmp_path / "none", ignore_errors=True)


AWKWARD = b"# Caf\xe9\n\nLatin-1 bytes, not UTF-8.\n"
HUGE = "# Huge\n\n" + "x" * (2 * 1024 * 1024)


PARSERS = {"claude-md": claude_md.parse, "codex": codex.parse, "basic-memory": basic_memory.parse}


@pytest.mark.parametrize(
    ("source", "fixture", "odd", "large", "rest"),
    [
        ("claude-md", "claude-md/shop", "CLAUDE.local.md", ".claude/rules/huge.md", True),
        ("codex", "codex/memories", "memory_summary.md", "MEMORY.md", False),
        ("basic-memory", "basic-memory/notes", "people/odd.md", "huge.md", True),
    ],
)
def test_non_utf8_and_2_mb_files_are_skipped_with_reasons(
    tmp_path: Path, source: str, fixture: str, odd: str, large: str, rest: bool
) -> None:
    """Every Markdown source reads through one guard: a file of non-UTF-8 bytes and a 2 MB file
    are each one skip naming why, and the rest of the tree still imports (Codex's two memory
    files are both taken here, so nothing is left)."""
    root = tmp_path / "tree"
    shutil.copytree(DATA / fixture, root)
    for name in (odd, large):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / odd).write_bytes(AWKWARD)
    (root / large).write_text(HUGE, encoding="utf-8")
    parsed = PARSERS[source](root)
    reasons = {s.what.rsplit("/", 1)[-1]: s.reason for s in parsed.skipped}
    assert reasons[odd.rsplit("/", 1)[-1]].startswith("not UTF-8")
    assert reasons[large.rsplit("/", 1)[-1]].startswith("too large")
    assert bool(parsed.items) == rest
    assert all(odd not in i.file and large not in i.file for i in parsed.items)
