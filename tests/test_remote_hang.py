"""A remote that hangs: git and everything it started die with the round, the stop never waits.

The hanging remote is the follower's own ``remote.origin.uploadpack``: a script that starts a
``sleep`` of its own (as ``ssh`` or a credential helper would be) and waits on it, writing the
child's pid so the test can look for it afterwards. Guards seen failing when broken:

- ``subprocess.run`` instead of a process group killed as one -> the ``sleep`` outlives the
  round (``test_the_deadline_kills_git_and_what_it_started``);
- ``RemoteSync.close`` not killing the running group -> the round waits out its whole deadline
  (``test_close_ends_a_hung_round_at_once``) and the daemon's stop waits for it;
- ``round_now`` without its bound -> ``test_sync_answers_running_...`` waits for the round;
- ``Running.add`` not telling a git started as the daemon stops -> that git runs on and the
  round waits for it (``test_a_git_started_as_the_daemon_stops_is_killed_not_waited_for``).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from support.daemon import Daemon, short_socket_dir, wait_for
from support.git import git
from support.remote import hub_and_follower, sync_of

from headd.daemon.remote_follower import RemoteFollower
from headd.remote.transport import RemoteFailure, Running, _git


def alive(pid: int) -> bool:
    """Is ``pid`` a process that still runs (a zombie waiting to be reaped does not count)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.fixture
def hung(tmp_path: Path) -> tuple[Path, Path]:
    """(a follower whose remote never answers, the file its hung child's pid is written to)."""
    _, store = hub_and_follower(tmp_path)
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "hang.sh"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    script.chmod(0o755)
    git(store, "config", "remote.origin.uploadpack", str(script))
    return store, pidfile


def child_pid(pidfile: Path) -> int:
    assert wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), timeout=10)
    return int(pidfile.read_text())


def test_the_deadline_kills_git_and_what_it_started(hung: tuple[Path, Path]) -> None:
    store, pidfile = hung
    sync = sync_of(store)
    sync.timeout = 1.0
    started = time.monotonic()
    report = sync.round()
    assert time.monotonic() - started < 10
    assert report.action == "failed" and report.error is not None
    assert report.error.kind == "timeout" and report.error.transient
    pid = child_pid(pidfile)
    assert wait_for(lambda: not alive(pid), timeout=5), f"{pid} outlived the round"


def test_close_ends_a_hung_round_at_once(hung: tuple[Path, Path]) -> None:
    store, pidfile = hung
    sync = sync_of(store)
    sync.timeout = 120.0
    done = threading.Event()
    thread = threading.Thread(target=lambda: (sync.round(), done.set()), daemon=True)
    thread.start()
    pid = child_pid(pidfile)
    started = time.monotonic()
    sync.close()
    assert done.wait(10), "the round still waits on its git"
    assert time.monotonic() - started < 10
    assert wait_for(lambda: not alive(pid), timeout=5)
    error = sync.status().last_error
    assert error is not None and error.kind != "internal"


def test_sync_answers_running_within_its_bound_and_close_ends_the_round(
    hung: tuple[Path, Path],
) -> None:
    store, pidfile = hung
    sync = sync_of(store)
    sync.timeout = 120.0

    async def scenario() -> str:
        follower = RemoteFollower(sync, interval=3600)
        started = time.monotonic()
        report = await follower.round_now(wait=0.5)
        assert time.monotonic() - started < 5
        await follower.close()
        return report.action

    assert asyncio.run(scenario()) == "running"
    pid = child_pid(pidfile)
    assert wait_for(lambda: not alive(pid), timeout=10)


@pytest.mark.slow
def test_sigterm_stops_a_daemon_with_a_hung_remote_and_leaves_no_process(
    hung: tuple[Path, Path],
) -> None:
    store, pidfile = hung
    daemon = Daemon(
        store,
        short_socket_dir() / "h.sock",
        extra=["--remote", "origin", "--fetch-interval", "1", "--remote-timeout", "120"],
    ).wait_ready()
    pid = child_pid(pidfile)
    started = time.monotonic()
    code = daemon.stop(timeout=30)
    took = time.monotonic() - started
    assert code == 0, daemon.log()
    assert took < 10, f"the stop took {took:.1f} s"
    assert wait_for(lambda: not alive(pid), timeout=5), f"{pid} outlived the daemon"
    assert os.path.exists(store / ".git" / "HEAD")


class StoppedWhileStarting(Running):
    """The daemon's stop landing after ``_git`` checked ``closed`` and before it held the new
    git's group: the interleaving a busy start made happen."""

    def add(self, pgid: int) -> bool:
        self.kill_all()
        return super().add(pgid)


def test_a_git_started_as_the_daemon_stops_is_killed_not_waited_for(tmp_path: Path) -> None:
    store = tmp_path / "repo"
    store.mkdir()
    git(store, "init", "-q")
    started = time.monotonic()
    with pytest.raises(RemoteFailure) as failure:
        _git(store, ["-c", "alias.hang=!sleep 300", "hang"], 60.0, StoppedWhileStarting())
    assert time.monotonic() - started < 10, "the round waited on a git the stop missed"
    assert "stopped with the daemon" in str(failure.value)
