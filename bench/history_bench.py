"""Advance through a real history and check it against loads from scratch, at every commit.

A public notes repository (markdown, thousands of commits: adds, edits, renames, deletes, directory
moves, as people really make them) is converted commit by commit into a memory store: each
``<dir>/<name>.md`` becomes ``resources/<dir>/<name>.html`` (title from the ``#`` heading, claim the
first sentence, paragraphs and code fences as memhtml writes them). Every 13th note that a commit
deletes is archived instead (moved under ``archive/<year>/`` with the stamps), so archive moves
appear too. Then the replay walks the converted history: ``advance_head`` from the previous version
at every commit, compared with a version built from scratch at that commit:

- at every commit, against ``version_from_records`` over the commit's tree parsed afresh (parses are
  memoized by blob sha, which is what keeps 2,000+ full builds affordable: the fold under test is
  the same, the parse is a pure function of the blob);
- every ``--full-every`` commits, against ``load_head`` itself.

``python -m bench.history_bench SOURCE_REPO WORK_DIR`` prints one JSON summary and exits 1 on the
first inequality, naming the commit. The source repository is not part of this project: bring one
with the search tool's fetch (we used jbranchaud/til, 2,351 first-parent commits).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pygit2

from bench.support.stores import write_tree

_FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s+(.*))?$", re.S)


def markdown_to_memory(md: str, created: str) -> str:
    """A markdown note as a memory file in memhtml's template."""
    lines = md.replace("\r\n", "\n").split("\n")
    title = ""
    blocks: list[tuple[str, str, str]] = []  # (kind, lang, text)
    para: list[str] = []
    fence: list[str] | None = None
    lang = ""
    for line in lines:
        if fence is not None:
            if line.strip() == "```":
                blocks.append(("code", lang, "\n".join(fence)))
                fence = None
            else:
                fence.append(line)
            continue
        m = _FENCE.match(line.strip())
        if m:
            if para:
                blocks.append(("p", "", " ".join(para)))
                para = []
            fence, lang = [], m.group(1).lower()
            continue
        if line.startswith("# ") and not title:
            title = line[2:].strip()
            continue
        if not line.strip():
            if para:
                blocks.append(("p", "", " ".join(para)))
                para = []
            continue
        para.append(line.strip())
    if fence is not None:
        blocks.append(("code", lang, "\n".join(fence)))
    if para:
        blocks.append(("p", "", " ".join(para)))

    esc = html.escape
    first = next((i for i, b in enumerate(blocks) if b[0] == "p" and b[2].strip()), None)
    if first is None:
        claim, rest = (title or "Untitled note"), ""
    else:
        m = _SENTENCE.match(blocks[first][2].strip())
        claim, rest = (m.group(1), m.group(2) or "") if m else (blocks[first][2].strip(), "")
    article = [
        f"<p><mark>{esc(claim, quote=False)}</mark>{' ' + esc(rest, quote=False) if rest else ''}</p>"
    ]
    for i, (kind, lng, text) in enumerate(blocks):
        if i == first:
            continue
        if kind == "p":
            article.append(f"<p>{esc(text, quote=False)}</p>")
        else:
            attr = f' data-lang="{esc(lng)}"' if lng else ""
            article.append(
                f"<figure><pre><code{attr}>{esc(text, quote=False)}</code></pre></figure>"
            )
    head = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(title or claim[:80], quote=False)}</title>",
        '<meta name="memhtml-type" content="semantic">',
        '<meta name="memhtml-status" content="active">',
        f'<meta name="memhtml-created" content="{created}">',
        f'<meta name="memhtml-updated" content="{created}">',
        "</head>",
        "<body>",
        "<article>",
    ]
    return "\n".join([*head, *article, "</article>", "</body>", "</html>", ""])


def _stamp_archived(text: str, when: str) -> str:
    text = text.replace(
        '<meta name="memhtml-status" content="active">',
        '<meta name="memhtml-status" content="archived">',
    )
    return text.replace("</head>", f'<meta name="memhtml-archived" content="{when}">\n</head>', 1)


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def convert(source: Path, dest: Path, limit: int | None = None) -> list[str]:
    """Write the converted history into a new repository at ``dest``; return its commits."""
    src = pygit2.Repository(str(source))
    out = pygit2.init_repository(str(dest), bare=True, initial_head="main")
    walker = src.walk(src.head.target, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE)
    walker.simplify_first_parent()
    memo: dict[tuple[str, str], pygit2.Oid] = {}
    files: dict[str, pygit2.Oid] = {}
    archived_count = 0
    parent: list[pygit2.Oid] = []
    shas: list[str] = []
    for n, commit in enumerate(walker):
        if limit is not None and n >= limit:
            break
        when = _iso(commit.commit_time)
        now_notes: dict[str, pygit2.Oid] = {}
        for entry in _walk_tree(src, commit.tree, ""):
            path, oid = entry
            if "/" not in path or not path.endswith(".md"):
                continue
            d, name = path.rsplit("/", 1)
            dst = f"resources/{d}/{name[:-3]}.html"
            key = (str(oid), dst)
            if key not in memo:
                blob = src[oid]
                assert isinstance(blob, pygit2.Blob)
                text = markdown_to_memory(blob.data.decode("utf-8", "replace"), when)
                memo[key] = out.create_blob(text.encode("utf-8"))
            now_notes[dst] = memo[key]
        # deletions: every 13th becomes an archive move instead
        for gone in sorted(set(k for k in files if not k.startswith("archive/")) - set(now_notes)):
            archived_count += 1
            if archived_count % 13 == 0:
                year = when[:4]
                old = out[files[gone]]
                assert isinstance(old, pygit2.Blob)
                stamped = _stamp_archived(old.data.decode("utf-8"), when)
                files[f"archive/{year}/{gone}"] = out.create_blob(stamped.encode("utf-8"))
        files = {k: v for k, v in files.items() if k.startswith("archive/")} | now_notes
        tree = write_tree(out, files)
        sig = pygit2.Signature("history", "history@headd.local", commit.commit_time, 0)
        sha = out.create_commit("refs/heads/main", sig, sig, commit.message, tree, parent)
        parent = [sha]
        shas.append(str(sha))
    return shas


def _walk_tree(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Any:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            sub = repo[entry.id]
            assert isinstance(sub, pygit2.Tree)
            yield from _walk_tree(repo, sub, path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id


def versions_equal(a: Any, b: Any) -> str | None:
    """None when two versions hold equal records and indexes, else the first field that differs."""
    ia, ib = a.indexes, b.indexes
    for name in (
        "records",
        "by_content_hash",
        "content_paths",
        "by_frame_key",
        "inbound",
        "by_entity",
        "lexical",
    ):
        if getattr(ia, name) != getattr(ib, name):
            return f"indexes.{name} differ"
    if a.sha != b.sha:
        return "sha differs"
    return None


def replay(store: Path, shas: list[str], full_every: int) -> dict[str, Any]:
    """Advance through ``shas`` and compare each version with one built from scratch."""
    from headd.head.version import advance_head, load_head, version_from_records
    from headd.memfile.parse import parse_memory

    repo = pygit2.Repository(str(store))
    memo: dict[tuple[str, str], Any] = {}

    def scratch(sha: str) -> Any:
        commit = repo[sha]
        assert isinstance(commit, pygit2.Commit)
        records = []
        for path, oid in _walk_tree(repo, commit.tree, ""):
            key = (str(oid), path)
            if key not in memo:
                blob = repo[oid]
                assert isinstance(blob, pygit2.Blob)
                memo[key] = parse_memory(path, blob.data)
            records.append(memo[key])
        return version_from_records(records, sha)

    t0 = time.perf_counter()
    version = load_head(repo, shas[0])
    advance_s = 0.0
    checked = full = 0
    for i, sha in enumerate(shas[1:], start=1):
        t = time.perf_counter()
        version = advance_head(repo, version, sha)
        advance_s += time.perf_counter() - t
        problem = versions_equal(version, scratch(sha))
        if problem:
            return {"ok": False, "commit": sha, "index": i, "problem": problem}
        checked += 1
        if i % full_every == 0 or i == len(shas) - 1:
            problem = versions_equal(version, load_head(repo, sha))
            if problem:
                return {"ok": False, "commit": sha, "index": i, "problem": f"full load: {problem}"}
            full += 1
    return {
        "ok": True,
        "commits": len(shas),
        "checked_against_scratch": checked,
        "checked_against_load_head": full,
        "final_records": version.size,
        "advance_total_s": round(advance_s, 3),
        "advance_mean_ms": round(1000 * advance_s / max(1, len(shas) - 1), 3),
        "total_s": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source", type=Path, help="a git repository of markdown notes")
    parser.add_argument("work", type=Path, help="where the converted store is written")
    parser.add_argument("--limit", type=int, default=None, help="convert only the first N commits")
    parser.add_argument("--full-every", type=int, default=100)
    args = parser.parse_args(argv)
    store = args.work / "store.git"
    t0 = time.perf_counter()
    shas = convert(args.source, store, args.limit)
    converted_s = time.perf_counter() - t0
    result = replay(store, shas, args.full_every)
    result["convert_s"] = round(converted_s, 1)
    print(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
