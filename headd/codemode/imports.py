"""A script's static imports of the guest's two modules, rewritten to bindings of their values.

The embedded QuickJS has no module loader: an ``import`` of any path fails to load. The guest
offers exactly two modules (``/workspace/lib/corpus.mjs`` and ``node:fs``, also as ``fs``), built
before the script runs, so each static import of one of them becomes a ``const`` over its value
on the same line (a stack trace's line numbers stay the script's). Any other import is left as
written and fails to load, as a dynamic ``import()`` of anything does: a script reaches nothing
beyond these two modules.

Pure: a function of the script's text.
"""

from __future__ import annotations

import re

#: The modules a script may import, by the specifier it names them with.
MODULES: frozenset[str] = frozenset({"/workspace/lib/corpus.mjs", "node:fs", "fs"})

_IMPORT = re.compile(
    r"""^(?P<indent>[ \t]*)import\s*(?:(?P<clause>[\w$\s{},*]+?)\s*from\s*)?"""
    r"""(?P<quote>["'])(?P<spec>[^"'\n]+)(?P=quote)[ \t]*;?""",
    re.MULTILINE,
)
_NAMESPACE = re.compile(r"^\*\s*as\s+([\w$]+)$")
_NAMED = re.compile(r"^\{(.*)\}$", re.DOTALL)


def _binding(clause: str, source: str) -> str | None:
    """The ``const`` statements for one import clause, or None when it is not one we read."""
    clause = clause.strip()
    default, _, rest = clause.partition(",") if not clause.startswith("{") else ("", "", clause)
    default, rest = default.strip(), rest.strip()
    if default.startswith("*"):
        default, rest = "", default
    out = []
    if default:
        if not re.fullmatch(r"[\w$]+", default):
            return None
        out.append(f"const {default} = {source}.default;")
    if rest:
        namespace = _NAMESPACE.match(rest)
        named = _NAMED.match(rest)
        if namespace is not None:
            out.append(f"const {namespace.group(1)} = {source};")
        elif named is not None:
            pairs = []
            for item in named.group(1).split(","):
                words = item.split()
                if not words:
                    continue
                if len(words) == 1:
                    pairs.append(words[0])
                elif len(words) == 3 and words[1] == "as":
                    pairs.append(f"{words[0]}: {words[2]}")
                else:
                    return None
            out.append(f"const {{ {', '.join(pairs)} }} = {source};")
        else:
            return None
    return " ".join(out)


def rewrite_imports(script: str) -> str:
    """``script`` with every static import of a guest module bound to its value in place."""

    def replace(match: re.Match[str]) -> str:
        spec = match.group("spec")
        if spec not in MODULES:
            return match.group(0)
        source = f'globalThis.__modules["{spec}"]'
        clause = match.group("clause")
        if clause is None:  # ``import "node:fs"``: a module with no effects to run
            return match.group("indent")
        binding = _binding(clause, source)
        if binding is None:
            return match.group(0)
        # Keep the line count: a clause spread over lines leaves its newlines behind.
        return match.group("indent") + binding + "\n" * match.group(0).count("\n")

    return _IMPORT.sub(replace, script)
