"""The two hashes, the chunk id and the frame key."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.memfile.hashes import (
    blob_sha_of,
    chunk_id_of,
    content_hash_of,
    digest_of,
    frame_key_of,
    is_content_hash,
)
from headd.memfile.parse import parse_memory
from headd.memfile.text import utf16_len


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_blob_sha_equals_pygit2_for_any_text(text: str) -> None:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates are not text a file can hold
        return
    assert blob_sha_of(text) == str(pygit2.hash(data)) == blob_sha_of(data)


@settings(max_examples=100, deadline=None)
@given(st.binary())
def test_blob_sha_equals_pygit2_for_any_bytes(data: bytes) -> None:
    assert blob_sha_of(data) == str(pygit2.hash(data))


def test_blob_sha_equals_git_hash_object(tmp_path: Path) -> None:
    file = tmp_path / "m.html"
    file.write_bytes(memory_html().encode())
    out = subprocess.run(
        ["git", "hash-object", str(file)], check=True, capture_output=True, text=True
    )
    assert blob_sha_of(memory_html()) == out.stdout.strip()


def test_content_hash_is_sha256_of_the_canonical_text() -> None:
    html = memory_html(article="<p><mark>A  b.</mark></p>\n<ul><li>one</li><li>two</li></ul>")
    expected = "sha256:" + hashlib.sha256(b"A b. one two").hexdigest()
    assert content_hash_of(html) == expected == digest_of("A b. one two")
    assert parse_memory("areas/x.html", html).content_hash == expected
    assert is_content_hash(expected) and not is_content_hash("sha256:XYZ")


def test_content_hash_of_bare_article_markup_equals_the_whole_file() -> None:
    inner = "<p><mark>Rows count.</mark></p><table><tr><td>a</td><td>b</td></tr></table>"
    assert content_hash_of(inner) == content_hash_of(memory_html(article=inner))
    assert content_hash_of("\ufeff" + memory_html(article=inner)) == content_hash_of(
        memory_html(article=inner)
    )


def test_content_hash_keeps_pre_whitespace_and_drops_comments() -> None:
    base = content_hash_of(memory_html(article="<p><mark>A.</mark></p><pre>  x\n  y</pre>"))
    # Block edges are collapsible spaces; only the first and last collapsible pieces are trimmed.
    assert base == digest_of("A.   x\n  y")
    assert base != content_hash_of(memory_html(article="<p><mark>A.</mark></p><pre>x y</pre>"))
    assert base == content_hash_of(
        memory_html(article="<p><mark>A.</mark></p><!--n--><pre>  x\n  y</pre>")
    )


def test_chunk_id_formula() -> None:
    h = "sha256:" + "0" * 64
    assert chunk_id_of(h, 3) == hashlib.sha256(f"{h}:3".encode()).hexdigest()
    assert chunk_id_of(h, 0) != chunk_id_of(h, 1)


@pytest.mark.parametrize(
    ("claim", "key"),
    [
        ("The capital of India is New Delhi.", "the capital of india is"),
        ("The  Capital of India is\u00a0X", "the capital of india is"),
        ("The\u3000deploy window is Tuesday", "the deploy window is"),
        ("Owned by ops.", None),  # frame of two words
        ("The capital of India is a city with far more than six words here.", None),
        ("Nothing links here at all", None),
        ("The island is", None),  # no value after the linking word
        ("The thesis holds up well", None),  # 'is' inside 'thesis' is no word
    ],
)
def test_frame_key(claim: str, key: str | None) -> None:
    assert frame_key_of(claim) == key


def test_utf16_len_counts_astral_characters_twice() -> None:
    assert utf16_len("a🚀é") == 4
