"""``headctl check [--root DIR] [--json] FILE|DIR…``: check memory files as an author would.

A directory stands for every ``.html`` file under it. Needs no daemon and no store: each file
is read, parsed and checked exactly as the daemon would parse it at that path (docs/protocol.md,
``headctl check``). The path given to the parser, and printed, is the file's path relative to
``--root``, by default the git work tree holding the file (found with
``pygit2.discover_repository``), so ``archived``, ``para`` and ``workspace`` come out as they
will once committed. A file outside every work tree and outside ``--root`` keeps the path as
given on the command line.

A directory's walk leaves out what is not a memory at its store path (``index.html`` files, the
store's own ``README.html``); a file named on the line is checked whatever its name. A path
that does not exist is "not found", not an invalid memory.

Exit status: 0 when every file is valid, 1 when any file is invalid, unreadable or not found
(one line ``ERR_INVALID_MEMORY: …`` or ``ERR_PATH_NOT_FOUND: …`` on stderr), 2 on a usage
error. ``--json`` prints one JSON array with ``{path, ok, record, violations, warnings}`` per
file; ``record`` is the wire record or null.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

import msgspec
import pygit2

from headd.memfile.parse import check_memory
from headd.symlinks import worktree_symlink
from headd.wire.answers import wire_record

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


class _UsageError(Exception):
    """argparse's complaint, raised instead of exiting so ``main`` returns 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would sys.exit(2) from inside a library
        raise _UsageError(message)


def _arg_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="headctl check",
        description="Parse and check memory files as memhtml 0.15.1 reads them.",
    )
    parser.add_argument("--root", help="store root the printed paths are relative to")
    parser.add_argument("--json", action="store_true", help="print one JSON array")
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="memory files, or directories to check every .html file under",
    )
    return parser


def _work_tree_of(file: Path) -> Path | None:
    """The git work tree holding ``file``, or None outside any repository."""
    try:
        found = pygit2.discover_repository(str(file.parent))
    except (pygit2.GitError, OSError):
        return None
    if found is None:
        return None
    workdir = pygit2.Repository(found).workdir
    return Path(workdir).resolve() if workdir else None


def _store_path(file: str, root: Path | None) -> str:
    """The repo-relative path the parser sees (forward slashes)."""
    absolute = Path(file).resolve()
    base = root if root is not None else _work_tree_of(absolute)
    if base is not None:
        try:
            return absolute.relative_to(base).as_posix()
        except ValueError:
            pass
    return Path(file).as_posix()


def _symlink_on(file: str, root: str | None) -> str | None:
    """A symbolic link the check would read ``file`` through: the file itself, or a directory
    between ``root`` and it. A link may point outside the store; its target is never read."""
    if os.path.islink(file):
        return file
    if root is not None:
        try:
            relative = Path(file).absolute().relative_to(Path(root).absolute()).as_posix()
        except ValueError:
            return None
        return worktree_symlink(root, relative)
    return None


#: Directories a recursive check never enters: git's, and the tool's own state.
SKIPPED_DIRS = frozenset({".git", ".memhtml"})


#: The violation of a path that does not exist.
NOT_FOUND = "not found"


def expand(arguments: list[str]) -> list[str]:
    """The files to check: each FILE as given, each DIR as the ``.html`` files under it (sorted,
    recursively, without ``.git/`` and ``.memhtml/``)."""
    return [file for file, _ in _expand(arguments)]


def _expand(arguments: list[str]) -> list[tuple[str, bool]]:
    """Each file with whether it was named on the line (True) or found in a directory."""
    files: list[tuple[str, bool]] = []
    for argument in arguments:
        if not os.path.isdir(argument):
            files.append((argument, True))
            continue
        found: list[str] = []
        for folder, dirs, names in os.walk(argument):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            found += [os.path.join(folder, n) for n in names if n.endswith(".html")]
        files += [(file, False) for file in sorted(found)]
    return files


def check_files(files: list[str], root: str | None) -> list[dict[str, Any]]:
    """One result object per file, in the order given (directories expanded, see ``expand``)."""
    from headd.head.version import is_candidate_path

    root_path = Path(root).resolve() if root is not None else None
    results: list[dict[str, Any]] = []
    for file, named in _expand(files):
        path = _store_path(file, root_path)
        if not named and not is_candidate_path(path):
            continue
        if named and not os.path.lexists(file):
            results.append(
                {"path": path, "ok": False, "record": None, "violations": [NOT_FOUND]}
                | {"warnings": []}
            )
            continue
        link = _symlink_on(file, root)
        if link is not None:
            results.append(
                {
                    "path": path,
                    "ok": False,
                    "record": None,
                    "violations": [f"{link} is a symbolic link; not followed"],
                    "warnings": [],
                }
            )
            continue
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            results.append(
                {
                    "path": path,
                    "ok": False,
                    "record": None,
                    "violations": [f"cannot read file: {reason}"],
                    "warnings": [],
                }
            )
            continue
        result = check_memory(path, data)
        results.append(
            {
                "path": path,
                "ok": result.ok,
                "record": wire_record(result.record) if result.record is not None else None,
                "violations": list(result.violations),
                "warnings": list(result.warnings),
            }
        )
    return results


def _print_human(results: list[dict[str, Any]], out: TextIO) -> None:
    for result in results:
        if result["violations"] == [NOT_FOUND]:
            out.write(f"{NOT_FOUND}\t{result['path']}\n")
            continue
        out.write(f"{'ok' if result['ok'] else 'invalid'}\t{result['path']}\n")
        for violation in result["violations"]:
            out.write(f"  violation: {violation}\n")
        for warning in result["warnings"]:
            out.write(f"  warning: {warning}\n")


def main(argv: list[str] | None = None) -> int:
    """Run ``headctl check``; returns the exit status (0 ok, 1 invalid, 2 usage)."""
    args_list = sys.argv[1:] if argv is None else argv
    try:
        args = _arg_parser().parse_args(args_list)
    except _UsageError as exc:
        sys.stderr.write(f"ERR_USAGE: headctl check: {exc}\n")
        return EXIT_USAGE
    except SystemExit as exc:  # --help prints and exits 0
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    if args.root is not None and not os.path.isdir(args.root):
        sys.stderr.write(f"ERR_USAGE: headctl check: --root {args.root} is not a directory\n")
        return EXIT_USAGE

    results = check_files(args.files, args.root)
    if args.json:
        sys.stdout.write(msgspec.json.encode(results).decode("utf-8") + "\n")
    else:
        _print_human(results, sys.stdout)
    sys.stdout.flush()

    missing = sum(1 for r in results if r["violations"] == [NOT_FOUND])
    invalid = sum(1 for r in results if not r["ok"]) - missing
    if invalid:
        sys.stderr.write(f"ERR_INVALID_MEMORY: {invalid} of {len(results)} file(s) invalid\n")
    elif missing:
        sys.stderr.write(f"ERR_PATH_NOT_FOUND: {missing} of {len(results)} path(s) not found\n")
    return EXIT_INVALID if invalid or missing else EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
