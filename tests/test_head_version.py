"""Versions against real git repositories (pygit2 on temp dirs): load, advance, sharing.

Ported from memhtml's packages/head/tests/head.test.ts, plus the property the issue asks for: a
version advanced through any sequence of commits equals one loaded from scratch at each commit,
old versions never change, and untouched records and buckets are shared by identity.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.head_corpus import BROKEN_HTML, make_corpus, memory_for
from support.stores import Store

from headd.errors import GitFailure
from headd.head import parallel_parse
from headd.head.indexes import IndexedView, IndexesBuilder
from headd.head.lexical import code_tokens, indexed_text, term_frequencies, tokenize
from headd.head.version import (
    HeadVersion,
    advance_head,
    is_candidate_path,
    load_head,
    version_from_records,
)
from headd.memfile.hashes import content_hash_of


def eligible(repo: Store, sha: str) -> list[str]:
    """The candidate rule restated from the tree, not from the head."""
    return [
        path
        for path in repo.tree_paths(sha)
        if path.endswith(".html")
        and not path.startswith(".memhtml/")
        and not path.endswith("/index.html")
        and path not in ("index.html", "README.html")
    ]


def assert_same_version(advanced: IndexedView, fresh: IndexedView) -> None:
    assert advanced.sha == fresh.sha
    assert dict(advanced.indexes.records) == dict(fresh.indexes.records)
    assert advanced.indexes.by_content_hash == fresh.indexes.by_content_hash
    assert advanced.indexes.by_frame_key == fresh.indexes.by_frame_key
    assert advanced.indexes.inbound == fresh.indexes.inbound
    assert advanced.indexes.by_entity == fresh.indexes.by_entity
    assert advanced.indexes.lexical == fresh.indexes.lexical
    assert advanced.indexes == fresh.indexes
    if isinstance(advanced, HeadVersion) and isinstance(fresh, HeadVersion):
        assert sorted(advanced.skipped, key=lambda s: s.path) == sorted(
            fresh.skipped, key=lambda s: s.path
        )


def test_is_candidate_path() -> None:
    assert is_candidate_path("areas/inbox/a.html")
    assert is_candidate_path("archive/2025/areas/inbox/a.html")
    assert not is_candidate_path("README.html")  # the store's own, which headctl init writes
    assert is_candidate_path("areas/README.html")
    assert not is_candidate_path("index.html")
    assert not is_candidate_path("areas/index.html")
    assert not is_candidate_path(".memhtml/state/x.html")
    assert not is_candidate_path("sitemap.xml")
    assert not is_candidate_path("areas/inbox/.gitkeep")
    assert is_candidate_path("areas/index.html.html")


def test_load_counts_every_eligible_file(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(
        tmp_path,
        300,
        [
            ("areas/inbox/broken.html", BROKEN_HTML),
            ("index.html", "<!doctype html><html><body>generated</body></html>"),
            ("sitemap.xml", "<urlset/>"),
            (".memhtml/state/x.html", BROKEN_HTML),
        ],
    )
    head = load_head(repo.repo, sha)
    candidates = eligible(repo, sha)
    assert "areas/inbox/broken.html" in candidates and "README.html" not in candidates
    assert head.sha == sha and head.parent is None
    skipped = sorted(skip.path for skip in head.skipped)
    assert skipped == ["areas/inbox/broken.html"]
    assert all(skip.reason for skip in head.skipped)
    assert head.size == len(candidates) - len(skipped) == 300
    assert sorted(head.paths()) == sorted(p for p in candidates if p not in skipped)
    assert head.record("index.html") is None


def test_answers_every_index_from_the_parsed_records(tmp_path: Path) -> None:
    repo, sha, files = make_corpus(tmp_path, 30)
    head = load_head(repo.repo, sha)
    eleven = files[11]
    assert head.by_content_hash(content_hash_of(eleven.html)) == eleven.path
    assert head.by_frame_key("the capital of country11 is") == [eleven.path]
    assert head.inbound(f"/{eleven.path}") == [memory_for(12).path]
    crop4 = sorted(f.path for index, f in enumerate(files) if index % 7 == 4)
    assert head.by_entity("topic:crop4") == crop4
    assert head.by_entity("topic:nobody") == []
    assert head.inbound("/nowhere.html") == []
    assert head.by_frame_key("no such frame") == []


def test_archived_records_stay_out_of_the_active_indexes(tmp_path: Path) -> None:
    repo, sha, files = make_corpus(tmp_path, 20)
    head = load_head(repo.repo, sha)
    archived = files[9]
    assert archived.path.startswith("archive/")
    record = head.record(archived.path)
    assert record is not None and record.archived
    assert head.by_content_hash(content_hash_of(archived.html)) is None
    assert head.by_frame_key("the capital of country9 is") == []
    assert head.by_entity("place:country9") == [archived.path]
    assert head.inbound(f"/{archived.path}") == [memory_for(10).path]
    assert "country9" not in head.lexical.postings


def test_advance_shares_every_untouched_record_and_bucket(tmp_path: Path) -> None:
    repo, sha, files = make_corpus(tmp_path, 40)
    before = load_head(repo.repo, sha)
    edited = memory_for(7)
    assert "grows crop0" in edited.html
    target = repo.commit([(edited.path, edited.html.replace("grows crop0", "grows cropX"))])
    after = advance_head(repo.repo, before, target)
    assert after.sha == target and after.parent is before and after.size == before.size
    for f in files:
        if f.path != edited.path:
            assert after.record(f.path) is before.record(f.path)
    assert after.record(edited.path) is not before.record(edited.path)
    assert "cropX" in after.record(edited.path).body_text  # type: ignore[union-attr]
    assert after.record(edited.path).blob_sha == repo.blob_at(target, edited.path)  # type: ignore[union-attr]
    # The parent is immutable.
    assert "grows crop0" in before.record(edited.path).body_text  # type: ignore[union-attr]
    assert "cropx" in after.lexical.postings and "cropx" not in before.lexical.postings
    # Only the two buckets whose entry for the edited file changed are new objects.
    changed = {
        t
        for t in before.lexical.postings
        if after.lexical.postings.get(t) is not before.lexical.postings[t]
    }
    assert changed == {"crop0"}
    for key, members in before.indexes.by_entity.items():
        assert after.indexes.by_entity[key] is members
    assert_same_version(after, load_head(repo.repo, target))


def test_a_head_only_edit_shares_every_bucket(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 12)
    before = load_head(repo.repo, sha)
    edited = memory_for(4)
    html = edited.html.replace("</head>", '<meta name="memhtml-tag" content="extra">\n</head>')
    target = repo.commit([(edited.path, html)])
    after = advance_head(repo.repo, before, target)
    assert after.record(edited.path).tags == ("region-4", "extra")  # type: ignore[union-attr]
    assert after.lexical.postings is before.lexical.postings or all(
        after.lexical.postings[t] is b for t, b in before.lexical.postings.items()
    )
    assert (
        after.lexical.lengths is before.lexical.lengths
        or (after.lexical.lengths == before.lexical.lengths).all()
    )
    assert_same_version(after, load_head(repo.repo, target))


def test_advance_removes_adds_and_reparses_a_repaired_skip(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 12, [("areas/inbox/broken.html", BROKEN_HTML)])
    v1 = load_head(repo.repo, sha)
    assert len(v1.skipped) == 1
    fresh = ("areas/inbox/fresh.html", memory_for(500).html)
    gone = memory_for(5)
    sha2 = repo.commit(
        [(gone.path, None), fresh, ("areas/inbox/broken.html", memory_for(501).html)]
    )
    v2 = advance_head(repo.repo, v1, sha2)
    assert v2.record(gone.path) is None and v1.record(gone.path) is not None
    assert v2.record(fresh[0]).claim == "The capital of Country500 is City500."  # type: ignore[union-attr]
    assert v2.record("areas/inbox/broken.html").claim == "The capital of Country501 is City501."  # type: ignore[union-attr]
    assert [skip.path for skip in v2.skipped] == []
    assert v2.size == v1.size + 1
    assert v2.by_content_hash(content_hash_of(gone.html)) is None
    assert v2.by_frame_key("the capital of country5 is") == []
    assert v2.by_entity("place:country5") == []
    assert v2.inbound(f"/{gone.path}") == [memory_for(6).path]
    sha3 = repo.commit([(fresh[0], BROKEN_HTML)])
    v3 = advance_head(repo.repo, v2, sha3)
    assert sorted(skip.path for skip in v3.skipped) == [fresh[0]]
    assert v3.record(fresh[0]) is None
    sha4 = repo.commit([], "empty")
    v4 = advance_head(repo.repo, v3, sha4)
    assert v4.sha == sha4 and len(v4.skipped) == 1 and v4.parent is v3
    assert v4.indexes is v3.indexes
    assert_same_version(v4, load_head(repo.repo, sha4))


def test_a_parallel_load_equals_the_serial_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo, sha, _ = make_corpus(tmp_path, 40, [("areas/inbox/broken.html", BROKEN_HTML)])
    serial = load_head(repo.repo, sha, workers=1)
    with caplog.at_level(logging.WARNING, logger="headd.head.parallel_parse"):
        parallel = load_head(repo.repo, sha, workers=2)
    # The pool really ran: a fallback to the inline parse logs a warning (and would be equal).
    assert not [r for r in caplog.records if "parallel parse unavailable" in r.getMessage()]
    assert_same_version(parallel, serial)
    assert [s.path for s in parallel.skipped] == [s.path for s in serial.skipped]


def test_a_pool_failing_part_way_is_finished_inline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, sha, _ = make_corpus(tmp_path, 40, [("areas/inbox/broken.html", BROKEN_HTML)])
    serial = load_head(repo.repo, sha, workers=1)
    real_run_of = parallel_parse._run_of

    def first_run_only(start: int, stop: int, payload: bytes) -> parallel_parse.ParsedRun:
        if start > 0:
            raise ValueError("a worker died")
        return real_run_of(start, stop, payload)

    monkeypatch.setattr(parallel_parse, "_run_of", first_run_only)
    with caplog.at_level(logging.WARNING, logger="headd.head.parallel_parse"):
        finished = load_head(repo.repo, sha, workers=2)
    assert [r for r in caplog.records if "parallel parse unavailable" in r.getMessage()]
    assert_same_version(finished, serial)
    assert list(finished.indexes.records) == list(serial.indexes.records)
    assert [s.path for s in finished.skipped] == [s.path for s in serial.skipped]


def test_coded_inserts_equal_per_record_inserts(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 12)
    records = list(load_head(repo.repo, sha, workers=1).records())
    tokens = code_tokens(tokenize(indexed_text(r)) for r in records if not r.archived)
    one_by_one = IndexesBuilder()
    for record in records:
        one_by_one.insert(record)
    coded = IndexesBuilder()
    coded.insert_coded(records, tokens)
    assert coded.freeze() == one_by_one.freeze()
    # Past the bulk phase (a path already held) the coded insert is the per-record insert.
    again = IndexesBuilder()
    again.insert(records[0])
    again.insert_coded(records, tokens)
    assert again.freeze() == one_by_one.freeze()


def test_a_version_is_immutable(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 2)
    head = load_head(repo.repo, sha)
    for name in ("indexes", "parent", "skipped", "_sha"):
        with pytest.raises(AttributeError):
            setattr(head, name, None)
    with pytest.raises(TypeError):
        head.indexes.records["x"] = None  # type: ignore[index]
    with pytest.raises(ValueError):
        head.lexical.postings["country0"].ids[0] = 7


def test_advance_to_its_own_sha_returns_the_same_version(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 3)
    head = load_head(repo.repo, sha)
    assert advance_head(repo.repo, head, sha) is head


def test_an_unknown_commit_is_a_git_failure(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 2)
    with pytest.raises(GitFailure):
        load_head(repo.repo, "0" * 40)
    with pytest.raises(GitFailure):
        advance_head(repo.repo, load_head(repo.repo, sha), "no-such-ref")


def test_version_from_records_agrees_with_git_and_advances_sharing(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 40)
    from_git = load_head(repo.repo, sha)
    from_records = version_from_records(from_git.records(), sha)
    assert from_records.skipped == () and from_records.parent is None
    assert from_records.indexes == from_git.indexes
    edited = memory_for(3)
    target = repo.commit([(edited.path, edited.html.replace("Country3", "Country3 renamed"))])
    advanced = advance_head(repo.repo, from_records, target)
    assert advanced.parent is from_records
    for path in from_records.paths():
        if path == edited.path:
            assert advanced.record(path) is not from_records.record(path)
        else:
            assert advanced.record(path) is from_records.record(path)


def test_a_changed_path_whose_blob_is_the_parents_keeps_the_parents_record(tmp_path: Path) -> None:
    # A snapshot-built parent already holding the target commit's file for one path (as a
    # snapshot taken after a commit and labelled with its parent would): the diff names the path,
    # the blob is the one the parent holds, so the parent's record object is kept, not re-parsed.
    repo, sha, _ = make_corpus(tmp_path, 6)
    edited = memory_for(2)
    target = repo.commit([(edited.path, edited.html.replace("grows", "raises"))])
    at_target = load_head(repo.repo, target)
    records = [r for r in load_head(repo.repo, sha).records() if r.path != edited.path]
    parent = version_from_records([*records, at_target.record(edited.path)], sha)  # type: ignore[list-item]
    advanced = advance_head(repo.repo, parent, target)
    assert advanced.record(edited.path) is parent.record(edited.path)
    assert advanced.indexes == at_target.indexes


def test_twins_are_held_by_the_first_in_tree_order_and_a_removal_hands_over(tmp_path: Path) -> None:
    # memhtml leaves a hash unmapped when its holder goes while a twin stays active; here the
    # holder is always the first active twin in git tree order, so advancing equals loading.
    twin = memory_for(1).html
    repo, sha, _ = make_corpus(
        tmp_path, 3, [("areas/a-twin.html", twin), ("areas/z-twin.html", twin)]
    )
    head = load_head(repo.repo, sha)
    holder = head.by_content_hash(content_hash_of(twin))
    assert holder == "areas/a-twin.html"
    after = advance_head(repo.repo, head, repo.commit([("areas/a-twin.html", None)]))
    assert after.by_content_hash(content_hash_of(twin)) == "areas/inbox/fact-1.html"
    assert_same_version(after, load_head(repo.repo, after.sha))


# ------------------------------------------------------------------------------------------------
# The anchor corpus: a real store and its real history.


def test_anchor_store_loads_and_every_commit_advances_to_what_a_load_gives(
    anchor_store: Path, anchor_goldens: dict[str, dict]
) -> None:
    repo = pygit2.Repository(str(anchor_store))
    history = [
        str(c.id)
        for c in repo.walk(repo.head.target, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE)
    ]
    assert len(history) == 54
    head = load_head(repo, history[-1])
    golden_paths = set(anchor_goldens)
    held = set(head.paths())
    assert golden_paths <= held
    assert held - golden_paths <= {"misc/outside-buckets.html"}
    assert {s.path for s in head.skipped} >= {p for p in ("areas/invalid/01-two-marks.html",)}
    for path, golden in anchor_goldens.items():
        record = head.record(path)
        assert record is not None
        assert record.blob_sha == golden["blob_sha"]
        assert record.archived == bool(golden["archived"])
    # Advance through every commit; compare with an independent load at every tenth (a load of
    # the whole store per commit would dominate the suite's time) and at the end.
    version = load_head(repo, history[0])
    for index, sha in enumerate(history[1:], start=1):
        version = advance_head(repo, version, sha)
        if index % 10 == 0:
            assert_same_version(version, load_head(repo, sha))
    assert_same_version(version, head)


# ------------------------------------------------------------------------------------------------
# The property: any sequence of commits.

KINDS = ("add", "edit", "head_edit", "rename", "archive", "delete", "dir_move", "break", "restore")
STEP = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 10_000)), min_size=1, max_size=4)


class Model:
    """What the work tree should hold, and the ops that change it (each a plain file change)."""

    def __init__(self, repo: Store, files: dict[str, str]) -> None:
        self.repo = repo
        self.files = dict(files)
        self.serial = 1000

    def paths(self) -> list[str]:
        return sorted(p for p in self.files if p.endswith(".html") and p != "README.html")

    def write(self, path: str, html: str | None) -> None:
        if html is None:
            self.files.pop(path, None)
        else:
            self.files[path] = html
        self.changes.append((path, html))

    def apply(self, kind: str, pick: int) -> None:
        paths = self.paths()
        self.serial += 1
        if kind == "add" or not paths:
            folder = ("areas/inbox", "projects/beta", "resources/gamma")[pick % 3]
            self.write(f"{folder}/new-{self.serial}.html", memory_for(self.serial).html)
            return
        path = paths[pick % len(paths)]
        html = self.files[path]
        if kind == "edit":
            self.write(
                path, html.replace("</article>", f"<p>Edit {self.serial} grows.</p>\n</article>")
            )
        elif kind == "head_edit":
            self.write(
                path,
                html.replace(
                    "</head>", f'<meta name="memhtml-tag" content="t{self.serial}">\n</head>'
                ),
            )
        elif kind == "rename":
            self.write(path, None)
            self.write(path.replace(".html", f"-r{self.serial}.html"), html)
        elif kind == "archive":
            if path.startswith("archive/"):
                return
            self.write(path, None)
            self.write(f"archive/2026/{path}", html)
        elif kind == "delete":
            self.write(path, None)
        elif kind == "dir_move":
            folder = path.rsplit("/", 1)[0]
            moved = f"{folder}-moved{self.serial}"
            for other in [p for p in self.paths() if p.startswith(folder + "/")]:
                content = self.files[other]
                self.write(other, None)
                self.write(moved + other[len(folder) :], content)
        elif kind == "break":
            self.write(path, BROKEN_HTML)
        elif kind == "restore":
            self.write(path, memory_for(pick % 50).html)

    def commit_step(self, step: list[tuple[str, int]]) -> tuple[str, set[str]]:
        self.changes: list[tuple[str, str | None]] = []
        for kind, pick in step:
            self.apply(kind, pick)
        touched = {path for path, _ in self.changes}
        return self.repo.commit(self.changes, "step"), touched


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=1, max_size=4))
@example(
    steps=[
        [("edit", 0)],
        [("head_edit", 1), ("rename", 2)],
        [("archive", 3), ("dir_move", 4), ("delete", 5)],
        [("break", 0), ("restore", 6), ("add", 7)],
    ]
)
def test_property_any_history_advances_to_what_a_load_gives(
    steps: list[list[tuple[str, int]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo, sha, files = make_corpus(Path(tmp), 12)
        model = Model(repo, {f.path: f.html for f in files})
        version = load_head(repo.repo, sha)
        history: list[tuple[HeadVersion, HeadVersion]] = [(version, load_head(repo.repo, sha))]
        for step in steps:
            parent = version
            target, touched = model.commit_step(step)
            version = advance_head(repo.repo, parent, target)
            fresh = load_head(repo.repo, target)
            assert_same_version(version, fresh)
            assert version.parent is parent
            # Untouched records, and buckets no touched record names, are the parent's objects.
            for path in parent.paths():
                if path not in touched:
                    assert version.record(path) is parent.record(path)
            touched_tokens: set[str] = set()
            touched_entities: set[str] = set()
            for path in touched:
                for view in (parent, version):
                    record = view.record(path)
                    if record is not None:
                        touched_tokens |= set(term_frequencies(record))
                        touched_entities |= set(record.entities)
            for token, bucket in parent.lexical.postings.items():
                if token not in touched_tokens:
                    assert version.lexical.postings[token] is bucket
            for entity, members in parent.indexes.by_entity.items():
                if entity not in touched_entities:
                    assert version.indexes.by_entity[entity] is members
            history.append((version, fresh))
        # Old versions never changed: each still equals an independent load of its commit.
        for old, independent in history:
            assert_same_version(old, independent)
