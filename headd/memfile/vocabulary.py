"""The closed vocabulary of the memory file format, as data.

The vocabulary IS the policy (``shared/spec/format.md``): which meta names a head may carry and in
what order a writer emits them, which of them may repeat, the ten memory types, the four task
statuses, the link rels by edge class, and the elements an article may use. Nothing here decides
anything; the parser and the writer both read these tables, so the two can never disagree about
what a file may say.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

#: The prefix of every memhtml meta name and link rel token (hyphenated: a rel token cannot hold a
#: colon, so both planes use the same form).
META_PREFIX: Final = "memhtml-"

#: Every meta name in the closed vocabulary, in the order a writer emits them.
META_ORDER: Final[tuple[str, ...]] = (
    "memhtml-type",
    "memhtml-status",
    "memhtml-created",
    "memhtml-updated",
    "memhtml-confidence",
    "memhtml-importance",
    "memhtml-content-hash",
    "memhtml-author",
    "memhtml-session",
    "memhtml-prompt",
    "memhtml-turn",
    "memhtml-valid-from",
    "memhtml-valid-until",
    "memhtml-reprieves",
    "memhtml-archived",
    "memhtml-superseded-by",
    "memhtml-needs-revision",
    "memhtml-task-status",
    "memhtml-due",
    "memhtml-entity",
    "memhtml-tag",
    "memhtml-alias",
)
META_NAMES: Final[frozenset[str]] = frozenset(META_ORDER)

#: The only names that may appear more than once (one value per element, so a one-line diff).
REPEATABLE_META: Final[frozenset[str]] = frozenset(
    ("memhtml-entity", "memhtml-tag", "memhtml-alias")
)

#: The metas no pure function can invent: a type, a status and two clock readings.
REQUIRED_META: Final[tuple[str, ...]] = (
    "memhtml-type",
    "memhtml-status",
    "memhtml-created",
    "memhtml-updated",
)

#: The metas whose value is an instant compared as a string: an unsortable one is a violation
#: (``memhtml-due`` too, checked beside the task rules).
DATETIME_METAS: Final[tuple[str, ...]] = (
    "memhtml-created",
    "memhtml-updated",
    "memhtml-valid-from",
    "memhtml-valid-until",
    "memhtml-archived",
)

#: The ten memory types, the two statuses and the four task statuses (the record's field types).
#: As ``Literal`` types they are the record's field types too (``headd.record``): a snapshot
#: decode hands every record the one string object of each value instead of a copy per record.
MemoryType = Literal[
    "episodic",
    "semantic",
    "procedural",
    "agent_insight",
    "user_preference",
    "error_pattern",
    "verdict",
    "precedent",
    "arc",
    "task",
]
MemoryStatus = Literal["active", "archived"]
TaskStatus = Literal["todo", "doing", "blocked", "done"]
Para = Literal["projects", "areas", "resources", "archive"]

MEMORY_TYPES: Final[tuple[str, ...]] = get_args(MemoryType)
MEMORY_STATUSES: Final[tuple[str, ...]] = get_args(MemoryStatus)
TASK_STATUSES: Final[tuple[str, ...]] = get_args(TaskStatus)

#: Link rels by edge class. A rel belongs to exactly one class, so the class is derived, never
#: carried beside the rel where the two could disagree.
MEMORY_RELS: Final[tuple[str, ...]] = (
    "supersedes",
    "contradicts",
    "caused_by",
    "leads_to",
    "part_of",
    "relates_to",
    "example_of",
    "supports",
    "laterally_related",
)
PERSON_RELS: Final[tuple[str, ...]] = ("about_person", "authored_by")
PROVENANCE_RELS: Final[tuple[str, ...]] = ("from_session",)
TASK_RELS: Final[tuple[str, ...]] = ("blocks", "subtask_of")
ALL_RELS: Final[tuple[str, ...]] = MEMORY_RELS + PERSON_RELS + PROVENANCE_RELS + TASK_RELS

REL_CLASS: Final[dict[str, str]] = {
    **dict.fromkeys(MEMORY_RELS, "memory"),
    **dict.fromkeys(PERSON_RELS, "person"),
    **dict.fromkeys(PROVENANCE_RELS, "provenance"),
    **dict.fromkeys(TASK_RELS, "task"),
}


def rel_class_of(rel: str) -> str | None:
    """The edge class of a bare rel (``memory``, ``person``, ``provenance``, ``task``)."""
    return REL_CLASS.get(rel)


def rel_token_of(rel: str) -> str:
    """The ``<link rel>`` token for a bare rel: ``laterally_related`` -> ``memhtml-laterally-related``."""
    return META_PREFIX + rel.replace("_", "-")


#: The canonical token of every rel (``memhtml-`` + the rel with hyphens): the tokens files
#: carry, looked up at once. A token outside it may still name a rel (``memhtml-laterally_related``
#: does), so it goes through the rule.
_REL_OF_CANONICAL_TOKEN: Final[dict[str, str]] = {
    META_PREFIX + rel.replace("_", "-"): rel
    for rel in REL_CLASS
    if "-" not in rel  # the rule maps every hyphen to an underscore: such a rel has no token
}


def rel_of_token(token: str) -> str | None:
    """The bare rel behind a ``<link rel>`` token, or None when it is outside the vocabulary."""
    rel = _REL_OF_CANONICAL_TOKEN.get(token)
    if rel is not None:
        return rel
    if not token.startswith(META_PREFIX):
        return None
    rel = token[len(META_PREFIX) :].replace("-", "_")
    return rel if rel in REL_CLASS else None


#: The document skeleton, the article vocabulary and the person plane's ``<address>``.
DOCUMENT_ELEMENTS: Final[tuple[str, ...]] = ("html", "head", "body", "title", "meta", "link")
ARTICLE_ELEMENTS: Final[tuple[str, ...]] = (
    "article",
    "mark",
    "time",
    "dl",
    "dt",
    "dd",
    "data",
    "cite",
    "q",
    "dfn",
    "figure",
    "figcaption",
    "details",
    "summary",
    "aside",
    "section",
    "abbr",
    "pre",
    "code",
    "kbd",
    "samp",
    "var",
    "table",
    "caption",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "p",
    "ul",
    "ol",
    "li",
    "a",
    "strong",
    "em",
)
PERSON_ELEMENTS: Final[tuple[str, ...]] = ("address",)
#: Allowed only inside a ``<figure>``, where a pasted code sample carries its own containers.
FIGURE_SCOPED_ELEMENTS: Final[frozenset[str]] = frozenset(("div", "span"))
KNOWN_ELEMENTS: Final[frozenset[str]] = frozenset(
    DOCUMENT_ELEMENTS + ARTICLE_ELEMENTS + PERSON_ELEMENTS + tuple(FIGURE_SCOPED_ELEMENTS)
)

#: Phrasing elements: no word boundary at their edges. Every other element (known or not) is a
#: block and contributes a collapsible space at each edge of its text.
INLINE_ELEMENTS: Final[frozenset[str]] = frozenset(
    (
        "mark",
        "time",
        "data",
        "cite",
        "q",
        "dfn",
        "abbr",
        "code",
        "kbd",
        "samp",
        "var",
        "a",
        "strong",
        "em",
        "span",
    )
)
#: Subtrees the gist (the claim) leaves out: a command line is body text, never the claim.
GIST_EXCLUDED_ELEMENTS: Final[frozenset[str]] = frozenset(("pre", "code"))

FORBIDDEN_ATTRIBUTES: Final[frozenset[str]] = frozenset(("class", "style"))
FORBIDDEN_ELEMENTS: Final[frozenset[str]] = frozenset(("script", "style"))
EVENT_HANDLER_PREFIX: Final = "on"

#: The ``data-lang`` token grammar (``ts``, ``c++``, ``c#``, ``objective-c``, ``python3``).
LANG_TOKEN_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_+#.-]*"

#: The four PARA buckets; a path's first segment names its bucket.
PARA_BUCKETS: Final[tuple[str, ...]] = get_args(Para)
