"""The load's parse pool (``parallel_parse`` over ``parse_worker`` processes) and the pure-Python
tokenizer its workers run (``tokens``): same results as the inline path, failures end in an
inline parse, never an error."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.head_corpus import BROKEN_HTML, make_corpus

from headd.head import parallel_parse
from headd.head.blob_parse import SkippedFile, read_and_parse
from headd.head.tokens import STOP_WORDS, code_token_lists, tokenize
from headd.head.version import _candidate_blobs, load_head

_WORD = re.compile(r"\w+")


def reference_tokens(text: str) -> list[str]:
    """The definition: maximal runs of Unicode word characters, lowercased, minus stop words."""
    return [t for t in _WORD.findall(text.lower()) if t not in STOP_WORDS]


def test_the_ascii_byte_table_splits_where_the_regex_does() -> None:
    every_ascii = "".join(chr(c) for c in range(128))
    for separator in every_ascii:
        text = f"Alpha{separator}BETA_9{separator}{separator}gamma"
        assert tokenize(text) == reference_tokens(text), repr(separator)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
def test_tokenize_is_the_regex_definition(text: str) -> None:
    assert tokenize(text) == reference_tokens(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a1", "b", "c_d", "é", "x"]), max_size=6), max_size=6))
def test_coded_token_lists_round_trip(documents: list[list[str]]) -> None:
    names, codes, sizes = code_token_lists(documents)
    assert sizes == [len(tokens) for tokens in documents]
    assert [names[c] for c in codes] == [t for tokens in documents for t in tokens]
    assert names == list(dict.fromkeys(t for tokens in documents for t in tokens))
    assert codes.itemsize == 4


def _entries(repo: pygit2.Repository, sha: str) -> list[tuple[str, pygit2.Oid]]:
    return list(_candidate_blobs(repo.revparse_single(sha).peel(pygit2.Commit).tree))


def test_runs_come_back_in_tree_order_as_the_inline_parse_reads_them(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 30, [("areas/inbox/broken.html", BROKEN_HTML)])
    entries = _entries(repo.repo, sha)
    runs = list(parallel_parse.parse_runs(repo.repo.path, entries, 2))
    assert [(r.start, r.stop) for r in runs][0][0] == 0 and runs[-1].stop == len(entries)
    assert all(a.stop == b.start for a, b in zip(runs, runs[1:], strict=False))
    for run in runs:
        for (path, oid), item in zip(entries[run.start : run.stop], run.items, strict=True):
            inline = read_and_parse(repo.repo, path, oid)
            if isinstance(inline, SkippedFile):
                assert item == (inline.path, inline.reason)
            else:
                assert item == inline


def test_runs_without_tokens_carry_the_same_records_and_no_tokens(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 30, [("areas/inbox/broken.html", BROKEN_HTML)])
    entries = _entries(repo.repo, sha)
    with_tokens = list(parallel_parse.parse_runs(repo.repo.path, entries, 2))
    without = list(parallel_parse.parse_runs(repo.repo.path, entries, 2, tokens=False))
    assert [r.items for r in without] == [r.items for r in with_tokens]
    assert any(len(r.tokens[1]) for r in with_tokens)
    assert all(r.tokens[0] == [] and len(r.tokens[1]) == 0 for r in without)


def test_a_worker_that_fails_reports_why_and_the_load_finishes_inline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo, sha, _ = make_corpus(tmp_path, 12)
    entries = _entries(repo.repo, sha)
    with caplog.at_level(logging.WARNING, logger="headd.head.parallel_parse"):
        runs = list(parallel_parse.parse_runs(str(tmp_path / "no-such-repo"), entries, 2))
    assert runs == []
    warned = [r for r in caplog.records if "parallel parse unavailable" in r.getMessage()]
    assert warned and "parse worker" in caplog.text


def test_a_caller_stopping_early_stops_the_workers(tmp_path: Path) -> None:
    repo, sha, _ = make_corpus(tmp_path, 24)
    entries = _entries(repo.repo, sha)
    runs = parallel_parse.parse_runs(repo.repo.path, entries, 2)
    first = next(runs)
    assert first.start == 0
    runs.close()  # kills and reaps the workers; nothing left running or raised
    serial = load_head(repo.repo, sha, workers=1)
    parsed = [item for item in first.items if not isinstance(item, tuple)]
    assert parsed and all(serial.record(record.path) == record for record in parsed)
