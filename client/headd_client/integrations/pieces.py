"""What an integration writes, as pieces that know how to apply and remove themselves.

Each piece owns one fragment of one file in the client's own format: a key of a JSON document
(an ``mcpServers`` entry), the hook groups of Claude Code's ``settings.json``, a fenced block of a
text file (Codex's TOML, an instruction file) or a whole file. ``apply`` and ``remove`` are pure
functions of the file's current text, so install is idempotent (applying twice gives the same
bytes) and uninstall removes exactly the fragment, leaving whatever else the file holds.
``digest`` is the sha256 of the fragment as written, kept in the receipt, so uninstall and doctor
can tell our fragment from one a person edited since.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from headd_client.json_types import JsonIn, JsonObject, JsonValue


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: JsonIn) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _load_json(text: str | None) -> JsonObject:
    if text is None or not text.strip():
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("the file is not a JSON object")
    return value


def _dump_json(value: JsonObject) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class JsonKey:
    """``document[keys[0]]…[keys[-1]] = value`` in a JSON file."""

    path: Path
    role: str
    keys: tuple[str, ...]
    value: JsonValue

    kind = "fragment"

    def digest(self) -> str:
        return sha256_text(_canonical(self.value))

    def current_digest(self, text: str | None) -> str | None:
        node: JsonValue = _load_json(text)
        for key in self.keys:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return sha256_text(_canonical(node))

    def apply(self, text: str | None) -> str:
        document = _load_json(text)
        node = document
        for key in self.keys[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            node = child
        node[self.keys[-1]] = self.value
        return _dump_json(document)

    def remove(self, text: str | None) -> str | None:
        """The text without our key (parents left empty are dropped); None: nothing is left."""
        document = _load_json(text)
        trail = [document]
        node = document
        for key in self.keys[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                return _dump_json(document)
            trail.append(child)
            node = child
        node.pop(self.keys[-1], None)
        for parent, key in zip(reversed(trail[:-1]), reversed(self.keys[:-1]), strict=True):
            if parent.get(key) == {}:
                parent.pop(key)
        return None if not document else _dump_json(document)


@dataclass(frozen=True)
class ClaudeHooks:
    """Claude Code hook groups in ``settings.json``: ``hooks.<Event> = [{hooks: [command]}]``."""

    path: Path
    role: str
    commands: tuple[tuple[str, str, int], ...]  # (event, command, timeout seconds)

    kind = "fragment"

    def _groups(self) -> dict[str, JsonValue]:
        return {
            event: {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
            for event, command, timeout in self.commands
        }

    def digest(self) -> str:
        return sha256_text(_canonical(self._groups()))

    def current_digest(self, text: str | None) -> str | None:
        hooks = _load_json(text).get("hooks")
        if not isinstance(hooks, dict):
            return None
        present: JsonObject = {
            event: group
            for event, group in self._groups().items()
            if isinstance(listed := hooks.get(event), list) and group in listed
        }
        return sha256_text(_canonical(present)) if present else None

    def apply(self, text: str | None) -> str:
        """Ours in, every other headd hook group out: one install owns one set of hooks, so a
        re-install for another store replaces the first store's hooks instead of adding to them."""
        document = _load_json(text)
        hooks = document.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise ValueError("the file's hooks are not a JSON object")
        for event, group in self._groups().items():
            present = hooks.get(event)
            listed = present if isinstance(present, list) else []
            others = [g for g in listed if not is_headd_hook_group(g)]
            hooks[event] = [*others, group]
        return _dump_json(document)

    def remove(self, text: str | None) -> str | None:
        """Every headd hook group out (ours and any an earlier install left), the rest kept."""
        document = _load_json(text)
        hooks = document.get("hooks")
        if isinstance(hooks, dict):
            for event in list(hooks):
                groups = hooks.get(event)
                if not isinstance(groups, list):
                    continue
                kept = [g for g in groups if not is_headd_hook_group(g)]
                if kept:
                    hooks[event] = kept
                else:
                    hooks.pop(event, None)
            if not hooks:
                document.pop("hooks")
        return None if not document else _dump_json(document)

    def strays(self, text: str | None) -> list[str]:
        """The headd hook commands in ``text`` that are not this install's (another store's, or
        a duplicate): what ``doctor`` flags and ``uninstall`` removes."""
        hooks = _load_json(text).get("hooks")
        if not isinstance(hooks, dict):
            return []
        ours = self._groups()
        out: list[str] = []
        for event, groups in hooks.items():
            seen_ours = False
            for group in groups if isinstance(groups, list) else ():
                if not is_headd_hook_group(group):
                    continue
                if group == ours.get(event) and not seen_ours:
                    seen_ours = True
                    continue
                out.extend(f"{event}: {c}" for c in _commands_of(group))
        return out


#: A hook command headd's install writes: ``… headctl … hook <event>`` (or ``-m
#: headd_client.headctl``), whatever the store it names.
_HEADD_HOOK = re.compile(
    r"(?:^|[\s/'\"])(?:headctl|headd_client\.headctl)['\"]?\s(?:.*\s)?"
    r"hook (?:session-start|prompt-submit|pre-compact|session-end)$"
)


def _commands_of(group: object) -> list[str]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return []
    return [str(h.get("command")) for h in group["hooks"] if isinstance(h, dict) and "command" in h]


def is_headd_hook_group(group: object) -> bool:
    """Whether a ``settings.json`` hook group is one a headd install wrote."""
    commands = _commands_of(group)
    return bool(commands) and all(_HEADD_HOOK.search(c) for c in commands)


@dataclass(frozen=True)
class TextBlock:
    """A block between two marker lines of a text file (TOML, Markdown)."""

    path: Path
    role: str
    start: str
    end: str
    body: str

    kind = "fragment"

    def block(self) -> str:
        return f"{self.start}\n{self.body.rstrip()}\n{self.end}\n"

    def digest(self) -> str:
        return sha256_text(self.block())

    def _find(self, text: str) -> tuple[int, int] | None:
        begin = text.find(self.start + "\n")
        if begin < 0:
            return None
        finish = text.find(self.end, begin)
        if finish < 0:
            return None
        finish += len(self.end)
        if text[finish : finish + 1] == "\n":
            finish += 1
        return begin, finish

    def current_digest(self, text: str | None) -> str | None:
        span = self._find(text or "")
        return None if span is None else sha256_text((text or "")[span[0] : span[1]])

    def apply(self, text: str | None) -> str:
        text = text or ""
        span = self._find(text)
        if span is not None:
            return text[: span[0]] + self.block() + text[span[1] :]
        if text and not text.endswith("\n"):
            text += "\n"
        return text + ("\n" if text else "") + self.block()

    def remove(self, text: str | None) -> str | None:
        text = text or ""
        span = self._find(text)
        if span is not None:
            before = text[: span[0]]
            if before.endswith("\n\n"):
                before = before[:-1]
            text = before + text[span[1] :]
        return None if not text.strip() else text


@dataclass(frozen=True)
class WholeFile:
    """A file that is ours entirely."""

    path: Path
    role: str
    content: str

    kind = "file"

    def digest(self) -> str:
        return sha256_text(self.content)

    def current_digest(self, text: str | None) -> str | None:
        return None if text is None else sha256_text(text)

    def apply(self, text: str | None) -> str:
        return self.content

    def remove(self, text: str | None) -> str | None:
        return None


Piece = JsonKey | ClaudeHooks | TextBlock | WholeFile
