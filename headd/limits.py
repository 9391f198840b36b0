"""The sizes an agent can rely on: what a memory may weigh, and what one answer may quote of it.

A memory is one fact, written for an agent whose context is the scarce thing. A body pasted whole
(a stack trace, a log, a file) is accepted up to :data:`MAX_MEMORY_BYTES` of file and refused past
it with ``too-large`` (``ERR_TOO_LARGE`` at the bridge) naming the limit, so nothing is cut
silently. The claim is one sentence; a body with no sentence end gives a claim cut at
:data:`MAX_CLAIM_CHARS` (at a word boundary), the rest staying in the body. What an answer quotes
of a memory it did not ask to read (a search hit's claim, a list entry's gist, a recall line) is
cut at :data:`ANSWER_CLAIM_CHARS`, so one oversized file written by another tool cannot bloat
every answer. docs/design/mcp.md gives the figures.
"""

from __future__ import annotations

from typing import Final

#: The most UTF-8 bytes a memory file written through headd may hold (256 KiB: a long design
#: note is under 20 KiB; a whole log or a core dump is not a memory).
MAX_MEMORY_BYTES: Final = 256 * 1024
#: The longest claim a prose body gives (characters): a sentence, even a long one, fits.
MAX_CLAIM_CHARS: Final = 1000
#: The longest claim an answer quotes per memory it lists (characters).
ANSWER_CLAIM_CHARS: Final = 400
ELLIPSIS: Final = "…"


def cut_at_word(text: str, limit: int) -> str:
    """The longest prefix of ``text`` of at most ``limit`` characters ending at a word boundary
    (the whole text when it fits; a hard cut when its first word alone is longer)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:space].rstrip() if space > limit // 2 else head


def bounded(text: str, limit: int = ANSWER_CLAIM_CHARS) -> str:
    """``text`` as an answer quotes it: whole when it fits, else cut at a word and marked."""
    if len(text) <= limit:
        return text
    return cut_at_word(text, limit - len(ELLIPSIS)) + ELLIPSIS
