"""The code-mode tests' corpus: a small store whose every file exercises one helper rule.

The answers the tests expect are worked out here by hand from the files, next to them:

* 11 ``.html`` files are memories to the helper; ``resources/index.html`` (a generated listing)
  is not, and neither is ``.gitignore``.
* ``a1`` supersedes ``a0`` supersedes ``a00``: the longest chain, three long.
* ``x`` and ``y`` supersede each other: ``chain`` stops at the cycle, two long.
* ``c1`` and ``c2`` contradict each other, both active: two live contradiction pairs; ``c3``
  contradicts the archived ``a0``, which is not live.
* ``dangling`` relates to a path no file has: one dangling edge, seven resolved.
* Active, with no edge either way: ``orphan`` and ``nested``.
* ``service:checkout-api`` and ``service:payments`` are remembered together twice.
"""

from __future__ import annotations

from support.memory import memory_html

A1 = "/areas/ops/a1.html"
A0 = "/archive/2025/areas/ops/a0.html"
A00 = "/archive/2025/areas/ops/a00.html"
NESTED_ARTICLE = (
    "<p>Intro <em><mark>The nested claim is found.</mark></em></p>\n"
    "<dl><dt>owner</dt><dd>sre</dd><dd>second</dd><dt>tier</dt><dd>one</dd></dl>\n"
    '<p><cite>Runbook A</cite> on <time datetime="2026-01-02">2 January</time>.</p>'
)
PAIR = ("service:checkout-api", "service:payments")


def _memory(title: str, claim: str, **kwargs: object) -> str:
    return memory_html(title, claim, **kwargs)  # type: ignore[arg-type]


CORPUS: dict[str, str] = {
    A1[1:]: _memory(
        "Alpha one",
        "Alpha one is current.",
        entities=PAIR,
        tags=("ops",),
        links=(("supersedes", A0),),
        facets=(("owner", "sre"),),
    ),
    A0[1:]: _memory(
        "Alpha zero", "Alpha zero was earlier.", status="archived", links=(("supersedes", A00),)
    ),
    A00[1:]: _memory("Alpha zero zero", "Alpha zero zero was first.", status="archived"),
    "areas/ops/c1.html": _memory(
        "C one",
        "Deploys go out on Mondays.",
        memory_type="procedural",
        entities=PAIR,
        links=(("contradicts", "/areas/ops/c2.html"),),
    ),
    "areas/ops/c2.html": _memory(
        "C two",
        "Deploys go out on Fridays.",
        memory_type="procedural",
        links=(("contradicts", "/areas/ops/c1.html"),),
    ),
    "areas/ops/c3.html": _memory(
        "C three", "Alpha was never archived.", links=(("contradicts", A0),)
    ),
    "areas/loop/x.html": _memory(
        "X", "X replaces Y.", memory_type="verdict", links=(("supersedes", "/areas/loop/y.html"),)
    ),
    "areas/loop/y.html": _memory(
        "Y", "Y replaces X.", memory_type="verdict", links=(("supersedes", "/areas/loop/x.html"),)
    ),
    "resources/dangling.html": _memory(
        "Dangling", "This points nowhere.", links=(("relates_to", "/resources/nowhere.html"),)
    ),
    "resources/orphan.html": _memory("Orphan", "Nothing points here.", entities=PAIR[:1]),
    "resources/nested.html": _memory("Nested", "unused", article=NESTED_ARTICLE),
    "resources/index.html": "<!doctype html><html><head><title>Index</title></head>"
    '<body><a href="/resources/orphan.html">orphan</a></body></html>\n',
}
