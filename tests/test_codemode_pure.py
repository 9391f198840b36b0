"""Code-mode's pure parts: the import rewrite, the seed's field projection, the walk order."""

from __future__ import annotations

from pathlib import Path

import pygit2
from hypothesis import given
from hypothesis import strategies as st
from support.codemode import CORPUS, NESTED_ARTICLE
from support.memory import memory_html
from support.stores import make_store

from headd.codemode.corpus import CorpusCache, html_files
from headd.codemode.imports import rewrite_imports
from headd.codemode.projection import fields_of

SOURCE = 'globalThis.__modules["/workspace/lib/corpus.mjs"]'
FS = 'globalThis.__modules["node:fs"]'


def test_each_import_form_of_a_guest_module_becomes_a_binding() -> None:
    script = (
        'import { corpus, chain as follow } from "/workspace/lib/corpus.mjs"\n'
        "import * as fs from 'node:fs';\n"
        'import fsDefault, { readFileSync } from "fs"\n'
        'import "node:fs"\n'
        "console.log(1)\n"
    )
    assert rewrite_imports(script) == (
        f"const {{ corpus, chain: follow }} = {SOURCE};\n"
        f"const fs = {FS};\n"
        'const fsDefault = globalThis.__modules["fs"].default; '
        'const { readFileSync } = globalThis.__modules["fs"];\n'
        "\n"
        "console.log(1)\n"
    )


def test_an_import_spread_over_lines_keeps_the_scripts_line_count() -> None:
    script = 'import {\n  corpus,\n  edges,\n} from "/workspace/lib/corpus.mjs"\nthrow 1\n'
    rewritten = rewrite_imports(script)
    assert rewritten.count("\n") == script.count("\n")
    assert rewritten.startswith(f"const {{ corpus, edges }} = {SOURCE};")


def test_any_other_import_is_left_to_fail_as_written() -> None:
    script = (
        'import { x } from "/etc/passwd"\nimport cp from "node:child_process"\n'
        'const m = await import("/workspace/lib/corpus.mjs")\n'
    )
    assert rewrite_imports(script) == script


names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)


@given(st.lists(names, min_size=1, max_size=5), st.text(max_size=60))
def test_rewriting_keeps_lines_and_the_rest_of_the_script(imported: list[str], rest: str) -> None:
    rest = rest.replace("import", "")
    script = f'import {{ {", ".join(imported)} }} from "/workspace/lib/corpus.mjs"\n{rest}'
    rewritten = rewrite_imports(script)
    assert rewritten.count("\n") == script.count("\n")
    assert rewritten.endswith("\n" + rest)
    assert rewrite_imports(rest) == rest


def test_fields_follow_the_seeds_selectors() -> None:
    html = memory_html(
        "  Spaced   title ",
        "unused",
        article=NESTED_ARTICLE,
        memory_type="episodic",
        entities=(" padded ", "service:a"),
        tags=("t1", "t1"),
        links=(("caused_by", "/a.html"), ("caused_by", "/a.html")),
        extra_head='<meta name="memhtml-tag" content="">',
    )
    assert fields_of(html) == {
        "title": "Spaced   title",  # trimmed, not collapsed
        "memoryType": "episodic",
        "status": "active",
        "claim": "The nested claim is found.",  # `article mark`, a descendant
        "tags": ["t1", "t1"],  # repeats kept, blanks dropped
        "entities": [" padded ", "service:a"],  # a meta's content as written
        "links": [{"rel": "memhtml-caused-by", "href": "/a.html"}] * 2,  # the rel as written
        "facets": {"owner": "sre", "tier": "one"},  # the <dd> right after each <dt>
        "citations": ["Runbook A"],
        "eventAt": "2026-01-02",
    }


def test_a_file_without_the_vocabulary_has_empty_fields() -> None:
    fields = fields_of("<!doctype html><title>x</title><p>no article</p>")
    assert fields == {
        "title": "x",
        "memoryType": "",
        "status": "",
        "claim": "",
        "tags": [],
        "entities": [],
        "links": [],
        "facets": {},
        "citations": [],
        "eventAt": None,
    }


def test_the_corpus_walks_sorted_skips_listings_and_shares_projections(tmp_path: Path) -> None:
    sha = make_store(tmp_path, CORPUS)
    repo = pygit2.Repository(str(tmp_path))
    tree = repo[sha].peel(pygit2.Tree)
    paths = [path for path, _blob in html_files(tree)]
    assert paths == sorted("/" + p for p in CORPUS if not p.endswith("index.html"))
    cache = CorpusCache()
    first = cache.corpus_json(repo, sha)
    assert cache.corpus_json(repo, sha) is first  # the version's bytes are kept
    assert len(cache._projections) == len(paths)  # one projection per distinct blob
