"""Code-mode recipes: the questions memhtml's cookbook answers with one script each, written
against the guest helper so the same text runs under ``memhtml exec`` and ``headctl exec``.

Each prints one JSON line. The code-mode tests run them over a corpus whose answers are worked
out by hand; ``bench/exec_bench.py`` times them through both tools and checks they agree.
"""

from __future__ import annotations

IMPORT = 'import { corpus, backlinks, chain, edges } from "/workspace/lib/corpus.mjs"\n'

#: How many memories of each type, and how the edges resolve.
CENSUS = IMPORT + (
    "const memories = corpus()\n"
    "const byType = {}\n"
    "for (const m of memories.values()) byType[m.memoryType] = (byType[m.memoryType] ?? 0) + 1\n"
    "const { resolved, dangling } = edges(memories)\n"
    "const sorted = Object.fromEntries(Object.entries(byType).sort())\n"
    "console.log(JSON.stringify({ memories: memories.size, byType: sorted,\n"
    "  resolved: resolved.length, dangling: dangling.length }))\n"
)

#: Active memories with no edge in either direction.
ORPHANS = IMPORT + (
    "const memories = corpus()\n"
    "const incoming = backlinks(memories)\n"
    "const orphans = [...memories.values()]\n"
    '  .filter((m) => m.status === "active" && m.links.length === 0 && !incoming.has(m.path))\n'
    "  .map((m) => m.path).sort()\n"
    "console.log(JSON.stringify({ count: orphans.length, first: orphans.slice(0, 5) }))\n"
)

#: The longest supersedes chain, walked from every memory.
LONGEST_CHAIN = IMPORT + (
    "const memories = corpus()\n"
    "let longest = []\n"
    "for (const path of memories.keys()) {\n"
    '  const hops = chain(memories, path, "memhtml-supersedes")\n'
    "  if (hops.length > longest.length || (hops.length === longest.length && hops[0] < longest[0]))"
    " longest = hops\n"
    "}\n"
    "console.log(JSON.stringify({ length: longest.length, chain: longest }))\n"
)

#: Which entities are remembered together, the most frequent pairs first.
CO_OCCURRENCE = IMPORT + (
    "const memories = corpus()\n"
    "const pairs = new Map()\n"
    "for (const m of memories.values()) {\n"
    "  const names = [...new Set(m.entities)].sort()\n"
    "  for (let i = 0; i < names.length; i++)\n"
    "    for (let j = i + 1; j < names.length; j++) {\n"
    "      const key = `${names[i]} + ${names[j]}`\n"
    "      pairs.set(key, (pairs.get(key) ?? 0) + 1)\n"
    "    }\n"
    "}\n"
    "const top = [...pairs].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5)\n"
    "console.log(JSON.stringify({ pairs: pairs.size, top }))\n"
)

#: Contradiction edges whose both ends are still active.
LIVE_CONTRADICTIONS = IMPORT + (
    "const memories = corpus()\n"
    "const live = []\n"
    "for (const m of memories.values()) {\n"
    '  if (m.status !== "active") continue\n'
    "  for (const link of m.links) {\n"
    '    if (link.rel === "memhtml-contradicts" && memories.get(link.href)?.status === "active")\n'
    "      live.push([m.path, link.href])\n"
    "  }\n"
    "}\n"
    "console.log(JSON.stringify({ count: live.length, pairs: live.sort() }))\n"
)

#: The four the benchmark times, by name.
BENCH_RECIPES: dict[str, str] = {
    "census": CENSUS,
    "orphans": ORPHANS,
    "longest_chain": LONGEST_CHAIN,
    "co_occurrence": CO_OCCURRENCE,
}
