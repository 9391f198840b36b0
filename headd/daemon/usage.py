"""What ``headd`` says about its command line and about a store it cannot serve.

A usage error (an unknown option, an ``--embedder`` or a log level that is not one, from the flag
or the environment) is one ``ERR_USAGE: …`` line naming the value and the choices, and exit 2,
before any work; a store that does not exist, is not a repository or has no commit is one
``ERR_GIT`` line saying how to create one. Nothing here imports the daemon: a usage error answers
at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from headd.errors import GitFailure, HeaddError


class UsageParser(argparse.ArgumentParser):
    """A usage error is one ``ERR_USAGE: …`` line and exit 2, as headctl's are."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"ERR_USAGE: {message} (see headd --help)\n")


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def embedder_choices() -> list[str]:
    """Every value ``--embedder`` accepts (the model names import no model code)."""
    from headd.embed.factory import LOCAL_MODELS

    return ["auto", "off", "hash", *sorted(LOCAL_MODELS)]


def check_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, environ: Mapping[str, str]
) -> str:
    """Refuse, as a usage error (exit 2) naming the value and the choices, an embedder or a
    log level that is not one; returns the log level to use."""
    from headd.embed.factory import embedder_setting

    setting = embedder_setting(args.embedder, dict(environ))
    choices = embedder_choices()
    if setting not in choices:
        source = "--embedder" if args.embedder else "$HEADD_EMBEDDER"
        parser.error(f"{source} {setting!r} is not an embedder; choose from {', '.join(choices)}")
    level = args.log_level or environ.get("HEADD_LOG_LEVEL") or "INFO"
    if level.upper() not in LOG_LEVELS:
        source = "--log-level" if args.log_level else "$HEADD_LOG_LEVEL"
        parser.error(f"{source} {level!r} is not a log level; choose from {', '.join(LOG_LEVELS)}")
    return level.upper()


def store_problem(store: Path) -> str | None:
    """Why ``store`` cannot be served, with what to run instead; None when it looks like a
    repository (an empty one is found later, when its branch does not resolve)."""
    create = f"create one with `headctl init {store}` (or `memhtml init`)"
    if not store.exists():
        return f"no store at {store}; {create}"
    if not (store / ".git").exists() and not (store / "HEAD").is_file():
        return f"{store} is not a git repository; {create}"
    return None


def start_failure_hint(exc: HeaddError, store: Path) -> str:
    """What to do about a start that failed, when we can say (an empty repository)."""
    if not isinstance(exc, GitFailure):
        return ""
    try:
        import pygit2

        empty = pygit2.Repository(str(store)).is_empty
    except Exception:  # the message already says what is wrong
        return ""
    if empty:
        return (
            "; the repository has no commit yet: commit a memory first, "
            "or start over with `headctl init`"
        )
    return ""
