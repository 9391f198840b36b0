"""Claude Code transcripts, generated in the layout and with the fields Claude Code writes.

Transcripts are JSON Lines under ``<root>/projects/<path-slug>/``: one main file per session
(``<sessionId>.jsonl``), subagent sidecars in ``<sessionId>/subagents/agent-<id>.jsonl`` (2.1.x)
or flat beside it as ``agent-<id>.jsonl`` (2.0.x and older). ``sample_tree`` writes six sessions
that together carry every shape the indexer must read: the record kinds of versions 1.0.56 to
2.1.258 (``promptId`` only in the newest; bare bookkeeping records without ``sessionId`` or
``timestamp``; record types the reader does not know), split assistant responses, tool results
that are not prompts, meta and compact-summary user records, command wrappers, a compaction, a
model switch, a continued session whose first records name the previous session, sidecars of
both layouts and an inline sidechain, and timestamps out of file order. Every record is
synthetic; the expected values the tests check follow from the records written here.

``write_transcript`` writes the smallest session: one typed prompt and its answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

S1 = "30499b10-b34f-4546-a431-c77d14d042e1"  # 2.1.258: promptId, entrypoint, titles, attachments
S2 = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"  # 2.1.39: sidecars, progress, a compaction
S3 = "de3b8b19-5bc0-4a2a-934a-1b6806567e25"  # 2.1.14: a short tool-use session
S4 = "c45af7b1-cb7c-4e51-93db-8cbb250a877a"  # 2.0.76: compaction, a flat sidechain file
S5 = "789e105f-ae33-486d-9271-0696266f072d"  # 1.0.56: summary record, a continued session
S5_PREVIOUS = "93a9705e-1f0c-4c4e-8a38-5e5a1d0b7c21"
S6 = "a4e5b271-6948-4581-893b-4595c9ec41ea"  # 1.0.71: an inline sidechain

SLUG = "-home-user-proj"


def slug_of(cwd: str) -> str:
    """The project directory's name: every character that is not a letter or digit is ``-``."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


@dataclass
class Session:
    """Records of one transcript file, each enveloped one chained to the one before."""

    session_id: str
    cwd: str
    version: str
    git_branch: str = "main"
    entrypoint: str | None = None
    agent_id: str | None = None
    sidechain: bool = False
    title_slug: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    _last: str | None = None
    _n: int = 0
    _clock: int = 0

    def stamp(self, back: int = 0) -> str:
        """The next timestamp (one second on), or one ``back`` seconds before the current one."""
        if back:
            seconds = self._clock - back
        else:
            self._clock += 1
            seconds = self._clock
        minute, second = divmod(seconds, 60)
        return f"2026-11-{10 + int(self.session_id[0], 16):02d}T09:{minute:02d}:{second:02d}.250Z"

    def _uuid(self) -> str:
        self._n += 1
        return f"{self.session_id[:8]}-{self.agent_id or 'main'}-{self._n:04d}"

    def enveloped(
        self,
        kind: str,
        *,
        parent: str | None | bool = True,
        back: int = 0,
        session_id: str | None = None,
        **fields: Any,
    ) -> str:
        """Append an enveloped record; ``parent=True`` chains it to the last one. Its uuid."""
        uuid = self._uuid()
        record: dict[str, Any] = {
            "parentUuid": self._last if parent is True else (parent or None),
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": session_id or self.session_id,
            "version": self.version,
            "gitBranch": self.git_branch,
        }
        if self.agent_id is not None:
            record["agentId"] = self.agent_id
        if self.entrypoint is not None:
            record["entrypoint"] = self.entrypoint
        if self.title_slug is not None and self.records:
            record["slug"] = self.title_slug
        record.update(type=kind, uuid=uuid, timestamp=self.stamp(back), **fields)
        self.records.append(record)
        self._last = uuid
        return uuid

    def bare(self, kind: str, **fields: Any) -> None:
        """Append a bookkeeping record: no uuid, no cwd."""
        self.records.append({"type": kind, **fields})

    # -- the record kinds -------------------------------------------------------------------

    def prompt(self, text: str | list[dict[str, Any]], **fields: Any) -> str:
        return self.enveloped("user", message={"role": "user", "content": text}, **fields)

    def answer(self, model: str, *blocks: dict[str, Any], **fields: Any) -> str:
        """One API response, written as one record per content block sharing ``message.id``."""
        message_id = f"msg_{self.session_id[:4]}{self._n:04d}"
        for index, block in enumerate(blocks):
            extra = {"apiBlockIndex": index} if self.version.startswith("2.1.2") else {}
            self.enveloped(
                "assistant",
                requestId=f"req_{message_id}",
                message={
                    "id": message_id,
                    "model": model,
                    "role": "assistant",
                    "content": [block],
                    "stop_reason": "tool_use" if block["type"] == "tool_use" else None,
                    "usage": {"input_tokens": 12, "output_tokens": 40},
                },
                **extra,
                **fields,
            )
        return self._last or ""

    def tool_result(
        self, tool_use_id: str, output: str, *, error: bool = False, **fields: Any
    ) -> str:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
        block.update(content=output, is_error=error)
        result: Any = f"Error: {output}" if error else {"stdout": output, "stderr": ""}
        return self.enveloped(
            "user",
            message={"role": "user", "content": [block]},
            toolUseResult=fields.pop("toolUseResult", result),
            sourceToolAssistantUUID=self._last,
            **fields,
        )

    def system(self, subtype: str, **fields: Any) -> str:
        return self.enveloped("system", subtype=subtype, level="info", **fields)

    def progress(self, kind: str, tool_use_id: str, **data: Any) -> str:
        return self.enveloped(
            "progress",
            data={"type": kind, **data},
            toolUseID=f"{tool_use_id}-p",
            parentToolUseID=tool_use_id,
        )

    def lines(self) -> str:
        return "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in self.records)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "c2lnbmF0dXJl"}


def tool_use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


OPUS = "claude-opus-4-6"
HAIKU = "claude-haiku-4-5-20251001"
SONNET = "claude-sonnet-4-20250514"


def _new_format() -> Session:
    """2.1.258 from the SDK: two prompts by ``promptId``, on their tool results too."""
    s = Session(S1, "/fixture/project", "2.1.258", git_branch="HEAD", entrypoint="sdk-ts")
    s.bare("custom-title", customTitle="Fixture capture", sessionId=S1)
    s.bare("atis-latch", atis=True, sessionId=S1)
    first = "This is a disposable fixture capture. Write claude-result.txt holding one line: ok."
    s.bare("queue-operation", operation="enqueue", timestamp=s.stamp(), sessionId=S1, content=first)
    s.bare("queue-operation", operation="dequeue", timestamp=s.stamp(), sessionId=S1)
    prompt = {"promptId": "p-one", "promptSource": "sdk", "permissionMode": "default"}
    s.prompt(first, **prompt)
    s.enveloped("attachment", attachment={"type": "environment", "text": "[redacted]"}, back=5)
    s.enveloped("attachment", attachment={"type": "date", "date": "2026-11-11"}, back=5)
    s.answer(OPUS, thinking("Write the file."), tool_use("tu-w1", "Write", file_path="r.txt"))
    s.tool_result("tu-w1", "File created", promptId="p-one")
    s.answer(OPUS, text("Done: claude-result.txt holds ok."))
    s.system("stop_hook_summary", hookCount=0)
    s.bare("last-prompt", lastPrompt=first[:40] + "…", leafUuid=s._last, sessionId=S1)
    s.bare("custom-title", customTitle="Fixture capture, read back", sessionId=S1)
    s.prompt(
        "Read claude-result.txt again and print it with cat.", **{**prompt, "promptId": "p-two"}
    )
    s.answer(OPUS, tool_use("tu-r1", "Read", file_path="claude-result.txt"))
    s.tool_result("tu-r1", "ok", promptId="p-two")
    s.answer(OPUS, tool_use("tu-b1", "Bash", command="cat missing.txt"))
    s.tool_result("tu-b1", "cat: missing.txt: No such file", error=True, promptId="p-two")
    s.answer(OPUS, text("The file says ok."))
    s.bare("atis-latch", atis=False, sessionId=S1)
    s.bare("custom-title", customTitle="Fixture capture (done)", sessionId=S1)
    s.bare("atis-latch", atis=True, sessionId=S1)
    s.bare("last-prompt", lastPrompt="Read claude-result.txt…", leafUuid=s._last, sessionId=S1)
    return s


def _long_session() -> tuple[Session, Session, Session]:
    """2.1.39: no promptId, progress records, a Task sidecar, a compaction and a model switch."""
    cwd = "/home/user/projects/spotter/worktrees/spotter-4te"
    s = Session(S2, cwd, "2.1.39", git_branch="spotter-4te", title_slug="lexical-painting-whisper")
    s.bare("file-history-snapshot", messageId="m0", snapshot={"messageId": "m0"})
    s.prompt("Work on bead spotter-4te: the dependency report can't list versions yet.")
    s.progress("hook_progress", "tu-h0", hookName="SessionStart")
    s.answer(OPUS, thinking("Look up versions first."), tool_use("tu-t1", "Task", prompt="..."))
    for step in range(3):
        s.progress("agent_progress", "tu-t1", agentId="aac57f5", step=step)
    s.tool_result(
        "tu-t1",
        "Found the versions. agentId: aac57f5 (for resuming to continue this agent's work)",
        toolUseResult={"agentId": "aac57f5", "status": "completed", "totalTokens": 900},
    )
    for k in range(4):
        s.answer(HAIKU, tool_use(f"tu-b{k}", "Bash", command=f"mix test {k}"))
        s.progress("bash_progress", f"tu-b{k}", output="...")
        s.tool_result(f"tu-b{k}", f"{k} tests, 0 failures")
    s.answer(HAIKU, text("The report lists versions now."))
    s.system("turn_duration", durationMs=8123)
    boundary = s.system(
        "compact_boundary",
        parent=None,
        logicalParentUuid=s._last,
        compactMetadata={"trigger": "manual", "preTokens": 51234},
    )
    summary = " ".join(f"step {k}: the report's version column was checked." for k in range(340))
    s.prompt(
        f"This session is being continued from a previous conversation. Summary: {summary}",
        isCompactSummary=True,  # one line of ~17 kB, as real compact summaries are
        isVisibleInTranscriptOnly=True,
    )
    s.prompt("<command-name>/compact</command-name>", back=30)
    s.prompt("<local-command-stdout>Compacted</local-command-stdout>", back=29)
    s.prompt("continue implementation")
    s.answer(OPUS, tool_use("tu-b9", "Bash", command="mix compile"))
    s.progress("bash_progress", "tu-b9", output="Compiling")
    s.tool_result("tu-b9", "Compiled 3 files")
    assert boundary

    agent = Session(S2, cwd, "2.1.39", git_branch="spotter-4te", agent_id="aac57f5", sidechain=True)
    agent.prompt("Search hex.pm for the latest versions of plug and jason.", parent=None)
    agent.answer(HAIKU, tool_use("tu-a1", "WebFetch", url="https://hex.pm/packages/plug"))
    agent.progress("hook_progress", "tu-a1", hookName="PreToolUse")
    agent.tool_result("tu-a1", "plug 1.16.1")
    agent.progress("hook_progress", "tu-a1", hookName="PostToolUse")
    agent.answer(HAIKU, text("plug 1.16.1, jason 1.4.4"))

    compact = Session(
        S2, cwd, "2.1.39", git_branch="spotter-4te", agent_id="acompact-946d2b", sidechain=True
    )
    compact.prompt(
        "Your task is to create a detailed summary of the conversation so far.", parent=boundary
    )
    compact.answer(HAIKU, text("<summary>The report now lists versions.</summary>"))
    return s, agent, compact


def _short_session() -> Session:
    """2.1.14: a queue operation first, Write and Bash, a meta stop-hook record, no branch."""
    s = Session(
        S3, "/home/user/scratch/hello-world", "2.1.14", git_branch="", title_slug="tidy-fox"
    )
    ask = "Write a shell script called hello.sh that prints hello world, then run it."
    s.bare("queue-operation", operation="enqueue", timestamp=s.stamp(), sessionId=S3, content=ask)
    s.prompt(ask)
    s.answer(SONNET, tool_use("tu-w", "Write", file_path="hello.sh", content="echo hello world"))
    s.tool_result("tu-w", "File created successfully at: hello.sh")
    s.answer(SONNET, tool_use("tu-b", "Bash", command="sh hello.sh"))
    s.tool_result("tu-b", "hello world")
    s.answer(SONNET, text("hello.sh prints hello world."))
    s.prompt("Stop hook feedback: run the tests before you stop.", isMeta=True)
    s.answer(SONNET, text("There are no tests in this directory."))
    return s


def _compacted_session() -> tuple[Session, Session]:
    """2.0.76: thinking, parallel tools, an error, snapshots without sessionId, ``/compact``."""
    s = Session(S4, "/workspace", "2.0.76", git_branch="", title_slug="quiet-river")
    asks = [
        "can you run a command ls -la",
        "now show the disk usage of this folder",
        "what is in README.md?",
    ]
    for n, ask in enumerate(asks):
        s.bare("file-history-snapshot", messageId=f"m{n}", snapshot={"messageId": f"m{n}"})
        s.prompt(ask)
        s.answer(SONNET, thinking("Run it."), tool_use(f"tu-{n}a", "Bash", command="ls -la"))
        s.answer(SONNET, tool_use(f"tu-{n}b", "Bash", command="du -sh ."))
        s.tool_result(f"tu-{n}a", "total 8")
        s.tool_result(f"tu-{n}b", "du: permission denied", error=n == 1)
        s.answer(SONNET, text("Here is the output."))
        s.system("stop_hook_summary", hookCount=1)
    s.system("compact_boundary", parent=None, logicalParentUuid=s._last)
    s.prompt("This session is being continued from a previous conversation.", isCompactSummary=True)
    s.prompt(
        "<local-command-caveat>Caveat: generated by local commands</local-command-caveat>",
        isMeta=True,
        back=9,
    )
    s.prompt("<command-name>/compact</command-name>", back=9)
    s.prompt("<local-command-stdout>Compacted</local-command-stdout>", back=8)
    s.prompt([text("list the python files")])
    s.answer(SONNET, tool_use("tu-g", "Glob", pattern="**/*.py"))
    s.tool_result("tu-g", "main.py")
    s.prompt("thanks, that is all")
    s.answer(SONNET, text("You're welcome."))
    s.bare("file-history-snapshot", messageId="m9", snapshot={"messageId": "m9"})

    warmup = Session(S4, "/workspace", "2.0.76", git_branch="", agent_id="af1ff21", sidechain=True)
    warmup.prompt("Warmup", parent=None)
    warmup.answer(SONNET, text("Ready."))
    return s, warmup


def _continued_session() -> Session:
    """1.0.56 ``--continue``: a summary first, the first records name the previous session."""
    s = Session(S5, "/Users/user/projects/notes/test-project", "1.0.56")
    s.bare("summary", summary="Listing files in a test project", leafUuid="93a9705e-main-0003")
    s.prompt([text("say lol")], session_id=S5_PREVIOUS)
    s.answer(SONNET, text("lol"), session_id=S5_PREVIOUS)
    s.prompt("list the files here")
    s.answer(SONNET, tool_use("tu-ls", "LS", path="/Users/user/projects/notes/test-project"))
    s.tool_result("tu-ls", "- notes.md\n- todo.md")
    s.answer(SONNET, text("Two files: notes.md and todo.md."))
    return s


def _inline_sidechain() -> Session:
    """1.0.71: a Task subagent written into the main file, ``isSidechain`` and no agentId."""
    s = Session(S6, "/Users/user/Develop/demo-cli", "1.0.71")
    s.prompt("Show me a sample of using Task tool to count files.")
    task = s.answer(OPUS, tool_use("tu-task", "Task", description="count", prompt="Count files"))
    s.sidechain = True
    s.prompt("Count the files in this repository.", parent=None)
    s.answer(SONNET, tool_use("tu-sc", "Bash", command="ls | wc -l"))
    s.tool_result("tu-sc", "12")
    s.answer(SONNET, text("There are 12 files."))
    s.sidechain = False
    s.tool_result("tu-task", "There are 12 files.", parent=task)
    s.answer(OPUS, text("The subagent counted 12 files."))
    return s


def sample_files() -> Iterator[tuple[str, Session]]:
    """(path under ``projects/``, session) for every file of the sample tree: nine files."""
    s1 = _new_format()
    yield f"{slug_of(s1.cwd)}/{S1}.jsonl", s1
    s2, agent, compact = _long_session()
    slug2 = slug_of(s2.cwd)
    yield f"{slug2}/{S2}.jsonl", s2
    yield f"{slug2}/{S2}/subagents/agent-aac57f5.jsonl", agent
    yield f"{slug2}/{S2}/subagents/agent-acompact-946d2b.jsonl", compact
    s3 = _short_session()
    yield f"{slug_of(s3.cwd)}/{S3}.jsonl", s3
    s4, warmup = _compacted_session()
    yield f"{slug_of(s4.cwd)}/{S4}.jsonl", s4
    yield f"{slug_of(s4.cwd)}/agent-af1ff21.jsonl", warmup
    s5 = _continued_session()
    yield f"{slug_of(s5.cwd)}/{S5}.jsonl", s5
    s6 = _inline_sidechain()
    yield f"{slug_of(s6.cwd)}/{S6}.jsonl", s6


def sample_tree(root: Path) -> Path:
    """Write the sample transcripts under ``root/projects``, as ``~/.claude`` holds them."""
    for relative, session in sample_files():
        path = root / "projects" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(session.lines(), encoding="utf-8")
    return root


def transcript_lines(session_id: str, prompt: str, *, prompt_uuid: str = "u-1") -> str:
    """A main transcript: one typed user prompt and one assistant answer, as Claude Code writes."""
    records = [
        {
            "type": "user",
            "uuid": prompt_uuid,
            "parentUuid": None,
            "sessionId": session_id,
            "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": "/home/user/proj",
            "gitBranch": "main",
            "version": "2.1.40",
            "message": {"role": "user", "content": prompt},
        },
        {
            "type": "assistant",
            "uuid": "a-1",
            "parentUuid": prompt_uuid,
            "sessionId": session_id,
            "timestamp": "2026-11-30T10:00:05.000Z",
            "message": {
                "model": "claude-opus-4-6",
                "role": "assistant",
                "content": [{"type": "text", "text": "Noted."}],
            },
        },
    ]
    return "".join(json.dumps(r) + "\n" for r in records)


def write_transcript(root: Path, session_id: str, prompt: str) -> Path:
    """A one-prompt session under ``root/projects/<SLUG>/``."""
    path = root / "projects" / SLUG / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(transcript_lines(session_id, prompt), encoding="utf-8")
    return path
