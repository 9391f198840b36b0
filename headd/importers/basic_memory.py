"""basic-memory: a project directory of Markdown notes.

A note has front matter (``title``, ``type``, ``tags``, ``permalink``), observations
(``- [category] text #tag (context)``) and relations (``- relation_type [[Target]]``). One note
is one memory: its title, the first observation (else the first sentence) as the claim, the
rest as the body, front matter tags and observation ``#tags`` as tags, each relation a link to
the note it names (by title or permalink): ``relates_to`` unless the relation is one of
memhtml's own rels.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from headd.importers.markdown import (
    Unreadable,
    claim_and_body,
    first_heading,
    list_value,
    read_source,
    split_front_matter,
    strip_first_heading,
    text_value,
)
from headd.importers.model import Item, Parsed, Skipped, short_title
from headd.memfile.vocabulary import MEMORY_TYPES

SOURCE = "basic-memory"
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[(?P<category>[^\]]+)\]\s+(?P<text>.+?)\s*$")
_RELATION = re.compile(r"^\s*[-*]\s+(?P<rel>[\w -]+?)\s+\[\[(?P<target>[^\]]+)\]\]\s*(?:\(.*\))?$")
_TAG = re.compile(r"(?<!\w)#([\w-]+)")
_CONTEXT = re.compile(r"\s*\([^()]*\)\s*$")
#: memhtml's memory rels, by the words basic-memory notes use for them.
RELS = {
    "supersedes": "supersedes",
    "contradicts": "contradicts",
    "caused_by": "caused_by",
    "leads_to": "leads_to",
    "part_of": "part_of",
    "example_of": "example_of",
    "supports": "supports",
    "implements": "supports",
    "requires": "caused_by",
}


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "-", name.strip().lower())


def parse(root: Path) -> Parsed:
    parsed = Parsed()
    names: dict[str, str] = {}
    relations: list[tuple[str, list[tuple[str, str]]]] = []
    files = [root] if root.is_file() else sorted(root.rglob("*.md"))
    base = root.parent if root.is_file() else root
    for path in files:
        rel = str(path.relative_to(base))
        if any(part.startswith(".") for part in path.relative_to(base).parts):
            continue
        try:
            source = read_source(path)
        except Unreadable as exc:
            parsed.skipped.append(Skipped(rel, str(exc)))
            continue
        front, body = split_front_matter(source.text)
        title = text_value(front, "title") or first_heading(body) or path.stem
        tags: list[str] = list_value(front, "tags")
        observations: list[str] = []
        links: list[tuple[str, str]] = []
        prose: list[str] = []
        for line in strip_first_heading(body).split("\n"):
            relation = _RELATION.match(line)
            if relation is not None:
                name = relation.group("rel").strip().lower().replace(" ", "_")
                links.append((RELS.get(name, "relates_to"), relation.group("target").strip()))
                continue
            observation = _OBSERVATION.match(line)
            if observation is not None:
                text = observation.group("text")
                tags.extend(_TAG.findall(text))
                text = _CONTEXT.sub("", _TAG.sub("", text)).strip()
                observations.append(f"{observation.group('category').strip()}: {text}")
            prose.append(line)
        claim, paragraphs = claim_and_body(
            "\n".join(prose).strip(), observations[0] if observations else None
        )
        if not claim:
            claim = title
        kind = (text_value(front, "type") or "").lower()
        item = Item(
            source=SOURCE,
            file=rel,
            file_hash=source.hash,
            key=text_value(front, "permalink") or rel,
            title=short_title(title),
            type=kind if kind in MEMORY_TYPES and kind not in ("task", "arc") else "semantic",
            claim=claim,
            body=paragraphs,
            tags=(SOURCE, *dict.fromkeys(t for t in tags if t)),
        )
        parsed.items.append(item)
        for name in (title, path.stem, text_value(front, "permalink") or ""):
            if name:
                names.setdefault(_key(name), item.key)
        relations.append((item.key, links))
    by_key = {item.key: item for item in parsed.items}
    for key, links in relations:
        resolved: list[tuple[str, str]] = []
        for rel_name, target in links:
            found = names.get(_key(target)) or names.get(_key(target.rsplit("/", 1)[-1]))
            if found is None:
                parsed.broken_links.append((key, target))
            elif found != key and (rel_name, found) not in resolved:
                resolved.append((rel_name, found))
        if resolved:
            by_key[key] = replace(by_key[key], links=tuple(resolved))
    parsed.items = list(by_key.values())
    return parsed
