"""Fetch and push through the user's own ``git``.

The network half goes through the ``git`` command, not libgit2: it is the only way to honour
everything a user has configured for a remote (``ssh`` with its agent and ``~/.ssh/config``,
credential helpers, ``insteadOf`` rewrites, proxies) exactly as ``git push`` does by hand. Git never
prompts here (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode) and every call has a deadline, so a
remote that asks for a password or stops answering fails instead of hanging the daemon. At the
deadline, and when the daemon stops, git dies with every process it started (its process group).
A fetch checks every object it brings (``FSCK_CONFIG``), so a malformed tree never gets in.

A push is never forced: the remote branch moves only if it still points at an ancestor of what we
push, so git's own update is the compare-and-swap on the remote. Failures are classified by what
they are, because the caller treats them differently: ``non-fast-forward`` means fetch, replay and
retry; ``network`` and ``timeout`` are transient; ``auth``, ``hook``, ``not-found``,
``bad-objects`` and ``other`` are permanent until someone changes something, and are reported,
not retried in a loop. ``refused-tree`` is a branch that names no commit (a tree or a blob
written on the server by hand); the round gives the same kind to a tip whose tree breaks the
checkout rules, and adds ``checkout`` and ``internal`` for what fails after the fetch.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from headd.errors import GitFailure
from headd.remote import quarantine

FailureKind = Literal[
    "non-fast-forward",
    "network",
    "timeout",
    "auth",
    "hook",
    "not-found",
    "bad-objects",
    "refused-tree",
    "checkout",
    "internal",
    "other",
]

#: Kinds that may go away by themselves, so a later round retries them.
TRANSIENT: frozenset[FailureKind] = frozenset({"network", "timeout"})

#: Seconds one fetch or push may take (``--remote-timeout``) before it is killed.
DEFAULT_TIMEOUT = 60.0


class RemoteFailure(GitFailure):
    """A round that did not happen, with the kind of reason (see the module docstring) and, for
    a refused tree, the commit and the path."""

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        commit: str | None = None,
        path: str | None = None,
    ) -> None:
        details: dict[str, str] = {"kind": kind}
        if commit is not None:
            details["commit"] = commit
        if path is not None:
            details["path"] = path
        super().__init__(message, details)
        self.kind: FailureKind = kind
        self.commit = commit
        self.path = path

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


# Patterns over git's stderr, most specific first. git's messages are stable across versions for
# these cases (they come from the transports and receive-pack), and anything unmatched is "other".
_PATTERNS: tuple[tuple[FailureKind, re.Pattern[str]], ...] = (
    (
        "bad-objects",
        re.compile(r"fsck error|did not pass fsck|index-pack failed|unpack-objects failed", re.I),
    ),
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


#: Every object a fetch brings is checked as ``git fsck`` checks it, and a pack with one that
#: fails (a ``.git`` tree entry, a bad mode, a malformed ``.gitmodules``) is refused whole: it never
#: enters the object store (``headd.remote.quarantine`` holds it apart until the checks passed).
#: ``unpackLimit=1`` keeps every fetch one pack, and no automatic gc runs inside the quarantine.
#: Placed before the command, so they override the user's config.
FSCK_CONFIG = (
    "-c",
    "fetch.fsckObjects=true",
    "-c",
    "transfer.fsckObjects=true",
    "-c",
    "fetch.unpackLimit=1",
    "-c",
    "transfer.unpackLimit=1",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
)


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


class Running:
    """The process groups of the git commands running now, so a stop can end them all.

    Every git runs as the leader of a process group of its own: what it starts (``sh -c`` for an
    ``uploadpack`` or ``core.sshCommand``, ``ssh``, a credential helper) inherits the group, so
    killing the group at the deadline or at shutdown leaves nothing behind.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self.closed = False

    def add(self, pgid: int) -> bool:
        """Hold ``pgid`` for :meth:`kill_all`; False when the stop came first (the caller then
        kills the group itself: a stop between the ``closed`` check and this call would
        otherwise leave it running, and the round waiting on it)."""
        with self._lock:
            self._groups.add(pgid)
            return not self.closed

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def kill_all(self) -> None:
        """Kill every running group, and any started from now on (the daemon is stopping)."""
        with self._lock:
            self.closed = True
            groups = list(self._groups)
        for pgid in groups:
            kill_group(pgid)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _git(
    store: Path,
    args: list[str],
    timeout: float,
    running: Running | None = None,
    env: dict[str, str] | None = None,
) -> GitRun:
    """Run git with a deadline; at the deadline (or ``running.kill_all``) its whole process group
    dies."""
    running = running or Running()
    if running.closed:
        raise RemoteFailure("other", "the daemon is stopping")
    try:
        proc = subprocess.Popen(
            ["git", "-C", str(store), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**_env(), **(env or {})},
            start_new_session=True,
        )
    except OSError as exc:
        raise RemoteFailure("other", f"git could not run: {exc}") from exc
    if not running.add(proc.pid):
        kill_group(proc.pid)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        kill_group(proc.pid)
        proc.communicate()
        raise RemoteFailure("timeout", f"git {args[0]} took longer than {timeout:g} s") from exc
    finally:
        # The leader has exited, but what it started may not have: the group goes with it.
        kill_group(proc.pid)
        running.discard(proc.pid)
    if running.closed and proc.returncode < 0:
        raise RemoteFailure("other", f"git {args[0]} was stopped with the daemon")
    return GitRun(proc.returncode, stdout, stderr)


def _last_lines(text: str, count: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "git failed without a message"


def remote_url(store: Path, remote: str) -> str | None:
    """The fetch URL configured for ``remote``, or None when no such remote exists."""
    run = _git(store, ["remote", "get-url", remote], timeout=10.0)
    return run.stdout.strip() if run.returncode == 0 else None


def tracking_ref(remote: str, branch: str) -> str:
    return f"refs/remotes/{remote}/{branch}"


def fetch(
    store: Path,
    remote: str,
    branch: str,
    timeout: float = DEFAULT_TIMEOUT,
    running: Running | None = None,
) -> str | None:
    """Fetch ``remote``'s ``branch`` into its tracking ref; return its sha, None if it has none.

    Only the followed branch is fetched: the memory tree and the committed state sidecar travel
    in it, and nothing else of this store does.
    """
    objects = _objects_dir(store, running)
    with quarantine.quarantine(objects) as incoming:
        args = [
            *FSCK_CONFIG,
            "fetch",
            "--quiet",
            "--no-tags",
            "--refmap=",
            remote,
            f"refs/heads/{branch}",
        ]
        run = _git(store, args, timeout, running, quarantine.env_for(incoming, objects))
        if run.returncode != 0:
            if re.search(r"couldn't find remote ref", run.stderr, re.I):
                return None  # an empty remote: the first push creates the branch
            raise RemoteFailure(classify(run.stderr), _last_lines(run.stderr))
        sha = _fetched_sha(store)
        env = quarantine.env_for(incoming, objects)
        kind = _git(store, ["cat-file", "-t", sha], 10.0, running, env).stdout.strip()
        if kind != "commit":  # a branch git's receive-pack would refuse, written on the server
            raise RemoteFailure(
                "refused-tree",
                f"the remote's branch names a {kind or 'missing object'} ({sha[:12]}), not a "
                "commit; nothing of it was taken, and the remote must change",
                commit=sha,
            )
        quarantine.join(incoming, objects)
    update = _git(store, ["update-ref", tracking_ref(remote, branch), sha], 10.0, running)
    if update.returncode != 0:
        raise RemoteFailure("other", _last_lines(update.stderr))
    return sha


def _objects_dir(store: Path, running: Running | None) -> Path:
    """The store's object directory (the common one, for a linked work tree)."""
    run = _git(store, ["rev-parse", "--git-path", "objects"], 10.0, running)
    if run.returncode != 0:
        raise RemoteFailure("not-found", _last_lines(run.stderr))
    path = Path(run.stdout.strip())
    return path if path.is_absolute() else store / path


#: Where ``headctl forget --push`` records on the remote that it rewrote a branch: the ref
#: named by the branch's old tip points at its rewritten tip.
REWRITTEN_PREFIX = "refs/headd/rewritten/"


def rewritten_tip(
    store: Path,
    remote: str,
    old: str,
    timeout: float = DEFAULT_TIMEOUT,
    running: Running | None = None,
) -> str | None:
    """The tip ``forget`` rewrote the remote's branch at ``old`` into, None if it did not."""
    run = _git(store, ["ls-remote", remote, REWRITTEN_PREFIX + old], timeout, running)
    if run.returncode != 0:
        raise RemoteFailure(classify(run.stderr), _last_lines(run.stderr))
    line = run.stdout.strip().split("\n", 1)[0]
    return line.split()[0] if line else None


def _fetched_sha(store: Path) -> str:
    """The commit the fetch brought, from ``FETCH_HEAD`` (its first line's first field)."""
    run = _git(store, ["rev-parse", "--git-path", "FETCH_HEAD"], 10.0)
    path = Path(run.stdout.strip())
    text = (path if path.is_absolute() else store / path).read_text(encoding="utf-8")
    sha = text.split(maxsplit=1)[0] if text.strip() else ""
    if not re.fullmatch(r"[0-9a-f]{40}([0-9a-f]{24})?", sha):
        raise RemoteFailure("other", "the fetch wrote no commit to FETCH_HEAD")
    return sha


def push(
    store: Path,
    remote: str,
    sha: str,
    branch: str,
    timeout: float = DEFAULT_TIMEOUT,
    running: Running | None = None,
) -> None:
    """Move ``remote``'s ``branch`` to ``sha``, only as a fast-forward; raise on any refusal.

    On success the tracking ref is moved too (git does this for a configured remote).
    """
    run = _git(
        store,
        ["push", "--porcelain", "--quiet", remote, f"{sha}:refs/heads/{branch}"],
        timeout,
        running,
    )
    if run.returncode == 0:
        return
    text = run.stdout + "\n" + run.stderr
    raise RemoteFailure(classify(text), _last_lines(text))
