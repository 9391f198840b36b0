"""Fetch and push through the user's own ``git``.

The network half goes through the ``git`` command, not libgit2: it is the only way to honour
everything a user has configured for a remote (``ssh`` with its agent and ``~/.ssh/config``,
credential helpers, ``insteadOf`` rewrites, proxies) exactly as ``git push`` does by hand. Git never
prompts here (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode) and every call has a deadline, so a
remote that asks for a password or stops answering fails instead of hanging the daemon.

A push is never forced: the remote branch moves only if it still points at an ancestor of what we
push, so git's own update is the compare-and-swap on the remote. Failures are classified by what
they are, because the caller treats them differently: ``non-fast-forward`` means fetch, replay and
retry; ``network`` is transient; ``auth``, ``hook``, ``not-found`` and ``other`` are permanent until
someone changes something, and are reported, not retried in a loop.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from headd.errors import GitFailure

FailureKind = Literal["non-fast-forward", "network", "auth", "hook", "not-found", "other"]

#: Kinds that may go away by themselves, so a later round retries them.
TRANSIENT: frozenset[FailureKind] = frozenset({"network"})

#: Seconds one fetch or push may take before it counts as a network failure.
DEFAULT_TIMEOUT = 60.0


class RemoteFailure(GitFailure):
    """A fetch or push that did not happen, with the kind of reason (see the module docstring)."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message, {"kind": kind})
        self.kind: FailureKind = kind

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


# Patterns over git's stderr, most specific first. git's messages are stable across versions for
# these cases (they come from the transports and receive-pack), and anything unmatched is "other".
_PATTERNS: tuple[tuple[FailureKind, re.Pattern[str]], ...] = (
    ("hook", re.compile(r"hook declined|\[remote rejected\]|pre-receive|update hook", re.I)),
    (
        "non-fast-forward",
        re.compile(r"non-fast-forward|\(fetch first\)|\[rejected\]|stale info", re.I),
    ),
    (
        "auth",
        re.compile(
            r"authentication failed|permission denied|could not read (username|password)|"
            r"terminal prompts disabled|host key verification failed|403|401",
            re.I,
        ),
    ),
    (
        "not-found",
        re.compile(
            r"does not appear to be a git repository|repository .* not found|"
            r"no such remote|couldn't find remote ref|no such file or directory",
            re.I,
        ),
    ),
    (
        "network",
        re.compile(
            r"could not resolve host|connection (refused|timed out|reset)|network is unreachable|"
            r"unable to access|could not connect|early eof|the remote end hung up|timed out",
            re.I,
        ),
    ),
)


def classify(stderr: str) -> FailureKind:
    """The kind of a failed git network command, from what it printed."""
    for kind, pattern in _PATTERNS:
        if pattern.search(stderr):
            return kind
    return "other"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["LC_ALL"] = "C"  # the messages classify() reads are git's English ones
    return env


@dataclass(frozen=True)
class GitRun:
    returncode: int
    stdout: str
    stderr: str


def _git(store: Path, args: list[str], timeout: float) -> GitRun:
    try:
        proc = subprocess.run(
            ["git", "-C", str(store), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_env(),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise RemoteFailure("network", f"git {args[0]} took longer than {timeout:g} s") from exc
    except OSError as exc:
        raise RemoteFailure("other", f"git could not run: {exc}") from exc
    return GitRun(proc.returncode, proc.stdout, proc.stderr)


def _last_lines(text: str, count: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "git failed without a message"


def remote_url(store: Path, remote: str) -> str | None:
    """The fetch URL configured for ``remote``, or None when no such remote exists."""
    run = _git(store, ["remote", "get-url", remote], timeout=10.0)
    return run.stdout.strip() if run.returncode == 0 else None


def tracking_ref(remote: str, branch: str) -> str:
    return f"refs/remotes/{remote}/{branch}"


def fetch(store: Path, remote: str, branch: str, timeout: float = DEFAULT_TIMEOUT) -> str | None:
    """Fetch ``remote``'s ``branch`` into its tracking ref; return its sha, None if it has none.

    Only the followed branch is fetched: the memory tree and the committed state sidecar travel
    in it, and nothing else of this store does.
    """
    refspec = f"+refs/heads/{branch}:{tracking_ref(remote, branch)}"
    run = _git(store, ["fetch", "--quiet", "--no-tags", remote, refspec], timeout)
    if run.returncode != 0:
        if re.search(r"couldn't find remote ref", run.stderr, re.I):
            return None  # an empty remote: the first push creates the branch
        raise RemoteFailure(classify(run.stderr), _last_lines(run.stderr))
    probe = _git(store, ["rev-parse", "--verify", "--quiet", tracking_ref(remote, branch)], 10.0)
    return probe.stdout.strip() or None


#: Where ``headctl forget --push`` records on the remote that it rewrote a branch: the ref
#: named by the branch's old tip points at its rewritten tip.
REWRITTEN_PREFIX = "refs/headd/rewritten/"


def rewritten_tip(
    store: Path, remote: str, old: str, timeout: float = DEFAULT_TIMEOUT
) -> str | None:
    """The tip ``forget`` rewrote the remote's branch at ``old`` into, None if it did not."""
    run = _git(store, ["ls-remote", remote, REWRITTEN_PREFIX + old], timeout)
    if run.returncode != 0:
        raise RemoteFailure(classify(run.stderr), _last_lines(run.stderr))
    line = run.stdout.strip().split("\n", 1)[0]
    return line.split()[0] if line else None


def push(store: Path, remote: str, sha: str, branch: str, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Move ``remote``'s ``branch`` to ``sha``, only as a fast-forward; raise on any refusal.

    On success the tracking ref is moved too (git does this for a configured remote).
    """
    run = _git(
        store, ["push", "--porcelain", "--quiet", remote, f"{sha}:refs/heads/{branch}"], timeout
    )
    if run.returncode == 0:
        return
    text = run.stdout + "\n" + run.stderr
    raise RemoteFailure(classify(text), _last_lines(text))
