"""Render a memory file from its fields, byte for byte as memhtml 0.15.1's writer does.

Why exact bytes: a file we write must be indistinguishable from one the tool writes, so a store
shared by both never diffs on bookkeeping, and the duplicate key (the content hash) we compute for
a ``write`` equals the one memhtml would compute for the same input. The template (verified on
every tool-written file of the anchor corpus, see its README "File template"):

    <!doctype html> / <html lang="en"> / <head> / <meta charset="utf-8"> / <title>…</title>
    one <meta name="memhtml-…" content="…"> per line in META_ORDER, repeatables expanded
    one <link rel="memhtml-<rel with - for _>" href="/…"> per line
    </head> / <body> / <article> / article inner markup (trimmed) / </article> / </body> / </html>

LF line ends, no indentation, a final newline.

The article comes from one of two sources:

- prose: ``claim`` plus ``body`` paragraphs. The claim's ``<p>`` is ``<p><mark>CLAIM</mark>
  FIRST</p>`` (the first body paragraph joined with one space), every further paragraph its own
  ``<p>``; a paragraph that is exactly a backtick fence (or a :class:`Fence`) becomes
  ``<figure><pre><code data-lang="x">…</code></pre></figure>`` and is never joined onto the claim.
- markup: ``article_html``, re-serialized the way memhtml does (HTML5 fragment parse, lowercase
  tag names, attributes sorted by name in double quotes, implied end tags and ``<tbody>`` added,
  comments kept, whitespace kept, the result trimmed). This is also how a caller reproduces a file
  it already has: pass the file's own article inner markup, which is a fixed point.

Both paths end in the same re-serialization, as memhtml's do (its template parses the prose
markup it built and writes it back), so the prose path inherits the parser's normalizations.

One boundary is injected rather than ported: memhtml stamps an *unlabeled* fence with a language
guessed by highlight.js 11.11.2 above a measured threshold. We cannot reproduce that guess, so
``detect_lang`` is a parameter (default: never guess, i.e. no ``data-lang``); a labeled fence
never consults it, exactly as in memhtml.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal

import msgspec
from selectolax.lexbor import LexborHTMLParser, LexborNode

from headd.errors import InvalidMemory
from headd.limits import MAX_CLAIM_CHARS, cut_at_word
from headd.memfile import vocabulary
from headd.memfile.text import js_trim
from headd.ops import Write
from headd.record import Link

#: Re-exported for callers of the writer; the vocabulary module is the one definition.
META_ORDER = vocabulary.META_ORDER
REPEATABLE_METAS = vocabulary.REPEATABLE_META
LINK_RELS: frozenset[str] = frozenset(vocabulary.ALL_RELS)

#: The status a new task starts in when the caller names none (memhtml's DEFAULT_TASK_STATUS).
DEFAULT_TASK_STATUS = "todo"

PREAMBLE = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'

# ---------------------------------------------------------------------------------------------
# Escaping and scalar formatting


def escape_text(text: str) -> str:
    """Text-node escape: ``& < >`` and U+00A0 as ``&nbsp;`` (so an invisible space is visible)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\u00a0", "&nbsp;")
    )


def escape_attribute(value: str) -> str:
    """Attribute escape: ``& "`` U+00A0, and CR/LF as references so a head line stays one line."""
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("\u00a0", "&nbsp;")
        .replace("\r", "&#13;")
        .replace("\n", "&#10;")
    )


def format_confidence(value: float) -> str:
    """``Number.prototype.toFixed(2)``: exact binary value, ties away from zero (0.125 → 0.13)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")) or abs(value) >= 1e21:
        return _js_number_string(value)
    if value == 0:
        value = 0.0  # (-0).toFixed(2) is "0.00"
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def format_integer(value: float) -> str:
    """``String(Math.trunc(x))``: importance 7.6 is written ``7``; reprieves likewise."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")) or abs(value) >= 1e21:
        return _js_number_string(value)
    return str(int(value))


def _js_number_string(value: float) -> str:
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return repr(value)


def format_instant(moment: datetime) -> str:
    """``YYYY-MM-DDThh:mm:ssZ`` in UTC, whole seconds (truncated): the writer's timestamp form."""
    if moment.tzinfo is None:
        raise ValueError("an instant must carry a timezone")
    m = moment.astimezone(UTC)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def rel_token(rel: str) -> str:
    """The ``rel`` attribute for a bare rel: ``laterally_related`` → ``memhtml-laterally-related``."""
    return vocabulary.rel_token_of(rel)


def meta_line(name: str, content: str) -> str:
    """One head meta line (no newline)."""
    return f'<meta name="{escape_attribute(name)}" content="{escape_attribute(content)}">'


def link_line(rel: str, href: str) -> str:
    """One head link line (no newline) for a bare rel."""
    return f'<link rel="{escape_attribute(rel_token(rel))}" href="{escape_attribute(href)}">'


# ---------------------------------------------------------------------------------------------
# Fields


class Fence(msgspec.Struct, frozen=True):
    """A code block of the body: ``code`` verbatim, ``lang`` the info string's token if any."""

    code: str
    lang: str | None = None


class MemoryFields(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a memory file states, as the writer takes it.

    ``created`` is the write instant as written (``YYYY-MM-DDThh:mm:ssZ``); ``updated`` defaults
    to it. ``content_hash`` None means "compute it from the rendered article" (the writer always
    stamps one); set ``stamp_content_hash=False`` to render a file without that meta.
    ``confidence``/``importance``/``reprieves`` are numbers formatted as memhtml formats them and
    are not range-checked (the tool writes importance 11 and lets the parser drop it).
    ``workspace`` is not written into the file; placement reads it.
    Exactly one of prose (``claim``) and ``article_html`` makes the article.
    """

    title: str
    memory_type: str
    created: str
    claim: str = ""
    body: tuple[str | Fence, ...] = ()
    article_html: str | None = None
    status: str = "active"
    updated: str | None = None
    confidence: float | None = None
    importance: float | None = None
    content_hash: str | None = None
    stamp_content_hash: bool = True
    author: str | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: float | None = None
    archived_at: str | None = None
    superseded_by: str | None = None
    needs_revision: bool | str | None = None
    task_status: str | None = None
    due: str | None = None
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    workspace: str | None = None


# ---------------------------------------------------------------------------------------------
# Prose: claims, paragraphs, fences

_FENCE_OPEN = re.compile(r"^(`{3,})([^`]*)$")
_LANG_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+#.-]*$")
_CLAIM = re.compile(r"^(.*?[.!?])(\s|$)", re.DOTALL)


def fence_opening_of(line: str) -> str | None:
    """The backtick run of a fence-opening line, or None."""
    match = _FENCE_OPEN.match(js_trim(line))
    return match.group(1) if match else None


def closes_fence(line: str, opening: str) -> bool:
    """True when ``line`` is a same-or-longer backtick run and nothing else."""
    stripped = js_trim(line)
    return len(stripped) >= len(opening) and stripped == "`" * len(stripped)


def fence_of(paragraph: str) -> Fence | None:
    """The paragraph as a fenced block, or None: it must be exactly opener, code, closer."""
    lines = paragraph.split("\n")
    if len(lines) < 2:
        return None
    match = _FENCE_OPEN.match(js_trim(lines[0]))
    if match is None or not closes_fence(lines[-1], match.group(1)):
        return None
    info = js_trim(match.group(2))
    token = re.split(r"\s+", info, maxsplit=1)[0] if info else ""
    lang = token.lower() if token and _LANG_TOKEN.match(token) else None
    return Fence(code="\n".join(lines[1:-1]), lang=lang)


def claim_from_prose(prose: str) -> str:
    """``apply``'s claim: the shortest prefix ending in ``.``, ``!`` or ``?`` followed by
    whitespace or the end (so ``e.g.`` ends a claim and ``3.5`` does not); else the whole body.
    Either is cut at :data:`headd.limits.MAX_CLAIM_CHARS` at a word boundary (a pasted trace
    has no sentence end), the rest staying in the body (``split_prose``)."""
    trimmed = js_trim(prose)
    match = _CLAIM.match(trimmed)
    return js_trim(cut_at_word(match.group(1) if match else trimmed, MAX_CLAIM_CHARS))


def paragraphs_of(prose: str) -> tuple[str, ...]:
    """Split prose on blank lines, except inside a fence (a blank line there is code)."""
    parts: list[list[str]] = [[]]
    opening: str | None = None
    for line in prose.split("\n"):
        current = parts[-1]
        if opening is None and js_trim(line) == "":
            if current:
                parts.append([])
            continue
        current.append(line)
        if opening is None:
            opening = fence_opening_of(line)
        elif closes_fence(line, opening):
            opening = None
    joined = (js_trim("\n".join(lines)) for lines in parts)
    return tuple(part for part in joined if part != "")


def split_prose(prose: str) -> tuple[str, tuple[str, ...]]:
    """``apply``'s split of a ``body``: (claim, the rest as paragraphs)."""
    claim = claim_from_prose(prose)
    remainder = js_trim(js_trim(prose)[len(claim) :])
    return claim, (paragraphs_of(remainder) if remainder else ())


LangDetector = Callable[[str], str | None]


def _figure(fence: Fence, detect_lang: LangDetector | None) -> str:
    lang = fence.lang
    if lang is None and detect_lang is not None:
        lang = detect_lang(fence.code)
    attr = "" if lang is None else f' data-lang="{escape_attribute(lang)}"'
    return f"<figure><pre><code{attr}>{escape_text(fence.code)}</code></pre></figure>"


def prose_markup(
    claim: str, body: Iterable[str | Fence], detect_lang: LangDetector | None = None
) -> str:
    """The article markup memhtml's template builds from a claim and body paragraphs (before
    its re-serialization): blank paragraphs dropped, the first prose paragraph joined onto the
    claim's ``<p>``, a fence never joined."""
    items: list[tuple[str, str | None]] = []  # (html, tail joined onto the claim or None)
    for part in body:
        if isinstance(part, Fence):
            items.append((_figure(part, detect_lang), None))
            continue
        if js_trim(part) == "":
            continue
        fence = fence_of(part)
        if fence is not None:
            items.append((_figure(fence, detect_lang), None))
        else:
            text = js_trim(part)
            items.append((f"<p>{escape_text(text)}</p>", text))
    mark = f"<mark>{escape_text(js_trim(claim))}</mark>"
    if items and items[0][1] is not None:
        first = f"<p>{mark} {escape_text(items[0][1])}</p>"
        rest = items[1:]
    else:
        first = f"<p>{mark}</p>"
        rest = items
    return "\n".join([first, *(html for html, _ in rest)])


# ---------------------------------------------------------------------------------------------
# Markup re-serialization (memhtml's markup.ts behaviour over an HTML5 fragment parse)

_VOID = frozenset(
    [
        "area",
        "base",
        "basefont",
        "bgsound",
        "br",
        "col",
        "embed",
        "frame",
        "hr",
        "img",
        "input",
        "keygen",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
_RAW_TEXT = frozenset(["style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext"])
_NEWLINE_SWALLOWING = frozenset({"pre", "textarea", "listing"})


def _children(node: LexborNode) -> list[LexborNode]:
    out: list[LexborNode] = []
    child = node.first_child
    while child is not None:
        out.append(child)
        child = child.next
    return out


def _comment_data(node: LexborNode) -> str:
    html = node.html or ""
    if html.startswith("<!--") and html.endswith("-->"):
        return html[4:-3]
    return node.comment_content or ""


def _write_node(node: LexborNode, raw_text: bool) -> str:
    if node.is_text_node:
        text = node.text_content or ""
        return text if raw_text else escape_text(text)
    if node.is_comment_node:
        return f"<!--{_comment_data(node)}-->"
    if not node.is_element_node:
        return ""
    tag = node.tag or ""
    attrs = sorted(
        (name, "" if value is None else value) for name, value in node.attributes.items()
    )
    open_tag = "<" + tag + "".join(f' {n}="{escape_attribute(v)}"' for n, v in attrs) + ">"
    if tag in _VOID:
        return open_tag
    if tag == "template":  # its content is a separate fragment, as in parse5
        fragments = node.template_fragments()
        children = _children(fragments[0]) if fragments else []
    else:
        children = _children(node)
    inner = "".join(_write_node(child, tag in _RAW_TEXT) for child in children)
    if (
        tag in _NEWLINE_SWALLOWING
        and children
        and children[0].is_text_node
        and (children[0].text_content or "").startswith("\n")
    ):
        inner = "\n" + inner
    return f"{open_tag}{inner}</{tag}>"


def reserialize_article(markup: str) -> str:
    """Article inner markup as memhtml writes it: parsed as an HTML5 fragment (lexbor, which
    like parse5 implements the standard's tree construction), written back canonically and
    trimmed. A fixed point: ``reserialize_article(reserialize_article(x)) == reserialize_article(x)``.
    """
    parser = LexborHTMLParser(markup, is_fragment=True)
    node = parser.root
    pieces: list[str] = []
    while node is not None:
        pieces.append(_write_node(node, False))
        node = node.next
    return js_trim("".join(pieces))


def article_inner_html(fields: MemoryFields, detect_lang: LangDetector | None = None) -> str:
    """The article's inner markup for ``fields`` (markup if given and non-blank, else prose)."""
    if fields.article_html is not None and js_trim(fields.article_html) != "":
        return reserialize_article(fields.article_html)
    return reserialize_article(prose_markup(fields.claim, fields.body, detect_lang))


# ---------------------------------------------------------------------------------------------
# The file


def _scalar_metas(fields: MemoryFields, content_hash: str | None) -> dict[str, str]:
    out: dict[str, str] = {}

    def put(name: str, value: str | float | bool | None) -> None:
        if value is None:
            return
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, int | float):
            if name == "memhtml-confidence":
                out[name] = format_confidence(float(value))
            else:
                out[name] = format_integer(float(value))
        else:
            out[name] = value

    # Only a task carries a task status (defaulted) and a due date; on any other type the
    # writer drops them, because the parser refuses a non-task with a task status.
    is_task = fields.memory_type == "task"
    task_status = (fields.task_status or DEFAULT_TASK_STATUS) if is_task else None
    due = fields.due if is_task else None
    put("memhtml-type", fields.memory_type)
    put("memhtml-status", fields.status)
    put("memhtml-created", fields.created)
    put("memhtml-updated", fields.updated if fields.updated is not None else fields.created)
    put("memhtml-confidence", fields.confidence)
    put("memhtml-importance", fields.importance)
    put("memhtml-content-hash", content_hash)
    put("memhtml-author", fields.author)
    put("memhtml-session", fields.session_id)
    put("memhtml-prompt", fields.prompt_id)
    put("memhtml-turn", fields.turn_uuid)
    put("memhtml-valid-from", fields.valid_from)
    put("memhtml-valid-until", fields.valid_until)
    put("memhtml-reprieves", fields.reprieves)
    put("memhtml-archived", fields.archived_at)
    put("memhtml-superseded-by", fields.superseded_by)
    put("memhtml-needs-revision", fields.needs_revision)
    put("memhtml-task-status", task_status)
    put("memhtml-due", due)
    return out


def meta_pairs(fields: MemoryFields, content_hash: str | None) -> list[tuple[str, str]]:
    """The head metas as (name, content) in template order, repeatables expanded."""
    scalars = _scalar_metas(fields, content_hash)
    repeatables = {
        "memhtml-entity": fields.entities,
        "memhtml-tag": fields.tags,
        "memhtml-alias": fields.aliases,
    }
    pairs: list[tuple[str, str]] = []
    for name in META_ORDER:
        if name in REPEATABLE_METAS:
            pairs.extend((name, value) for value in repeatables[name])
        elif name in scalars:
            pairs.append((name, scalars[name]))
    return pairs


def _assemble(fields: MemoryFields, article: str, content_hash: str | None) -> str:
    lines = [f"<title>{escape_text(js_trim(fields.title))}</title>"]
    lines.extend(meta_line(name, content) for name, content in meta_pairs(fields, content_hash))
    lines.extend(link_line(link.rel, link.href) for link in fields.links)
    lines.extend(["</head>", "<body>", "<article>", article, "</article>", "</body>", "</html>"])
    return PREAMBLE + "\n".join(lines) + "\n"


def render_memory(fields: MemoryFields, detect_lang: LangDetector | None = None) -> str:
    """The exact text memhtml writes for ``fields``.

    The content-hash meta is ``fields.content_hash`` when given, else computed over the
    rendered article with the parser's hash (``headd.memfile.hashes.content_hash_of``); the head
    never enters that hash, so rendering once without the meta and hashing is exact.
    """
    article = article_inner_html(fields, detect_lang)
    content_hash = fields.content_hash
    if content_hash is None and fields.stamp_content_hash:
        from headd.memfile.hashes import content_hash_of

        content_hash = content_hash_of(_assemble(fields, article, None))
    return _assemble(fields, article, content_hash)


def fields_from_write(
    *,
    title: str,
    memory_type: str,
    now: datetime,
    claim: str = "",
    body: str | Iterable[str] | None = None,
    article_html: str | None = None,
    tags: Iterable[str] = (),
    entities: Iterable[str] = (),
    workspace: str | None = None,
    importance: float | None = None,
    confidence: float | None = None,
    task_status: str | None = None,
    due: str | None = None,
    session_id: str | None = None,
    prompt_id: str | None = None,
    turn_uuid: str | None = None,
    author: str | None = None,
) -> MemoryFields:
    """Fields for a ``write`` as memhtml's doors build them.

    A ``body`` string with no ``claim`` is ``apply``'s prose: the first sentence is the claim and
    the rest splits into paragraphs. With a ``claim``, a ``body`` string is one paragraph and a
    list is one paragraph per item (the CLI's repeated ``--body``). Empty list items are
    dropped, as the doors drop them; ``created`` and ``updated`` are ``now``.
    """
    paragraphs: tuple[str, ...]
    if isinstance(body, str):
        if claim == "" and article_html is None and js_trim(body) != "":
            claim, paragraphs = split_prose(body)
        else:
            paragraphs = (body,)
    else:
        paragraphs = tuple(body or ())
    stamp = format_instant(now)
    return MemoryFields(
        title=title,
        memory_type=memory_type,
        created=stamp,
        claim=claim,
        body=paragraphs,
        article_html=article_html,
        confidence=confidence,
        importance=importance,
        author=author,
        session_id=session_id,
        prompt_id=prompt_id,
        turn_uuid=turn_uuid,
        task_status=task_status,
        due=due,
        entities=tuple(e for e in entities if e != ""),
        tags=tuple(t for t in tags if t != ""),
        workspace=workspace,
    )


def fields_from_write_op(op: Write, now: datetime) -> MemoryFields:
    """Fields for the wire's ``{op: "write"}`` (docs/protocol.md, "Overlay ops"), as memhtml's
    doors build them: see :func:`fields_from_write`. Place it with
    ``placement.choose_path(title=…, memory_type=…, entities=…, tags=…, workspace=…,
    path=op.path, taken=…, now=now)``."""
    return fields_from_write(
        title=op.title,
        memory_type=op.type,
        now=now,
        claim=op.claim,
        body=op.body,
        tags=op.tags or (),
        entities=op.entities or (),
        workspace=op.workspace,
        importance=op.importance,
        confidence=op.confidence,
    )


def write_violations(fields: MemoryFields) -> list[str]:
    """What memhtml's write doors refuse before rendering (every reason, in its words): an
    unknown memory type, an unknown task status, a due date that is not ``YYYY-MM-DD`` or
    ``YYYY-MM-DDThh:mm:ssZ`` (the parser would only drop it, so the door must refuse it), and
    an article with no claim. The rendered file must still pass the parser's checks."""
    from headd.memfile.parse import is_valid_datetime

    out: list[str] = []
    if fields.memory_type not in vocabulary.MEMORY_TYPES:
        out.append(
            f"unknown memory type: {fields.memory_type}. "
            f"One of: {', '.join(vocabulary.MEMORY_TYPES)}"
        )
    if fields.task_status is not None and fields.task_status not in vocabulary.TASK_STATUSES:
        out.append(
            f"unknown task status: {fields.task_status}. "
            f"One of: {', '.join(vocabulary.TASK_STATUSES)}"
        )
    if fields.due is not None and not is_valid_datetime(fields.due):
        out.append(
            f"due date is not an ISO date or datetime: {fields.due}. "
            "Expected YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ"
        )
    has_markup = fields.article_html is not None and js_trim(fields.article_html) != ""
    if not has_markup and js_trim(fields.claim) == "":
        out.append("no claim: a write needs a claim or article markup")
    return out


def check_write(fields: MemoryFields, path: str = "") -> None:
    """Raise :class:`headd.errors.InvalidMemory` with every :func:`write_violations` reason."""
    violations = write_violations(fields)
    if violations:
        raise InvalidMemory(path, violations)
