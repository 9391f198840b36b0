"""Write the generated sections of ``docs/protocol.md`` from the code they describe.

``python scripts/gen_protocol.py`` rewrites every block between ``<!-- generated: NAME -->`` and
``<!-- end generated: NAME -->``; ``--check`` writes nothing and exits 1 when the page differs
(``tests/test_protocol_doc.py`` runs the same comparison). The blocks:

- ``methods``: every method's params, from the msgspec Structs of ``headd.wire.methods``
  (names, types, bounds, defaults, required or not), and the ``filter`` object;
- ``answers``: what every method answers, from ``headd.wire.answers.answer_types`` (the answer
  Structs, each nested Struct once, a record's fields included);
- ``errors``: every ``ERR_`` code of ``headd.errors`` and the JSON-RPC standard codes;
- ``ops``: every overlay op of ``headd.ops`` with its fields;
- ``headctl``: every command of the argparse tree, its arguments and options with their help;
- ``headd``: the daemon's own options.

What the code cannot say (framing, what an answer's values mean, what an error means) is prose in
the page around the blocks.
"""

from __future__ import annotations

import argparse
import re
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "protocol.md"
BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[a-z]+) -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)",
    re.S,
)


# -- types --------------------------------------------------------------------------------


def _bounds(info: Any) -> str:
    low = getattr(info, "ge", None)
    high = getattr(info, "le", None)
    if getattr(info, "max_length", None) is not None:
        return f" (at most {info.max_length:,})".replace(",", " ")
    if low is not None and high is not None:
        return f" {low}..{high}".replace(",", " ")
    if low is not None:
        return f" ≥ {low}"
    return ""


def type_text(info: Any) -> str:
    """A msgspec type as the page writes it: ``string``, ``integer 1..10000``, ``[string]``…"""
    if isinstance(info, mi.UnionType):
        kinds = [t for t in info.types if not isinstance(t, mi.NoneType)]
        return " or ".join(type_text(t) for t in kinds)
    if isinstance(info, mi.StrType):
        return "string"
    if isinstance(info, mi.BoolType):
        return "boolean"
    if isinstance(info, mi.IntType):
        return "integer" + _bounds(info)
    if isinstance(info, mi.FloatType):
        return "number" + _bounds(info)
    if isinstance(info, mi.LiteralType):
        return " \\| ".join(f'`"{v}"`' for v in sorted(info.values))
    if isinstance(info, mi.ListType):
        return f"[{type_text(info.item_type)}]" + _bounds(info)
    if isinstance(info, mi.StructType):
        if info.tag is not None:
            return "op"
        return info.cls.__name__.lower()
    return type(info).__name__


def _default(field: Any) -> str:
    if field.required:
        return "required"
    if field.default is None:
        return "–"
    return f"`{msgspec.json.encode(field.default).decode()}`"


def _nullable(info: Any) -> bool:
    return isinstance(info, mi.UnionType) and any(isinstance(t, mi.NoneType) for t in info.types)


def struct_rows(cls: type) -> list[str]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    rows = []
    for field in info.fields:
        kind = type_text(field.type)
        if _nullable(field.type) and not field.required:
            kind += " or null"
        rows.append(f"| `{field.encode_name}` | {kind} | {_default(field)} |")
    return rows


def methods_block() -> str:
    from headd.wire.methods import METHODS, Filter

    out = []
    for name, cls in METHODS.items():
        out.append(f"#### `{name}`\n")
        fields = mi.type_info(cls)
        assert isinstance(fields, mi.StructType)
        if not fields.fields:
            out.append("No params (`{}` or none).\n")
            continue
        out += ["| param | type | default |", "|---|---|---|", *struct_rows(cls), ""]
    out += ["#### The `filter` object\n", "| field | type | default |", "|---|---|---|"]
    out += [*struct_rows(Filter), ""]
    return "\n".join(out)


def answer_type_text(info: Any) -> str:
    """An answer field's type: like ``type_text``, with Structs by name (each has its table)."""
    if isinstance(info, mi.UnionType):
        kinds = [t for t in info.types if not isinstance(t, mi.NoneType)]
        text = " or ".join(answer_type_text(t) for t in kinds)
        return text + " or null" if _nullable(info) else text
    if isinstance(info, mi.StructType):
        return f"`{info.cls.__name__}`"
    if isinstance(info, mi.ListType | mi.VarTupleType):
        return f"[{answer_type_text(info.item_type)}]"
    if isinstance(info, mi.DictType):
        return "object"
    if isinstance(info, mi.AnyType):
        return "any"
    if isinstance(info, mi.LiteralType):
        return " \\| ".join(f'`"{v}"`' for v in info.values)
    return type_text(info)


def _structs_in(info: Any) -> Iterator[type]:
    """The Struct types ``info`` holds, outermost first."""
    if isinstance(info, mi.StructType):
        yield info.cls
    elif isinstance(info, mi.UnionType):
        for member in info.types:
            yield from _structs_in(member)
    elif isinstance(info, mi.ListType | mi.VarTupleType):
        yield from _structs_in(info.item_type)


def answers_block() -> str:
    from headd.wire.answers import answer_types

    rows = ["| method | answer |", "|---|---|"]
    pending: list[type] = []
    for name, answer in answer_types().items():
        # A method answering one of several Structs (``search`` by its plane) names each.
        members = typing.get_args(answer) or (answer,)
        structs = [c for member in members for c in _structs_in(mi.type_info(member))]
        rows.append(f"| `{name}` | {' or '.join(f'`{c.__name__}`' for c in structs)} |")
        pending += structs
    out = [*rows, ""]
    seen: set[type] = set()
    while pending:
        cls = pending.pop(0)
        if cls in seen:
            continue
        seen.add(cls)
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        out += [f"#### `{cls.__name__}`\n", "| field | type |", "|---|---|"]
        for field in info.fields:
            kind = answer_type_text(field.type)
            # An UNSET default (a field an answer leaves out) shows as no default at all.
            if not field.required and field.default is field.default_factory is mi.NODEFAULT:
                kind += " (may be left out)"
            out.append(f"| `{field.encode_name}` | {kind} |")
            pending += [c for c in _structs_in(field.type) if c not in seen]
        out.append("")
    return "\n".join(out)


def errors_block() -> str:
    from headd import errors

    groups = {
        errors.CallerError: "the request is wrong: resending it fails again",
        errors.Conflict: "another writer or a moving tip got there first: retry",
        errors.EnvironmentFailure: "the machine, the store or the daemon",
    }
    rows = ["| `ERR_` code | class | who is at fault |", "|---|---|---|"]
    for code, cls in sorted(errors.DOMAIN_ERRORS.items()):
        group = next((text for base, text in groups.items() if issubclass(cls, base)), "")
        rows.append(f"| `{code}` | `{cls.__name__}` | {group} |")
    rows += ["", "| JSON-RPC code | class |", "|---|---|"]
    for rpc_code, rpc_cls in sorted(errors.RPC_ERRORS.items(), reverse=True):
        rows.append(f"| {rpc_code} | `{rpc_cls.__name__}` |")
    return "\n".join(rows) + "\n"


def ops_block() -> str:
    from headd import ops

    out = []
    for cls in ops.Op.__args__:  # type: ignore[attr-defined]
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        fields = ", ".join(f"`{f.encode_name}`" + ("" if f.required else "?") for f in info.fields)
        out.append(f"| `{info.tag}` | {fields} |")
    return "| `op` | fields (`?`: optional) |\n|---|---|\n" + "\n".join(out) + "\n"


# -- command lines ------------------------------------------------------------------------


def _leaves(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command of the tree: its words and its own parser, in the order of ``--help``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield words, parser
        return
    for name, child in subs[0].choices.items():
        yield from _leaves(child, (*words, name))


def _leaf_help(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> str:
    node = parser
    text = ""
    for word in words:
        sub = next(a for a in node._actions if isinstance(a, argparse._SubParsersAction))
        text = next((c.help or "" for c in sub._choices_actions if c.dest == word), "")
        node = sub.choices[word]
    return text


def _cell(text: str) -> str:
    """Help text as a table cell: no raw HTML, no column breaks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _options(parser: argparse.ArgumentParser, skip: set[str]) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS or action.dest in skip:
            continue
        if action.option_strings:
            name = ", ".join(action.option_strings)
            if action.nargs != 0:
                name += f" {action.metavar or action.dest.upper()}"
        else:
            name = str(action.metavar or action.dest)
        rows.append(f"| `{name}` | {_cell(str(action.help))} |")
    return rows


def headctl_block() -> str:
    from headd_client.headctl import build_parser

    parser = build_parser()
    globals_ = {"store", "socket", "json", "timeout", "verbose"}
    out = ["Options every command takes, before or after its words:\n", "| option | |", "|---|---|"]
    out += _options(parser, set())
    out.append("")
    for words, leaf in _leaves(parser):
        out.append(f"#### `headctl {' '.join(words)}`\n")
        summary = _cell(_leaf_help(parser, words))
        out.append(summary[:1].upper() + summary[1:] + ".\n")
        if words == ("check",):
            from headd.memfile.check import _arg_parser

            rows = _options(_arg_parser(), set())
        else:
            rows = _options(leaf, globals_)
        if rows:
            out += ["| argument | |", "|---|---|", *rows, ""]
    return "\n".join(out)


def headd_block() -> str:
    from headd.daemon.main import build_parser

    return "\n".join(["| option | |", "|---|---|", *_options(build_parser(), set())]) + "\n"


BLOCKS: dict[str, Callable[[], str]] = {
    "methods": methods_block,
    "answers": answers_block,
    "errors": errors_block,
    "ops": ops_block,
    "headctl": headctl_block,
    "headd": headd_block,
}


def render(page: str) -> str:
    """``page`` with every generated block rewritten; KeyError names an unknown block."""
    seen: set[str] = set()

    def block(match: re.Match[str]) -> str:
        name = match.group("name")
        seen.add(name)
        return f"{match.group(1)}\n{BLOCKS[name]().strip()}\n\n{match.group(4)}"

    out = BLOCK.sub(block, page)
    missing = set(BLOCKS) - seen
    if missing:
        raise KeyError(f"docs/protocol.md lacks the generated blocks {sorted(missing)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate docs/protocol.md's generated blocks.")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when the page is out of date"
    )
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    fresh = render(page)
    if args.check:
        if fresh != page:
            print("docs/protocol.md is out of date: run scripts/gen_protocol.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
