"""``headctl``'s command table and argument parser: every command, its arguments, its request.

Each command is one :class:`Command`: its words, its one-line help, a function adding its own
arguments, and either the request it stands for (a method and params, whose answer a renderer
of ``headctl_output`` shows) or a ``local`` runner that works without the daemon protocol
(``init``). Another module adds a command with one :func:`register` call in
``_contributed_commands``. The global options are added to every parser, so they are accepted
anywhere on the line; ``scripts/gen_protocol.py`` documents the whole tree from here.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeAlias

from headd import installed_version
from headd.memfile.vocabulary import MEMORY_TYPES
from headd_client import headctl_output as show
from headd_client.headctl_output import Shower
from headd_client.json_types import JsonIn, JsonObject, JsonValue

if TYPE_CHECKING:
    from headd.wire.plane_answers import (
        IndexStatusAnswer,
        RecallAnswer,
        TracesSearchAnswer,
        TracesShowAnswer,
    )
    from headd.wire.remote_answers import SyncAnswer
    from headd_client.calls import Call

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A command line that does not parse; exit 2."""


#: argparse's line for a word that names no subcommand (its metavar is the ``{a,b,...}`` list).
_INVALID_CHOICE = re.compile(
    r"^argument \{[^}]*\}: invalid choice: '(.*)' \(choose from (.*)\)$", re.DOTALL
)
_CHOICE = re.compile(r"'([^']*)'")


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so we own the one-line form."""

    def error(self, message: str) -> NoReturn:
        choice = _INVALID_CHOICE.search(message)
        if choice is not None:  # a mistyped command: one short line, with the nearest one
            word, commands = choice.group(1), _CHOICE.findall(choice.group(2))
            near = difflib.get_close_matches(word, commands, n=1)
            hint = f"; did you mean {near[0]}?" if near else f"; see {self.prog} --help"
            raise UsageError(f"{self.prog}: no command {word!r}{hint}")
        required = "the following arguments are required: {"
        if message.startswith(required):  # a group without its subcommand
            choices = message[len(required) :].split("}")[0].replace(",", ", ")
            raise UsageError(f"{self.prog} needs a subcommand: {choices}")
        raise UsageError(message)


# -- the command table --------------------------------------------------------------------

Params = JsonObject
#: A command's method call: its name and params, or a typed call (``headd_client.calls``) whose
#: answer arrives as its Struct.
Request = Callable[[argparse.Namespace, "Context"], "tuple[str, Params] | Call[object]"]
LocalRun = Callable[[argparse.Namespace, "Context"], int]


@dataclass(frozen=True)
class Context:
    """What a command runs against: the resolved store and socket, and the process's streams."""

    store: Path
    socket: Path
    environ: Mapping[str, str]
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO


@dataclass(frozen=True)
class Command:
    """One ``headctl`` command: ``words`` (``("session", "apply")``), its one-line ``help``,
    ``arguments`` adding its own options, and either ``request`` (the method call it stands
    for, whose answer ``human`` shows) or ``local`` (a command that runs here and returns its
    exit status itself)."""

    words: tuple[str, ...]
    help: str
    arguments: Callable[[argparse.ArgumentParser], object] = lambda _p: None
    request: Request | None = None
    human: Shower = show.mapping
    local: LocalRun | None = None
    description: str | None = None
    #: The part of the answer the command prints (the whole answer by default).
    select: Callable[[JsonValue, argparse.Namespace], JsonValue] = lambda result, _args: result

    @property
    def name(self) -> str:
        return " ".join(self.words)


#: Group help for the first word of multi-word commands.
GROUPS: dict[str, str] = {
    "session": "agent sessions: open, apply ops, commit, rebase, close, list",
    "index": "the SQLite index (works without a daemon)",
    "state": "the state sidecar (works without a daemon)",
    "traces": "the transcript index (works without a daemon)",
    "vectors": "the daemon's vector cache",
    "task": "tasks: open one, move its status, list the working set",
    "entity": "entities: their activity across the store",
}


@dataclass
class Failure(Exception):
    """One failure as headctl reports it: a code, a one-line message, an exit status."""

    code: str
    message: str
    status: int = EXIT_FAILURE
    details: Mapping[str, object] = field(default_factory=dict)

    def report(self, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
        if as_json:
            error = {"code": self.code, "message": self.message, "details": self.details}
            stdout.write(json.dumps({"error": error}, ensure_ascii=False) + "\n")
        line = " ".join(self.message.split())
        print(f"{self.code}: {line}", file=stderr)
        return self.status


COMMANDS: list[Command] = []

Subparsers: TypeAlias = "argparse._SubParsersAction[_Parser]"
"""What ``add_subparsers`` returns: the place a hook adds its own subcommands."""

#: Functions that add subcommands to the argparse tree themselves, ``hook(subparsers,
#: parser_class)``, for commands that own their output and exit status (a stdio server, an
#: installer): each such subcommand sets ``run_agent`` as its default, called as
#: ``run_agent(args, store, socket, environ, stdin, stdout, stderr)`` and returning the exit
#: status. The global options are added to their parsers too, unless they define them.
PARSER_HOOKS: list[Callable[[Subparsers, type[argparse.ArgumentParser]], None]] = []


def register(command: Command, group_help: str | None = None) -> None:
    """Add ``command`` to ``headctl`` (``group_help`` describes a new first word)."""
    if any(c.words == command.words for c in COMMANDS):
        raise ValueError(f"headctl command {command.name!r} is registered twice")
    if group_help is not None and len(command.words) > 1:
        GROUPS.setdefault(command.words[0], group_help)
    COMMANDS.append(command)


# -- global options, accepted anywhere ----------------------------------------------------


class _Tolerant:
    """``add_argument`` that skips an option the parser already has."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self._parser = parser

    def add_argument(self, *names: str, **kwargs: Any) -> None:  # argparse's own keywords
        taken = self._parser._option_string_actions
        if any(name in taken for name in names):
            return
        self._parser.add_argument(*names, **kwargs)


def _global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes. On subcommands their default is SUPPRESS, so a value
    given before the command words is not overwritten by the subcommand's default; a parser
    that defines one of them itself keeps its own."""
    parser = _Tolerant(parser)  # type: ignore[assignment]

    def default(value: object) -> object:
        return value if top else argparse.SUPPRESS

    parser.add_argument(
        "--store",
        default=default(None),
        metavar="PATH",
        help="the store (default $MEMHTML_ROOT, else ~/memhtml)",
    )
    parser.add_argument(
        "--socket",
        default=default(None),
        metavar="PATH",
        help="the daemon's socket (default $HEADD_SOCKET, else <store>/.memhtml/head.sock)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print one JSON document (a failure prints one JSON error)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=default(120.0),
        metavar="SECONDS",
        help="seconds to wait for an answer (default 120)",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        default=default(False),
        help="show every field of the answer, not the summary",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="headctl",
        description="Talk to headd, the memhtml head daemon, or work on a store without one.",
    )
    _global_options(parser, top=True)
    parser.add_argument("--version", action="version", version=f"headctl {installed_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    groups: dict[str, Subparsers] = {}
    for command in _all_commands():
        if len(command.words) == 1:
            leaf = sub.add_parser(
                command.words[0],
                help=command.help,
                description=command.description or command.help,
            )
        else:
            head, rest = command.words[0], command.words[1]
            if head not in groups:
                group = sub.add_parser(
                    head, help=GROUPS.get(head, ""), description=GROUPS.get(head)
                )
                _global_options(group, top=False)
                groups[head] = group.add_subparsers(
                    dest=f"{head}_command", required=True, parser_class=_Parser
                )
            leaf = groups[head].add_parser(
                rest, help=command.help, description=command.description or command.help
            )
        _global_options(leaf, top=False)
        command.arguments(leaf)
        leaf.set_defaults(_command=command)
    ours = set(sub.choices)
    for hook in PARSER_HOOKS:
        hook(sub, _Parser)
    actions: list[Subparsers] = [sub, *groups.values()]
    for name, child in sub.choices.items():
        if name not in ours:
            for node in _parsers_under(child):
                _global_options(node, top=False)
                actions += [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
    for action in actions:
        action.metavar = "{" + ",".join(action.choices) + "}"  # never the internal dest name
    return parser


def _parsers_under(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += _parsers_under(child)
    return found


# -- argument helpers ---------------------------------------------------------------------


def _query(p: argparse.ArgumentParser, *, optional: bool = False) -> None:
    p.add_argument(
        "query",
        nargs="*" if optional else "+",
        metavar="QUERY",
        help="the query; several words need no quotes",
    )


def _at(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at", metavar="SHA", help="answer at this commit (or ref) instead of the tip")


def _session_view(p: argparse.ArgumentParser) -> None:
    _at(p)
    p.add_argument(
        "--session", metavar="ID", help="see this open session's writes on top of its base"
    )


def _types(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--type",
        dest="types",
        action="append",
        choices=MEMORY_TYPES,
        metavar="TYPE",
        help=f"only memories of this type (repeatable): {', '.join(MEMORY_TYPES)}",
    )


def _limit(p: argparse.ArgumentParser, default: int = 10) -> None:
    p.add_argument(
        "--limit",
        type=int,
        default=default,
        metavar="N",
        help=f"at most N hits (default {default})",
    )


def _repo_path(value: str) -> str:
    """A memory path as the wire wants it: repo-relative, so the ``href`` form (``/areas/…``)
    a file's links carry is accepted too."""
    return value.lstrip("/")


def _href(value: str) -> str:
    """An ``href`` as the files write it: root-relative, with its leading slash."""
    return "/" + value.lstrip("/")


def _joined(words: Sequence[str] | None) -> str:
    return " ".join(words or ())


def _scope_flags(p: argparse.ArgumentParser) -> None:
    """memhtml's scope flags of ``search`` and ``recall``, beside ``--type``."""
    p.add_argument(
        "--workspace", metavar="SLUG", help="only this workspace (a memory with none never matches)"
    )
    p.add_argument(
        "--tag", dest="tags", action="append", metavar="TAG", help="any of these tags (repeatable)"
    )
    p.add_argument("--entity", metavar="TYPE:NAME", help="only memories naming this entity")
    p.add_argument(
        "--facet",
        dest="facets",
        action="append",
        metavar="NAME=VALUE",
        help="a <dl> facet (repeatable: values of one name broaden, names narrow)",
    )
    p.add_argument("--include-archived", action="store_true", help="include archived memories")
    p.add_argument(
        "--as-of",
        metavar="INSTANT",
        help="what was believed valid at this ISO instant (superseded memories included)",
    )


_SCOPE_FIELDS = ("types", "workspace", "tags", "entity", "facets", "include_archived", "as_of")


def _query_text(words: Sequence[str] | None) -> str:
    """The query the words make, refused when blank: an empty search has no answer to give."""
    query = _joined(words)
    if not query.strip():
        raise UsageError("the query is empty; give the words to search for")
    return query


def _filter(args: argparse.Namespace) -> JsonObject | None:
    """The wire's ``filter`` from the scope flags a command has; None when none is given."""
    scope = {k: getattr(args, k, None) for k in _SCOPE_FIELDS}
    scope = {k: v for k, v in scope.items() if v not in (None, False, [])}
    return scope or None


def _view(args: argparse.Namespace) -> Params:
    return {"at": args.at, "session": getattr(args, "session", None)}


# -- built-in commands --------------------------------------------------------------------


def _search_args(p: argparse.ArgumentParser) -> None:
    _query(p)
    _limit(p)
    _session_view(p)
    _types(p)
    _scope_flags(p)
    p.add_argument(
        "--now", metavar="TIME", help="rank recency as of this ISO-8601 instant (default: now)"
    )
    p.add_argument(
        "--plane",
        choices=("head", "index"),
        default=None,
        help="head: the in-memory head (default); index: the SQLite plane's four-arm retrieval",
    )
    p.add_argument(
        "--mode",
        choices=("hybrid", "seed-exact"),
        default=None,
        help="hybrid: the bounded score fusion (default); seed-exact: memhtml's head search, "
        "the one the gate ranks with",
    )


def _search(args: argparse.Namespace, _ctx: Context) -> tuple[str, Params]:
    params: Params = {"query": _query_text(args.query), "limit": args.limit, "now": args.now}
    params.update(_view(args), filter=_filter(args), plane=args.plane, mode=args.mode)
    return "search", params


def _recall_args(p: argparse.ArgumentParser) -> None:
    _query(p)
    p.add_argument(
        "--budget",
        type=int,
        dest="budget_chars",
        metavar="CHARS",
        help="characters of quoted text the pack may spend (default the plane's budget)",
    )
    _types(p)
    _scope_flags(p)


def _recall(args: argparse.Namespace, _ctx: Context) -> Call[RecallAnswer]:
    import msgspec

    from headd.wire.filter import Filter
    from headd_client import calls

    scope = _filter(args)
    return calls.recall(
        _query_text(args.query),
        budget_chars=args.budget_chars,
        filter=None if scope is None else msgspec.convert(scope, Filter),
    )


def _index_status(_args: argparse.Namespace, _ctx: Context) -> Call[IndexStatusAnswer]:
    from headd_client import calls

    return calls.index_status()


def _traces_search(args: argparse.Namespace, _ctx: Context) -> Call[TracesSearchAnswer]:
    from headd_client import calls

    return calls.traces_search(_joined(args.query), limit=args.limit)


def _traces_show(args: argparse.Namespace, _ctx: Context) -> Call[TracesShowAnswer]:
    from headd_client import calls

    return calls.traces_show(args.session)


def _sync(args: argparse.Namespace, _ctx: Context) -> Call[SyncAnswer]:
    from headd_client import calls

    return calls.sync(resolve=args.resolve)


def _reinforce_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="the memories that were used")
    p.add_argument(
        "--signal",
        choices=("neutral", "positive", "negative"),
        default="neutral",
        help="how the use went (default neutral)",
    )


def _path_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="a memory's path (areas/x.html or /areas/x.html)")


def _read_args(p: argparse.ArgumentParser) -> None:
    _path_arg(p)
    _session_view(p)


def _lookup(
    method: str,
    summary: str,
    argument: str,
    metavar: str,
    help_text: str,
    convert: Callable[[str], str],
) -> Command:
    """One of the exact-match lookups (``inbound``, ``by-entity``, …): ``{sha, paths}``."""

    def arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument(argument, metavar=metavar, help=help_text)
        _session_view(p)

    def request(args: argparse.Namespace, _ctx: Context) -> tuple[str, Params]:
        return method, {argument: convert(getattr(args, argument)), **_view(args)}

    return Command(
        (method.replace("_", "-"),),
        summary,
        arguments,
        request,
        show.paths,
    )


def _gate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", metavar="BASE", help="the commit before the landing")
    p.add_argument("landed", metavar="LANDED", help="the commit after it")
    p.add_argument(
        "--probes", type=int, default=200, metavar="N", help="probe queries (default 200)"
    )
    p.add_argument(
        "--k", type=int, default=10, metavar="K", help="ranks a probe looks at (default 10)"
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.02,
        metavar="T",
        help="how far the MRR may fall below its floor (default 0.02)",
    )
    p.add_argument(
        "--seed", type=int, default=1, metavar="S", help="seed choosing the probes (default 1)"
    )


def _gate(args: argparse.Namespace, _ctx: Context) -> tuple[str, Params]:
    return "gate", {
        "base": args.base,
        "landed": args.landed,
        "probes": args.probes,
        "k": args.k,
        "tolerance": args.tolerance,
        "seed": args.seed,
    }


def _session_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", metavar="SESSION", help="the session id session open printed")


def _open_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--id", metavar="ID", help="the session id to use (default: a new one)")
    p.add_argument(
        "--base", metavar="SHA", help="the commit the session starts from (default: the tip)"
    )


def _apply_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    p.add_argument(
        "file",
        nargs="?",
        default="-",
        metavar="FILE",
        help="ops as a JSON array or JSON lines (default: stdin)",
    )


def _apply(args: argparse.Namespace, ctx: Context) -> tuple[str, Params]:
    return "session.apply", {"session": args.session, "ops": _read_ops(args.file, ctx.stdin)}


def _commit_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    p.add_argument("--message", "-m", metavar="TEXT", help="the commit message's first line")
    p.add_argument(
        "--rebase",
        choices=("auto", "never"),
        default="auto",
        help="auto (default): a stale base is rebased onto the tip by the daemon unless a path "
        "or a memory really conflicts; never: a stale base answers rebase-needed",
    )
    p.add_argument(
        "--trace-session", metavar="ID", help="the transcript session the writes came from"
    )
    p.add_argument("--prompt", metavar="ID", help="its prompt id")
    p.add_argument("--turn", metavar="UUID", help="its turn")


def _commit(args: argparse.Namespace, _ctx: Context) -> tuple[str, Params]:
    return "session.commit", {
        "session": args.session,
        "message": args.message,
        "rebase": args.rebase,
        "session_id": args.trace_session,
        "prompt_id": args.prompt,
        "turn": args.turn,
    }


def _rebase_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    p.add_argument("--onto", metavar="SHA", help="the commit to rebase onto (default: the tip)")


def _traces_index_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--trace-root",
        metavar="DIR",
        help="transcripts root (default the daemon's, else $MEMHTML_TRACE_ROOT, else ~/.claude)",
    )


def _traces_search_args(p: argparse.ArgumentParser) -> None:
    _query(p, optional=True)
    _limit(p)


def _embed_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--embed",
        action="store_true",
        default=None,
        help="embed the chunks too (needs the embed extra)",
    )


def _rebuild_args(p: argparse.ArgumentParser) -> None:
    _embed_flag(p)
    p.add_argument(
        "--force",
        action="store_true",
        default=None,
        help="rebuild without vectors even where the index holds some",
    )


def _fill_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--limit", type=int, metavar="N", help="embed at most N texts now (default: all missing)"
    )


def _call_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("method", metavar="METHOD", help="the method name (status, search, …)")
    p.add_argument(
        "params", nargs="?", default="{}", metavar="PARAMS", help="a JSON object (default {})"
    )


def _call(args: argparse.Namespace, _ctx: Context) -> tuple[str, Params]:
    try:
        params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        raise UsageError(f"params are not JSON: {exc}") from None
    if not isinstance(params, dict):
        raise UsageError("params must be a JSON object")
    return args.method, params


def _init_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="where to create the store (default --store, else $MEMHTML_ROOT, else ~/memhtml)",
    )


def _init(args: argparse.Namespace, ctx: Context) -> int:
    from headd_client.store_init import init_store

    target = Path(args.dir).expanduser().absolute() if args.dir else ctx.store
    result = init_store(target)
    if args.json:
        ctx.stdout.write(json.dumps(result) + "\n")
    else:
        show.init(result, args, ctx.stdout)
    return EXIT_OK


def _status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--memory", action="store_true", help="only where its memory goes (status.memory)"
    )


def _show_status(result: JsonIn, args: argparse.Namespace, out: TextIO) -> None:
    (show.mapping if args.memory else show.status)(result, args, out)


def _memory_part(result: JsonValue, args: argparse.Namespace) -> JsonValue:
    """With ``--memory``, only ``status.memory``: where the daemon's bytes go."""
    if not args.memory:
        return result
    return (result.get("memory") or {}) if isinstance(result, dict) else {}


def _fixed(method: str, params: Params | None = None) -> Request:
    """A request with no arguments of its own."""
    return lambda _args, _ctx: (method, dict(params or {}))


def _by_attrs(method: str, **names: str) -> Request:
    """A request whose params are these attributes of the parsed arguments."""
    return lambda args, _ctx: (method, {key: getattr(args, attr) for key, attr in names.items()})


def _builtin_commands() -> list[Command]:
    c = Command
    return [
        c(
            ("status",),
            "what the daemon holds",
            _status_args,
            lambda args, _ctx: ("status", {"memory": True} if args.memory else {}),
            _show_status,
            select=_memory_part,
        ),
        c(("search",), "search the head", _search_args, _search, show.search),
        c(
            ("read",),
            "one memory's record",
            _read_args,
            lambda a, _c: ("read", {"path": _repo_path(a.path), **_view(a)}),
            show.read,
        ),
        c(
            ("resolve",),
            "follow archive moves and supersedes links to the live memory",
            _read_args,
            lambda a, _c: ("resolve", {"path": _repo_path(a.path), **_view(a)}),
            show.resolve,
        ),
        _lookup(
            "inbound",
            "the memories whose links point at HREF",
            "href",
            "HREF",
            "the linked-to memory (/areas/x.html or areas/x.html)",
            _href,
        ),
        _lookup(
            "by_entity",
            "the memories labelled with ENTITY",
            "entity",
            "ENTITY",
            "an entity, type:name (service:checkout-api)",
            str,
        ),
        _lookup(
            "by_frame_key",
            "the memories whose claim has the frame key KEY",
            "key",
            "KEY",
            "a frame key, as read returns it",
            str,
        ),
        _lookup(
            "by_content_hash",
            "the memories whose content hash is HASH",
            "hash",
            "HASH",
            "a content hash, sha256:<hex>",
            str,
        ),
        c(
            ("skipped",),
            "files the head could not parse",
            _at,
            _by_attrs("skipped", at="at"),
            show.skipped,
        ),
        c(
            ("advance",),
            "advance to the followed ref's tip (or load TO)",
            lambda p: p.add_argument(
                "to", nargs="?", metavar="TO", help="a ref or commit (default: the followed ref)"
            ),
            _by_attrs("advance", to="to"),
            show.advance,
        ),
        c(
            ("gate",),
            "the head gate between two commits (exit 1 when it refuses)",
            _gate_args,
            _gate,
            show.gate,
        ),
        c(
            ("recall",),
            "the SQLite plane's disclosure pack for a query",
            _recall_args,
            _recall,
            show.recall,
        ),
        c(
            ("reinforce",),
            "note that memories were used (state plane)",
            _reinforce_args,
            lambda a, _c: (
                "reinforce",
                {"paths": [_repo_path(p) for p in a.paths], "signal": a.signal},
            ),
        ),
        c(
            ("session", "open"),
            "open a session on the tip (or on --base)",
            _open_args,
            _by_attrs("session.open", id="id", base="base"),
            show.session_open,
        ),
        c(
            ("session", "apply"),
            "append ops (a JSON array or JSON lines) from FILE or stdin",
            _apply_args,
            _apply,
            show.session_apply,
        ),
        c(
            ("session", "commit"),
            "commit a session's ops to the branch",
            _commit_args,
            _commit,
            show.session_commit,
        ),
        c(
            ("session", "rebase"),
            "move a session onto the tip (or --onto)",
            _rebase_args,
            _by_attrs("session.rebase", session="session", onto="onto"),
            show.session_rebase,
        ),
        c(
            ("session", "close"),
            "close a session, dropping what it did not commit",
            _session_arg,
            _by_attrs("session.close", session="session"),
            show.session_close,
        ),
        c(
            ("session", "list"),
            "the open sessions and where each stands",
            request=_fixed("session.list"),
            human=show.session_list,
        ),
        c(
            ("index", "rebuild"),
            "rebuild the SQLite index from the tip",
            _rebuild_args,
            _by_attrs("index.rebuild", embed="embed", force="force"),
        ),
        c(
            ("index", "update"),
            "bring the SQLite index up to the tip",
            _embed_flag,
            _by_attrs("index.update", embed="embed"),
        ),
        c(("index", "status"), "what the SQLite index holds", request=_index_status),
        c(
            ("state", "export"),
            "write .memhtml/state/access.jsonl (not committed)",
            request=_fixed("state.export"),
        ),
        c(
            ("state", "import"),
            "merge .memhtml/state/access.jsonl into state.db",
            request=_fixed("state.import"),
        ),
        c(
            ("traces", "index"),
            "scan the transcripts into the trace index",
            _traces_index_args,
            _by_attrs("traces.index", trace_root="trace_root"),
        ),
        c(
            ("traces", "search"),
            "search the transcripts",
            _traces_search_args,
            _traces_search,
            show.traces_search,
        ),
        c(
            ("traces", "show"),
            "one transcript session with its prompts and memories",
            lambda p: p.add_argument("session", metavar="SESSION", help="a transcript session id"),
            _traces_show,
        ),
        c(
            ("vectors", "fill"),
            "embed what the vector cache lacks, now",
            _fill_args,
            _by_attrs("vectors.fill", limit="limit"),
            show.vectors_fill,
        ),
        c(
            ("sync",),
            "one round with the followed git remote now (or mark a conflict resolved)",
            lambda p: p.add_argument(
                "--resolve", metavar="CONFLICT", help="mark this conflict (its path or id) resolved"
            ),
            _sync,
        ),
        c(("call",), "call any method with JSON params", _call_args, _call),
        c(
            ("init",),
            "create a new, empty store laid out as memhtml lays one out",
            _init_args,
            local=_init,
        ),
        c(("check",), "check memory files or directories (no daemon needed)"),
    ]


#: What adds the commands other modules contribute, called once before the first parse; the
#: composition root (``headctl``) appends to it, so this module imports none of them.
CONTRIBUTORS: list[Callable[[], None]] = []


def _all_commands() -> list[Command]:
    if not COMMANDS:
        for command in _builtin_commands():
            register(command)
        for contribute in CONTRIBUTORS:
            contribute()
    return COMMANDS


# -- reading ops --------------------------------------------------------------------------


def _read_ops(source: str, stdin: TextIO) -> list[JsonValue]:
    try:
        text = stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read ops from {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"ops in {source} are not UTF-8 text") from None
    text = text.strip()
    if not text:
        return []
    try:
        if text.startswith("["):
            ops = json.loads(text)
        else:
            ops = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise UsageError(f"ops are not JSON: {exc}") from None
    if not isinstance(ops, list):
        raise UsageError("ops must be a JSON array or JSON lines")
    return ops
