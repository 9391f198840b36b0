"""What one transcript file says about its session: a pure fold over its lines.

The fold never raises. Transcripts are written by a live process and by many Claude Code
versions, so a line that is not JSON (or not an object with a string ``type``) is counted as
bad, a record type this code does not know is counted as unknown, and both are normal.

It follows memhtml 0.15.1's reading rules for Claude Code transcripts so the
``traces`` columns match what that tool derives, with one addition: prompts. Where the format
has ``promptId`` a prompt is a distinct id (the typed record and the tool results of its turn
share one). Older transcripts have none, and memhtml records zero prompts for them; here a
*real user prompt* is recognized instead (``is_typed_prompt``): a non-sidechain, non-meta,
non-compact-summary user record whose content has text and no ``tool_result`` block, and whose
text is not a command wrapper or a harness notification. Such a prompt is keyed by its record
``uuid``. A file that has any ``promptId`` uses those only.

``FileExtract`` is a msgspec Struct so the per-file state can be stored as JSON and merged with
the next tail (``merge_tail``) without re-reading the file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from headd.secrets.rules import redact

#: Record types read for session facts (memhtml's allowlist).
READ_TYPES = frozenset(
    {"user", "assistant", "system", "attachment", "agent-name", "ai-title", "pr-link"}
)
#: Bookkeeping types counted and ignored, not even read for ``sessionId``.
SKIP_TYPES = frozenset(
    {
        "last-prompt",
        "mode",
        "permission-mode",
        "queue-operation",
        "file-history-snapshot",
        "file-history-delta",
    }
)
FIRST_PROMPT_LIMIT = 500
TEXT_HEAD_LIMIT = 200
#: Characters read past a head's limit before redacting, so a credential the cut would halve
#: is still whole when the rules see it (a private key block is longer: the rule takes its
#: base64 lines as far as they go).
REDACT_MARGIN = 600


def kept_head(text: str, limit: int) -> str:
    """The first ``limit`` characters of a transcript's text as the index keeps them: with
    every credential-shaped value replaced by its kind, since the index is searchable and
    its rows travel in answers (docs/design/importers.md, "The transcript index")."""
    return redact(text[: limit + REDACT_MARGIN])[:limit]


SYNTHETIC_MODEL = "<synthetic>"
#: Text openings of user records that the harness wrote, not the person.
HARNESS_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
)


class PromptRow(msgspec.Struct):
    """One ``trace_prompts`` row of a file (ordinal is assigned when the session is assembled)."""

    prompt_id: str
    turn_uuid: str
    at: str
    agent_id: str | None
    text_head: str
    has_text: bool


class Counters(msgspec.Struct):
    parsed: int = 0
    bad: int = 0
    no_session: int = 0
    skipped_type: int = 0
    unknown_type: int = 0


class FileExtract(msgspec.Struct):
    """Everything one file (or the bytes of it read so far) contributes to its session."""

    session_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    entrypoint: str | None = None
    version: str | None = None
    model_counts: dict[str, int] = msgspec.field(default_factory=dict)
    started_at: str | None = None
    ended_at: str | None = None
    turn_count: int = 0
    agent_ids: list[str] = msgspec.field(default_factory=list)
    first_prompt: str = ""
    ai_title: str | None = None
    agent_name: str | None = None
    id_prompts: list[PromptRow] = msgspec.field(default_factory=list)
    typed_prompts: list[PromptRow] = msgspec.field(default_factory=list)
    counters: Counters = msgspec.field(default_factory=Counters)

    def prompts(self) -> list[PromptRow]:
        """The file's prompts: by ``promptId`` when the format has them, typed ones otherwise."""
        return self.id_prompts if self.id_prompts else self.typed_prompts

    def model(self) -> str | None:
        """The most frequent assistant model; a tie goes to the one seen first."""
        best: str | None = None
        best_count = 0
        for name, count in self.model_counts.items():
            if count > best_count:
                best, best_count = name, count
        return best


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = None


class _Message(msgspec.Struct):
    """``message``: ``model`` on assistant records, ``content`` on user records."""

    model: Any = None
    content: str | list[_Block] | None = None


class _Record(msgspec.Struct):
    """The fields of a transcript line the fold reads; everything else is skipped unparsed."""

    type: Any = None
    sessionId: Any = None  # noqa: N815 - the format's own key names
    uuid: Any = None
    timestamp: Any = None
    cwd: Any = None
    gitBranch: Any = None  # noqa: N815
    entrypoint: Any = None
    version: Any = None
    agentId: Any = None  # noqa: N815
    aiTitle: Any = None  # noqa: N815
    agentName: Any = None  # noqa: N815
    promptId: Any = None  # noqa: N815
    isSidechain: Any = None  # noqa: N815
    isMeta: Any = None  # noqa: N815
    isCompactSummary: Any = None  # noqa: N815
    message: _Message | None = None


class _LenientRecord(_Record):
    """The same fields with ``message`` left raw: the fallback for an unexpected message shape."""

    message: Any = None


_RECORD = msgspec.json.Decoder(_Record)
_LENIENT = msgspec.json.Decoder(_LenientRecord)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def collapse(text: str) -> str:
    """Whitespace runs to one space, trimmed: index text, not a transcript."""
    return " ".join(text.split())


def iso_utc(value: Any) -> str | None:
    """An instant as ISO-8601 UTC with milliseconds and ``Z``, or None when unparseable.

    The columns are compared as text, so every stored instant must share this one form.
    """
    raw = _str(value)
    if raw is None:
        return None
    if len(raw) == 24 and raw[19] == "." and raw[23] == "Z" and raw[10] == "T":
        return raw  # already canonical: the common case, no parse
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    utc = parsed.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class _UserContent(msgspec.Struct, frozen=True):
    text: str
    has_tool_result: bool


_NO_CONTENT = _UserContent("", False)


def _user_content(message: Any) -> _UserContent:
    """A user message's text (a string, or its ``text`` blocks joined) and whether it holds a
    tool result. ``message`` is a decoded ``_Message`` or, on the lenient path, plain JSON."""
    if isinstance(message, _Message):
        content: Any = message.content
    elif isinstance(message, dict):
        content = message.get("content")
    else:
        return _NO_CONTENT
    if isinstance(content, str):
        return _UserContent(collapse(content), False)
    if not isinstance(content, list):
        return _NO_CONTENT
    parts: list[str] = []
    tool = False
    for block in content:
        if isinstance(block, _Block):
            kind, text = block.type, block.text
        elif isinstance(block, dict):
            kind, text = block.get("type"), block.get("text")
        else:
            continue
        if kind == "text" and isinstance(text, str):
            parts.append(text)
        elif kind == "tool_result":
            tool = True
    return _UserContent(collapse("\n".join(parts)), tool)


def _model_of(message: Any) -> str | None:
    if isinstance(message, _Message):
        return _str(message.model)
    if isinstance(message, dict):
        return _str(message.get("model"))
    return None


def is_typed_prompt(record: Any, content: _UserContent) -> bool:
    """Whether a user record is something a person typed (used where there is no ``promptId``)."""
    if record.isSidechain is True or record.isMeta is True or record.isCompactSummary is True:
        return False
    if content.has_tool_result or content.text == "":
        return False
    return not content.text.startswith(HARNESS_PREFIXES)


def _add_prompt(prompts: list[PromptRow], index: dict[str, int], row: PromptRow) -> None:
    at = index.get(row.prompt_id)
    if at is None:
        index[row.prompt_id] = len(prompts)
        prompts.append(row)
        return
    # Identity and order stay with the first record; the text head comes from the first record
    # that has text (a tool_result record can carry the id before the typed one).
    existing = prompts[at]
    if not existing.has_text and row.has_text:
        existing.text_head = row.text_head
        existing.has_text = True


class Folder:
    """Mutable fold state over one read of one file; ``finish`` returns the extract."""

    def __init__(self) -> None:
        self.out = FileExtract()
        self._agents: dict[str, None] = {}
        self._id_index: dict[str, int] = {}
        self._typed_index: dict[str, int] = {}

    def line(self, raw: bytes) -> None:
        """Fold one line (terminator removed). Never raises."""
        out = self.out
        if not raw.strip():
            return
        try:
            record = _RECORD.decode(raw)
        except msgspec.ValidationError:
            try:
                record = _LENIENT.decode(raw)
            except msgspec.DecodeError:
                out.counters.bad += 1
                return
        except msgspec.DecodeError:
            out.counters.bad += 1
            return
        kind = record.type
        if not isinstance(kind, str) or kind == "":
            out.counters.bad += 1
            return
        out.counters.parsed += 1
        if kind in SKIP_TYPES:
            out.counters.skipped_type += 1
            return
        if kind not in READ_TYPES:
            out.counters.unknown_type += 1
            return
        session_id = _str(record.sessionId)
        if session_id is None:
            out.counters.no_session += 1
            return
        if out.session_id is None:
            out.session_id = session_id
        at = iso_utc(record.timestamp)
        if at is not None:
            if out.started_at is None or at < out.started_at:
                out.started_at = at
            if out.ended_at is None or at > out.ended_at:
                out.ended_at = at
        agent_id = _str(record.agentId)
        if agent_id is not None:
            self._agents[agent_id] = None
        if kind == "ai-title":
            title = _str(record.aiTitle)
            out.ai_title = redact(title) if title else out.ai_title
            return
        if kind == "agent-name":
            out.agent_name = _str(record.agentName) or out.agent_name
        uuid = _str(record.uuid)
        if uuid is None:
            return
        out.turn_count += 1
        if out.cwd is None:
            out.cwd = _str(record.cwd)
        if out.git_branch is None:
            out.git_branch = _str(record.gitBranch)
        if out.entrypoint is None:
            out.entrypoint = _str(record.entrypoint)
        if out.version is None:
            out.version = _str(record.version)
        if kind == "assistant":
            model = _model_of(record.message)
            if model is not None and model != SYNTHETIC_MODEL:
                out.model_counts[model] = out.model_counts.get(model, 0) + 1
            return
        if kind != "user":
            return
        content = _user_content(record.message)
        text = content.text
        if out.first_prompt == "" and text:
            out.first_prompt = kept_head(text, FIRST_PROMPT_LIMIT)
        prompt_id = _str(record.promptId)
        if prompt_id is not None:
            head = kept_head(text, TEXT_HEAD_LIMIT)
            row = PromptRow(prompt_id, uuid, at or "", agent_id, head, text != "")
            _add_prompt(out.id_prompts, self._id_index, row)
        elif is_typed_prompt(record, content):
            row = PromptRow(uuid, uuid, at or "", agent_id, kept_head(text, TEXT_HEAD_LIMIT), True)
            _add_prompt(out.typed_prompts, self._typed_index, row)

    def finish(self) -> FileExtract:
        self.out.agent_ids = list(self._agents)
        return self.out


def _earliest(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else min(a, b)


def _latest(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else max(a, b)


def _merge_prompts(stored: list[PromptRow], tail: list[PromptRow]) -> list[PromptRow]:
    merged = [msgspec.structs.replace(p) for p in stored]
    index = {p.prompt_id: i for i, p in enumerate(merged)}
    for row in tail:
        _add_prompt(merged, index, msgspec.structs.replace(row))
    return merged


def merge_tail(stored: FileExtract, tail: FileExtract) -> FileExtract:
    """The extract of a file after an appended slice was read: ``stored`` then ``tail``.

    Identity (session, cwd, entrypoint) and the first prompt stay with the older side; current
    state (branch, version, title) takes the newer side when it has one; times widen; turns,
    model counts and counters add; prompts merge by id, so one straddling the boundary counts once.
    """
    models = dict(stored.model_counts)
    for name, count in tail.model_counts.items():
        models[name] = models.get(name, 0) + count
    c1, c2 = stored.counters, tail.counters
    return FileExtract(
        session_id=stored.session_id or tail.session_id,
        cwd=stored.cwd or tail.cwd,
        git_branch=tail.git_branch or stored.git_branch,
        entrypoint=stored.entrypoint or tail.entrypoint,
        version=tail.version or stored.version,
        model_counts=models,
        started_at=_earliest(stored.started_at, tail.started_at),
        ended_at=_latest(stored.ended_at, tail.ended_at),
        turn_count=stored.turn_count + tail.turn_count,
        agent_ids=list(dict.fromkeys([*stored.agent_ids, *tail.agent_ids])),
        first_prompt=stored.first_prompt or tail.first_prompt,
        ai_title=tail.ai_title or stored.ai_title,
        agent_name=tail.agent_name or stored.agent_name,
        id_prompts=_merge_prompts(stored.id_prompts, tail.id_prompts),
        typed_prompts=_merge_prompts(stored.typed_prompts, tail.typed_prompts),
        counters=Counters(
            parsed=c1.parsed + c2.parsed,
            bad=c1.bad + c2.bad,
            no_session=c1.no_session + c2.no_session,
            skipped_type=c1.skipped_type + c2.skipped_type,
            unknown_type=c1.unknown_type + c2.unknown_type,
        ),
    )
