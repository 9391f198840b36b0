"""Two real daemons on two clones of one bare repository: many machines, one memory.

Each daemon runs with ``--remote origin`` and a short fetch interval; clients write through
sessions over the real sockets, as agents do. What is checked is what a user relies on: every
acknowledged write reaches the remote exactly once, both sides converge to the remote's tip, the
remote's history stays linear and ``git fsck --strict`` clean, a dead remote never blocks a
commit, and a kill -9 in a burst loses nothing acknowledged.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from headd_client import Client
from support.daemon import Daemon, headctl, short_socket_dir
from support.git import external_commit, git
from support.memory import memory_html
from support.stores import make_store

pytestmark = pytest.mark.slow

FETCH_INTERVAL = "0.5"


class Side:
    """One machine: a clone of the hub and the daemon serving it."""

    def __init__(self, store: Path, sock: Path) -> None:
        self.store = store
        self.sock = sock
        self.daemon: Daemon | None = None

    def start(self, fetch_interval: str = FETCH_INTERVAL) -> Side:
        self.daemon = Daemon(
            self.store,
            self.sock,
            extra=["--remote", "origin", "--fetch-interval", fetch_interval],
        ).wait_ready()
        return self

    def stop(self) -> None:
        if self.daemon is not None:
            self.daemon.stop()

    def call(self, method: str, params: dict[str, object] | None = None) -> dict:  # type: ignore[type-arg]
        with Client(str(self.sock)).connect() as client:
            return client.call(method, params or {})  # type: ignore[no-any-return]

    def write(self, client: Client, title: str, claim: str) -> str:
        session = client.call("session.open", {})["session"]
        client.call(
            "session.apply",
            {
                "session": session,
                "ops": [{"op": "write", "title": title, "type": "semantic", "claim": claim}],
            },
        )
        result = client.call("session.commit", {"session": session, "message": title})
        assert result["outcome"] == "committed", result
        return str(result["sha"])

    def headctl(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return headctl("--store", str(self.store), "--socket", str(self.sock), *argv)

    def tip(self) -> str:
        return git(self.store, "rev-parse", "main")


@pytest.fixture
def sides(tmp_path: Path) -> Iterator[tuple[Path, Side, Side]]:
    seed = tmp_path / "seed"
    make_store(seed)
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(hub)], check=True)
    socks = short_socket_dir()
    made = []
    for name in ("a", "b"):
        store = tmp_path / name
        subprocess.run(["git", "clone", "-q", str(hub), str(store)], check=True)
        made.append(Side(store, socks / f"{name}.sock"))
    try:
        yield hub, made[0], made[1]
    finally:
        for side in made:
            side.stop()


def hub_tip(hub: Path) -> str:
    return git(hub, "rev-parse", "main")


def converged(hub: Path, *sides: Side) -> bool:
    tip = hub_tip(hub)
    return all(side.tip() == tip for side in sides)


def wait_until(predicate: object, timeout: float) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def claims_on(repo: Path, ref: str = "main") -> list[str]:
    """Every claim in the tree at ``ref`` (one per memory file), as the files hold them."""
    out = []
    for path in git(repo, "ls-tree", "-r", "--name-only", ref).splitlines():
        if path.endswith(".html"):
            text = git(repo, "show", f"{ref}:{path}")
            match = re.search(r"<mark>(.*?)</mark>", text, re.S)
            if match:
                out.append(match.group(1))
    return out


def assert_linear_and_clean(hub: Path) -> None:
    for line in git(hub, "rev-list", "--parents", "main").splitlines():
        assert len(line.split()) <= 2, f"a merge commit reached the remote: {line}"
    fsck = subprocess.run(
        ["git", "-C", str(hub), "fsck", "--strict"], capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_concurrent_writes_on_both_sides_all_land_once(sides: tuple[Path, Side, Side]) -> None:
    hub, a, b = sides
    a.start()
    b.start()
    per_side, writers = 100, 4
    claims: list[str] = []
    errors: list[BaseException] = []

    def writer(side: Side, tag: str, count: int) -> None:
        try:
            with Client(str(side.sock)).connect() as client:
                for i in range(count):
                    claim = f"Fact {tag} number {i} is recorded by writer {tag}."
                    side.write(client, f"Fact {tag} {i}", claim)
                    claims.append(claim)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(side, f"{name}{w}", per_side // writers))
        for name, side in (("a", a), ("b", b))
        for w in range(writers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors, errors
    assert len(claims) == 2 * per_side
    assert wait_until(lambda: converged(hub, a, b), 90), (
        a.call("status")["remote"],
        b.call("status")["remote"],
    )
    on_hub = claims_on(hub)
    for claim in claims:
        assert on_hub.count(claim) == 1, claim
    assert_linear_and_clean(hub)
    travelled = git(hub, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert not [p for p in travelled if p.startswith(".memhtml/") or p.endswith(".db")]
    for side in (a, b):
        remote = side.call("status")["remote"]
        assert remote["ahead"] == 0 and remote["behind"] == 0 and remote["rescues"] == 0
        assert remote["last_error"] is None


def test_a_write_on_one_side_is_searchable_on_the_other(sides: tuple[Path, Side, Side]) -> None:
    hub, a, b = sides
    a.start()
    b.start()
    with Client(str(a.sock)).connect() as client:
        a.write(client, "Pelican migration", "Pelicans migrate south in late October.")

    def found() -> bool:
        hits = b.call("search", {"query": "pelicans migrate", "limit": 3})["hits"]
        return any("pelican" in hit["path"] for hit in hits)

    assert wait_until(found, 30)


def test_a_commit_is_pushed_without_waiting_for_the_next_fetch(
    sides: tuple[Path, Side, Side],
) -> None:
    """A session commit pokes the follower, which pushes the tip at once: with an hour between
    fetches, the remote still has the commit soon after it is acknowledged."""
    hub, a, _ = sides
    a.start(fetch_interval="3600")
    a.call("sync")  # queued behind the start's round: once answered, no round is under way
    with Client(str(a.sock)).connect() as client:
        sha = a.write(client, "Heron nesting", "Herons nest in colonies called heronries.")
    assert wait_until(lambda: hub_tip(hub) == sha, 30)


def test_a_same_path_conflict_keeps_both_and_status_lists_it(
    sides: tuple[Path, Side, Side],
) -> None:
    hub, a, b = sides
    external_commit(
        a.store, {"areas/inbox/window.html": memory_html("Window", "The window opens on Monday.")}
    )
    external_commit(
        b.store, {"areas/inbox/window.html": memory_html("Window", "The window opens on Friday.")}
    )
    a.start()
    assert wait_until(lambda: hub_tip(hub) == a.tip(), 30)
    b.start()
    assert wait_until(lambda: b.call("status")["remote"]["conflicts"], 30)
    [conflict] = b.call("status")["remote"]["conflicts"]
    assert conflict["path"] == "areas/inbox/window.html"
    assert "Monday" in git(b.store, "show", "main:areas/inbox/window.html")
    assert "Friday" in git(b.store, "show", f"{conflict['ref']}:areas/inbox/window.html")
    summary = b.headctl("status")
    assert summary.returncode == 0
    rows = {line.split(None, 1)[0]: line for line in summary.stdout.splitlines()}
    assert "ahead 0, behind 0" in rows["remote"]
    assert f"1 open: {conflict['id']} areas/inbox/window.html" in rows["conflicts"]
    nothing = b.headctl("sync", "--resolve", "no-such-conflict")
    assert nothing.returncode == 1
    assert nothing.stderr.startswith("ERR_PATH_NOT_FOUND: no open conflict no-such-conflict")
    done = b.call("sync", {"resolve": "areas/inbox/window.html"})
    assert [c["path"] for c in done["resolved"]] == ["areas/inbox/window.html"]
    assert b.call("status")["remote"]["conflicts"] == []


def test_an_unreachable_remote_never_blocks_and_catches_up(sides: tuple[Path, Side, Side]) -> None:
    hub, a, _ = sides
    a.start()
    away = hub.with_name("away.git")
    hub.rename(away)
    with Client(str(a.sock)).connect() as client:
        sha = a.write(client, "Offline note", "The note was written while the remote was away.")
    assert a.tip() == sha
    report = a.call("sync")["round"]
    assert report["action"] == "failed" and report["error"]["kind"] in ("not-found", "network")
    assert a.call("status")["remote"]["last_error"]["kind"] == report["error"]["kind"]
    with Client(str(a.sock)).connect() as client:
        remote = client.status().remote  # the typed answer: a RemoteStatus and its RemoteError
    assert remote is not None and remote.last_error is not None
    assert remote.last_error.kind == report["error"]["kind"] and remote.conflicts == ()
    failed = a.headctl("sync")
    assert failed.returncode == 1 and failed.stderr.count("\n") == 1
    assert failed.stderr.startswith("ERR_GIT: the round with the remote failed")
    assert "remote error" in a.headctl("status").stdout
    away.rename(hub)
    assert wait_until(lambda: hub_tip(hub) == sha, 30)
    assert wait_until(lambda: a.call("status")["remote"]["last_error"] is None, 30)


def test_kill_9_in_a_burst_loses_no_acknowledged_write(sides: tuple[Path, Side, Side]) -> None:
    hub, a, b = sides
    a.start()
    b.start()
    acknowledged: list[str] = []
    stop = threading.Event()

    def burst(side: Side, tag: str) -> None:
        i = 0
        try:
            with Client(str(side.sock)).connect() as client:
                while not stop.is_set():
                    claim = f"Burst {tag} entry {i} survives a crash."
                    side.write(client, f"Burst {tag} {i}", claim)
                    acknowledged.append(claim)
                    i += 1
        except Exception:  # the daemon died under us: what it acknowledged is what counts
            return

    threads = [
        threading.Thread(target=burst, args=(a, "a")),
        threading.Thread(target=burst, args=(b, "b")),
    ]
    for thread in threads:
        thread.start()
    time.sleep(3)
    assert a.daemon is not None
    os.kill(a.daemon.proc.pid, signal.SIGKILL)
    a.stop()  # already dead: this closes its log
    time.sleep(1)
    stop.set()
    for thread in threads:
        thread.join(60)
    a.start()
    assert wait_until(lambda: converged(hub, a, b), 90)
    on_hub = claims_on(hub)
    for claim in acknowledged:
        assert on_hub.count(claim) == 1, claim
    assert_linear_and_clean(hub)
