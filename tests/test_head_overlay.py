"""with_overlay: memhtml's overlay tests (packages/head/tests/overlay.test.ts), ported, plus the
property that an overlay of ops equals the version committed from the same ops."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.head_corpus import BROKEN_HTML, MapView, make_corpus, memory_for

from headd.errors import GitFailure, InvalidMemory, InvalidOp, PathNotFound
from headd.head.indexes import IndexedView
from headd.head.overlay import with_overlay
from headd.head.texts import record_text
from headd.head.version import load_head, parse_record
from headd.memfile.hashes import content_hash_of
from headd.memfile.head_edit import add_entity, add_link, remove_entity, remove_link
from headd.ops import Archive, Label, LinkOp, Move, OverlayOp, Put, Unlabel, UnlinkOp
from headd.record import Link
from headd.store.git_io import blob_text

BASE_FILES = [memory_for(i) for i in (0, 1, 2, 3, 9)]
#: The base's files by blob id: what git's object database answers for a version's records.
BASE_BLOBS = {parse_record(f.path, f.html).blob_sha: f.html for f in BASE_FILES}


def overlay_of(view: MapView | IndexedView, ops: list[OverlayOp]) -> IndexedView:
    """``with_overlay`` reading the base's texts by blob id, as the store's reader does."""
    return with_overlay(view, ops, BASE_BLOBS.__getitem__)


def text(view: IndexedView, path: str) -> str:
    """The file text of the record at ``path`` in ``view`` (the overlay's own, else the blob)."""
    record = view.record(path)
    assert record is not None
    return record_text(view.pending_texts, record, BASE_BLOBS.__getitem__)


@pytest.fixture()
def base() -> MapView:
    return MapView([parse_record(f.path, f.html) for f in BASE_FILES], "basesha")


def test_put_inserts_and_keeps_the_base_sha(base: MapView) -> None:
    fresh = memory_for(50)
    overlay = overlay_of(base, [Put(path="areas/inbox/fresh.html", html=fresh.html)])
    assert overlay.sha == "basesha" and overlay.size == 6
    assert overlay.record("areas/inbox/fresh.html").claim == "The capital of Country50 is City50."  # type: ignore[union-attr]
    assert overlay.by_content_hash(content_hash_of(fresh.html)) == "areas/inbox/fresh.html"
    assert overlay.by_frame_key("the capital of country50 is") == ["areas/inbox/fresh.html"]
    assert base.size == 5 and base.record("areas/inbox/fresh.html") is None


def test_put_over_an_existing_path_repoints_every_index(base: MapView) -> None:
    two = memory_for(2)
    replaced = memory_for(60).html
    overlay = overlay_of(base, [Put(path=two.path, html=replaced)])
    assert overlay.size == 5
    assert overlay.record(two.path).claim == "The capital of Country60 is City60."  # type: ignore[union-attr]
    assert overlay.by_content_hash(content_hash_of(two.html)) is None
    assert overlay.by_content_hash(content_hash_of(replaced)) == two.path
    assert overlay.by_frame_key("the capital of country2 is") == []
    assert overlay.by_entity("place:country2") == []
    assert overlay.by_entity("place:country60") == [two.path]


def test_archive_moves_the_record_and_drops_it_from_the_active_indexes(base: MapView) -> None:
    one = memory_for(1)
    to = "archive/2026/areas/inbox/fact-1.html"
    overlay = overlay_of(base, [Archive(path=one.path, to=to, html=one.html)])
    assert overlay.record(one.path) is None
    moved = overlay.record(to)
    assert moved is not None and moved.archived and moved.path == to
    assert overlay.size == 5
    assert overlay.by_content_hash(content_hash_of(one.html)) is None
    assert overlay.by_frame_key("the capital of country1 is") == []
    assert overlay.by_entity("place:country1") == [to]
    assert overlay.inbound(f"/{memory_for(0).path}") == [to]
    outside = overlay_of(
        base, [Archive(path=one.path, to="areas/inbox/fact-1-old.html", html=one.html)]
    )
    assert outside.record("areas/inbox/fact-1-old.html").archived  # type: ignore[union-attr]


def test_archive_needs_a_held_path_and_a_filled_op(base: MapView) -> None:
    with pytest.raises(PathNotFound):
        overlay_of(
            base,
            [
                Archive(
                    path="areas/inbox/ghost.html", to="archive/2026/x.html", html=memory_for(1).html
                )
            ],
        )
    with pytest.raises(InvalidOp):
        overlay_of(base, [Archive(path=memory_for(1).path)])


def test_link_splices_the_head_and_keeps_the_content_hash(base: MapView) -> None:
    three = memory_for(3)
    op = LinkOp(path=three.path, rel="contradicts", href="/areas/inbox/fact-1.html")
    overlay = overlay_of(base, [op])
    linked = overlay.record(three.path)
    assert linked is not None
    assert Link("contradicts", "/areas/inbox/fact-1.html") in linked.links
    assert linked.content_hash == content_hash_of(three.html)
    assert linked.blob_sha != base.record(three.path).blob_sha  # type: ignore[union-attr]
    assert '<link rel="memhtml-contradicts" href="/areas/inbox/fact-1.html">' in text(
        overlay, three.path
    )
    assert overlay.inbound("/areas/inbox/fact-1.html") == sorted([three.path, memory_for(2).path])
    twice = overlay_of(overlay, [op])
    assert text(twice, three.path) == text(overlay, three.path)


def test_ops_apply_in_order(base: MapView) -> None:
    fresh = ("areas/inbox/fresh.html", memory_for(70).html)
    href0 = f"/{memory_for(0).path}"
    overlay = overlay_of(
        base,
        [Put(path=fresh[0], html=fresh[1]), LinkOp(path=fresh[0], rel="supersedes", href=href0)],
    )
    assert Link("supersedes", href0) in overlay.record(fresh[0]).links  # type: ignore[union-attr]
    assert overlay.inbound(href0) == sorted([fresh[0], memory_for(1).path])
    three = memory_for(3)
    href = "/areas/inbox/fact-1.html"
    undone = overlay_of(
        base,
        [
            LinkOp(path=three.path, rel="contradicts", href=href),
            UnlinkOp(path=three.path, rel="contradicts", href=href),
        ],
    )
    assert text(undone, three.path) == three.html


def test_unlink_cuts_the_edge_and_keeps_the_content_hash(base: MapView) -> None:
    two = memory_for(2)
    href = f"/{memory_for(1).path}"
    assert Link("relates_to", href) in base.record(two.path).links  # type: ignore[union-attr]
    overlay = overlay_of(base, [UnlinkOp(path=two.path, rel="relates_to", href=href)])
    unlinked = overlay.record(two.path)
    assert unlinked is not None and unlinked.links == ()
    assert unlinked.content_hash == content_hash_of(two.html)
    assert f'href="{href}"' not in text(overlay, two.path)
    assert overlay.inbound(href) == []
    assert len(base.record(two.path).links) == 1  # type: ignore[union-attr]


def test_unlink_refusals(base: MapView) -> None:
    with pytest.raises(PathNotFound, match="ghost"):
        overlay_of(
            base, [UnlinkOp(path="areas/inbox/ghost.html", rel="relates_to", href="/x.html")]
        )
    with pytest.raises(InvalidOp, match="^unknown link rel: friends-with$"):
        overlay_of(base, [UnlinkOp(path=memory_for(2).path, rel="friends-with", href="/x.html")])
    zero = memory_for(0).path
    with pytest.raises(InvalidOp) as caught:
        overlay_of(base, [UnlinkOp(path=zero, rel="relates_to", href="/areas/inbox/x.html")])
    assert (
        caught.value.message
        == f"unlink op names an edge {zero} does not carry: relates_to -> /areas/inbox/x.html"
    )
    assert caught.value.code == "ERR_INVALID_OP"


def test_label_adds_an_entity_and_keeps_the_hash(base: MapView) -> None:
    one = memory_for(1)
    overlay = overlay_of(base, [Label(path=one.path, entity="system:memhtml")])
    labeled = overlay.record(one.path)
    assert labeled is not None
    assert labeled.entities == ("place:country1", "topic:crop1", "system:memhtml")
    assert labeled.content_hash == content_hash_of(one.html)
    assert labeled.blob_sha != base.record(one.path).blob_sha  # type: ignore[union-attr]
    assert overlay.by_entity("system:memhtml") == [one.path]
    assert overlay.by_content_hash(content_hash_of(one.html)) == one.path
    assert overlay.by_frame_key("the capital of country1 is") == [one.path]
    again = overlay_of(overlay, [Label(path=one.path, entity="system:memhtml")])
    assert text(again, one.path) == text(overlay, one.path)


def test_unlabel_and_label_round_trip(base: MapView) -> None:
    two = memory_for(2)
    overlay = overlay_of(base, [Unlabel(path=two.path, entity="place:country2")])
    unlabeled = overlay.record(two.path)
    assert unlabeled is not None and unlabeled.entities == ("topic:crop2",)
    assert unlabeled.content_hash == content_hash_of(two.html)
    assert 'content="place:country2"' not in text(overlay, two.path)
    assert overlay.by_entity("place:country2") == []
    three = memory_for(3)
    round_trip = overlay_of(
        base,
        [
            Label(path=three.path, entity="system:memhtml"),
            Unlabel(path=three.path, entity="system:memhtml"),
        ],
    )
    assert text(round_trip, three.path) == three.html
    assert round_trip.by_entity("system:memhtml") == []


def test_label_refusals(base: MapView) -> None:
    with pytest.raises(PathNotFound, match="ghost"):
        overlay_of(base, [Label(path="areas/inbox/ghost.html", entity="system:memhtml")])
    for malformed in ("Memhtml", "Service:X", "person: laith", "person:", ":x", "a:b "):
        with pytest.raises(InvalidOp, match="^malformed entity: "):
            overlay_of(base, [Label(path=memory_for(1).path, entity=malformed)])
    with pytest.raises(PathNotFound, match="ghost"):
        overlay_of(base, [Unlabel(path="areas/inbox/ghost.html", entity="system:memhtml")])
    one = memory_for(1).path
    with pytest.raises(InvalidOp) as caught:
        overlay_of(base, [Unlabel(path=one, entity="system:memhtml")])
    assert (
        caught.value.message == f"unlabel op names an entity {one} does not carry: system:memhtml"
    )


def test_move_reindexes_at_the_destination_with_the_same_bytes(base: MapView) -> None:
    one, two = memory_for(1), memory_for(2)
    to = "resources/country1/fact-1.html"
    overlay = overlay_of(base, [Move(path=one.path, to=to)])
    assert overlay.size == 5 and overlay.record(one.path) is None
    moved = overlay.record(to)
    assert moved is not None and text(overlay, to) == one.html and not moved.archived
    assert overlay.by_content_hash(content_hash_of(one.html)) == to
    assert overlay.by_entity("place:country1") == [to]
    assert overlay.by_frame_key("the capital of country1 is") == [to]
    assert overlay.inbound(f"/{one.path}") == [two.path]
    repointed = overlay_of(
        overlay,
        [
            UnlinkOp(path=two.path, rel="relates_to", href=f"/{one.path}"),
            LinkOp(path=two.path, rel="relates_to", href=f"/{to}"),
        ],
    )
    assert repointed.inbound(f"/{one.path}") == [] and repointed.inbound(f"/{to}") == [two.path]
    # A move carries earlier head edits with it.
    edited = overlay_of(base, [Label(path=one.path, entity="system:x"), Move(path=one.path, to=to)])
    assert edited.by_entity("system:x") == [to]


def test_move_refuses_a_source_not_held_live(base: MapView) -> None:
    with pytest.raises(PathNotFound, match="ghost"):
        overlay_of(base, [Move(path="areas/inbox/ghost.html", to="resources/x/ghost.html")])
    archived = memory_for(9).path
    with pytest.raises(InvalidOp, match="not hold live"):
        overlay_of(base, [Move(path=archived, to="resources/x/fact-9.html")])


def test_a_put_that_does_not_parse_is_the_parsers_refusal(base: MapView) -> None:
    with pytest.raises(InvalidMemory) as caught:
        overlay_of(base, [Put(path="areas/inbox/bad.html", html=BROKEN_HTML)])
    assert caught.value.violations


def test_link_refusals(base: MapView) -> None:
    with pytest.raises(PathNotFound, match="ghost"):
        overlay_of(base, [LinkOp(path="areas/inbox/ghost.html", rel="relates_to", href="/x.html")])
    with pytest.raises(InvalidOp, match="^unknown link rel: friends-with$"):
        overlay_of(
            base,
            [LinkOp(path=memory_for(0).path, rel="friends-with", href="/areas/inbox/fact-1.html")],
        )


def test_the_first_bad_op_fails_the_batch_and_the_base_is_untouched(base: MapView) -> None:
    with pytest.raises(PathNotFound):
        overlay_of(
            base,
            [
                Put(path="areas/inbox/a.html", html=memory_for(80).html),
                Move(path="areas/inbox/ghost.html", to="x/y.html"),
            ],
        )
    assert base.record("areas/inbox/a.html") is None


def test_a_splice_of_a_text_in_git_needs_a_blob_reader_and_one_parsed_here_does_not(
    base: MapView,
) -> None:
    """A record keeps no text: without a reader, an op that splices a record's head fails with
    a typed error, unless the batch itself parsed that record (its text is the batch's own)."""
    target = BASE_FILES[0].path
    with pytest.raises(GitFailure):
        with_overlay(base, [Label(path=target, entity="system:x")])
    fresh = memory_for(51)
    put = Put(path="areas/inbox/fresh.html", html=fresh.html)
    labelled = with_overlay(base, [put, Label(path=put.path, entity="system:x")])
    assert "system:x" in labelled.record(put.path).entities  # type: ignore[union-attr]
    assert text(labelled, put.path) == add_entity(fresh.html, "system:x")


def test_an_empty_op_list_is_the_base(base: MapView) -> None:
    overlay = overlay_of(base, [])
    assert overlay.sha == base.sha
    assert sorted(overlay.paths()) == sorted(base.paths())
    for record in base.records():
        assert overlay.record(record.path) is record


def test_an_overlay_shares_the_untouched_structure_of_a_version(tmp_path: Path) -> None:
    repo, sha, files = make_corpus(tmp_path, 20)
    version = load_head(repo.repo, sha)
    read_blob = functools.partial(blob_text, repo.repo)
    overlay = with_overlay(version, [Label(path=files[4].path, entity="system:x")], read_blob)
    assert isinstance(overlay, IndexedView) and overlay.sha == version.sha
    for f in files:
        if f.path != files[4].path:
            assert overlay.record(f.path) is version.record(f.path)
    for token, bucket in version.lexical.postings.items():
        assert overlay.lexical.postings[token] is bucket
    # A head-only edit re-files the record under the same keys: every old bucket is kept.
    for name in ("by_entity", "inbound", "by_frame_key", "content_paths"):
        old_map, new_map = getattr(version.indexes, name), getattr(overlay.indexes, name)
        for key, members in old_map.items():
            assert new_map[key] is members, (name, key)
    assert overlay.by_entity("system:x") == [files[4].path]


def test_splices_touch_one_line_only() -> None:
    html = memory_for(5).html
    linked = add_link(html, "laterally_related", '/a&b"c.html')
    assert (
        linked.replace('<link rel="memhtml-laterally-related" href="/a&amp;b&quot;c.html">\n', "")
        == html
    )
    assert remove_link(linked, "laterally_related", '/a&b"c.html') == html
    labeled = add_entity(html, "system:x")
    assert labeled.count("\n") == html.count("\n") + 1
    assert remove_entity(labeled, "system:x") == html
    bare = memory_for(0).html  # no link in its head
    assert "<link" not in bare
    assert remove_link(add_link(bare, "supports", "/x.html"), "supports", "/x.html") == bare
    assert remove_link(html, "supports", "/nowhere.html") == html


# ------------------------------------------------------------------------------------------------
# The property: an overlay equals the version committed from the same ops.

OP_KINDS = ("put_new", "put_replace", "archive", "link", "unlink", "label", "unlabel", "move")
OPS = st.lists(st.tuples(st.sampled_from(OP_KINDS), st.integers(0, 10_000)), min_size=1, max_size=8)
RELS = ("supersedes", "contradicts", "relates_to", "supports")


def _op_for(view: IndexedView, kind: str, pick: int, serial: int, read_blob):  # type: ignore[no-untyped-def]
    live = sorted(r.path for r in view.records() if not r.archived)
    every = sorted(view.paths())
    path = live[pick % len(live)] if live else None
    if kind == "put_new" or path is None:
        return Put(path=f"areas/new/n-{serial}.html", html=memory_for(200 + serial).html)
    record = view.record(path)
    assert record is not None
    if kind == "put_replace":
        return Put(path=path, html=memory_for(400 + serial).html)
    if kind == "archive":
        html = record_text(view.pending_texts, record, read_blob)
        return Archive(path=path, to=f"archive/2026/{path}", html=html)
    if kind == "link":
        target = every[(pick // 7) % len(every)]
        return LinkOp(path=path, rel=RELS[pick % len(RELS)], href=f"/{target}")
    if kind == "unlink":
        if not record.links:
            return None
        link = record.links[pick % len(record.links)]
        return UnlinkOp(path=path, rel=link.rel, href=link.href)
    if kind == "label":
        return Label(path=path, entity=f"system:s{pick % 5}")
    if kind == "unlabel":
        if not record.entities:
            return None
        return Unlabel(path=path, entity=record.entities[pick % len(record.entities)])
    return Move(path=path, to=f"resources/moved/m-{serial}.html")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_property_an_overlay_equals_the_committed_version(ops: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo, sha, _ = make_corpus(Path(tmp), 10)
        version = load_head(repo.repo, sha)
        read_blob = functools.partial(blob_text, repo.repo)
        overlay: IndexedView = version
        applied = []
        for serial, (kind, pick) in enumerate(ops):
            op = _op_for(overlay, kind, pick, serial, read_blob)
            if op is None:
                continue
            overlay = with_overlay(overlay, [op], read_blob)
            applied.append(op)
        # The same ops in one batch give the same view as applied one at a time.
        batch = with_overlay(version, applied, read_blob)
        assert batch.indexes == overlay.indexes
        # Commit what the overlay holds, with pygit2, and load that commit from scratch.
        changes: list[tuple[str, str | None]] = [
            (p, None) for p in version.paths() if p not in overlay
        ]
        changes += [
            (r.path, record_text(overlay.pending_texts, r, read_blob))
            for r in overlay.records()
            if version.record(r.path) is not r
        ]
        committed = load_head(repo.repo, repo.commit(changes, "ops"))
        assert dict(committed.indexes.records) == dict(overlay.indexes.records)
        assert committed.indexes == overlay.indexes
        assert overlay.sha == version.sha
