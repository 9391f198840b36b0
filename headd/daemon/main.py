"""``headd``: run the daemon in the foreground (the ``headd`` console script).

Start, in order: resolve the store and the socket; open the store; take the listening socket
(inherited from systemd, or bound here after the stale-socket probe, which is what refuses a
second daemon before any slow work); load the head on the git thread, sending ``STATUS=`` lines
while it runs; serve; tell systemd ``READY=1``. SIGTERM or SIGINT: ``STOPPING=1``, stop accepting,
let in-flight requests finish (bounded), remove the socket we bound, exit 0. A failure to start is
one ``ERR_…: message`` log line and exit 1; a usage error is exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from headd.daemon.coldstart import ColdStart, cold_load
from headd.daemon.follow import GitThread, RefFollower, resolve_followed_ref
from headd.daemon.handlers import Service
from headd.daemon.head_api import HeadApi, record_count
from headd.daemon.io_ import DEFAULT_LINE_LIMIT
from headd.daemon.notify import Notifier, inherited_listener
from headd.daemon.plane_service import PlaneService
from headd.daemon.server import Server
from headd.daemon.snapshots import SnapshotWriter
from headd.daemon.socket_path import bind_listener, resolve_socket, resolve_store
from headd.daemon.vectors import PlaneVectorStore, VectorService, plane_writer_runner
from headd.errors import GitFailure, HeaddError

log = logging.getLogger("headd")

FOLLOW_INTERVAL_S = 0.02
DEFAULT_SNAPSHOT_INTERVAL_S = 30.0
STATUS_INTERVAL_S = 1.0


@dataclass(frozen=True)
class Config:
    store: Path
    socket: Path
    ref: str | None
    embedder: str
    trace_root: Path
    line_limit: int
    drain_timeout: float
    follow_interval: float
    #: Seconds between two head snapshot writes; negative: no snapshots (load from git only).
    snapshot_interval: float = DEFAULT_SNAPSHOT_INTERVAL_S


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="headd", description="Serve a memhtml store's head over a Unix socket (JSON-RPC)."
    )
    parser.add_argument("--store", help="the store (default $MEMHTML_ROOT, else ~/memhtml)")
    parser.add_argument(
        "--socket", help="socket path (default $HEADD_SOCKET, else <store>/.memhtml/head.sock)"
    )
    parser.add_argument("--ref", help="the branch to follow (default: the branch HEAD names)")
    parser.add_argument(
        "--embedder", help="auto|off|hash|NAME (default $HEADD_EMBEDDER, else auto)"
    )
    parser.add_argument(
        "--trace-root", help="transcripts root (default $MEMHTML_TRACE_ROOT, else ~/.claude)"
    )
    parser.add_argument(
        "--line-limit", type=int, default=DEFAULT_LINE_LIMIT, help=argparse.SUPPRESS
    )
    parser.add_argument("--drain-timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--follow-interval", type=float, default=FOLLOW_INTERVAL_S, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--snapshot-interval",
        type=float,
        default=DEFAULT_SNAPSHOT_INTERVAL_S,
        help="seconds between head snapshot writes (negative: no snapshots; default 30)",
    )
    parser.add_argument("--log-level", default=os.environ.get("HEADD_LOG_LEVEL", "INFO"))
    return parser


def config_from(args: argparse.Namespace, environ: MutableMapping[str, str]) -> Config:
    store = resolve_store(args.store, environ)
    home = Path(environ.get("HOME") or str(Path.home()))
    trace_root = args.trace_root or environ.get("MEMHTML_TRACE_ROOT") or str(home / ".claude")
    return Config(
        store=store,
        socket=resolve_socket(args.socket, store, environ),
        ref=args.ref,
        embedder=embedder_setting(args.embedder, environ),
        trace_root=Path(trace_root).expanduser(),
        line_limit=args.line_limit,
        drain_timeout=args.drain_timeout,
        follow_interval=args.follow_interval,
        snapshot_interval=args.snapshot_interval,
    )


def open_listener(
    config: Config, environ: MutableMapping[str, str]
) -> tuple[socket.socket, Path | None]:
    """The inherited socket (we do not own its file) or one bound here (we remove it at exit)."""
    inherited = inherited_listener(environ)
    if inherited is not None:
        log.info("using the socket systemd passed (fd 3)")
        return inherited, None
    return bind_listener(config.socket), config.socket


def make_embedder(setting: str) -> object | None:
    """The embedder ``--embedder`` names (None for off, and for auto without the extra)."""
    from headd.embed.factory import make_embedder as factory

    return factory(setting)


def embedder_setting(flag: str | None, environ: MutableMapping[str, str]) -> str:
    from headd.embed.factory import embedder_setting as setting

    return setting(flag, environ)


def make_sessions(store: Path, follower: RefFollower) -> object | None:
    """The session registry of ``headd.store``, when that package provides one."""
    try:
        from headd.daemon.sessions_port import make_registry
    except ImportError:
        return None
    return make_registry(store, follower)


async def _report_load_progress(notifier: Notifier, started: float, what: str) -> None:
    while True:
        await asyncio.sleep(STATUS_INTERVAL_S)
        notifier.status(f"loading {what} ({time.monotonic() - started:.0f} s)")


async def run(
    config: Config, environ: MutableMapping[str, str], stop: asyncio.Event | None = None
) -> int:
    """Serve until SIGTERM/SIGINT (or until ``stop`` is set, for an embedding caller)."""
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
    notifier = Notifier.from_environ(environ)
    try:
        repo = pygit2.Repository(str(config.store))
    except (pygit2.GitError, KeyError):
        raise GitFailure(
            f"not a git repository: {config.store}", {"store": str(config.store)}
        ) from None
    ref = resolve_followed_ref(repo, config.ref)
    embedder = make_embedder(config.embedder)  # a bad --embedder fails before we bind
    head = HeadApi.from_head()
    listener, owned = open_listener(config, environ)
    git = GitThread(config.store)
    fill_thread = ThreadPoolExecutor(1, thread_name_prefix="headd-embed")
    plane = PlaneService(config.store, embedder, config.trace_root)
    vectors = VectorService(
        config.store,
        embedder,
        fill_thread,
        persistence=PlaneVectorStore(config.store, plane_writer_runner(plane, loop)),
        notify=notifier.status,
    )
    snapshots = make_snapshot_writer(config)
    follower = RefFollower(
        config.store,
        ref,
        git,
        loader=head.load_head,
        advancer=head.advance_head,
        cold_loader=make_cold_loader(head, snapshots),
    )
    server: Server | None = None
    try:
        started = time.monotonic()
        notifier.status(f"loading {ref}")
        progress = asyncio.create_task(_report_load_progress(notifier, started, ref))

        def load_all() -> None:
            follower.load_blocking()
            vectors.load_blocking()
            plane.open_blocking()

        load: asyncio.Future[None] = asyncio.ensure_future(loop.run_in_executor(None, load_all))
        stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({load, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            progress.cancel()
        if not load.done():
            log.info("stopped while loading")
            notifier.stopping()
            stopper.cancel()
            git.shutdown(wait=False)
            return 0
        stopper.cancel()
        load.result()
        service = Service(
            store=config.store,
            follower=follower,
            head=head,
            sessions=make_sessions(config.store, follower),
            vectors=vectors,
            plane=plane,
            snapshots=snapshots,
            socket_path=owned,
            embedder=config.embedder,
        )
        server = Server(
            listener,
            service.dispatch,
            owned_path=owned,
            line_limit=config.line_limit,
            drain_timeout=config.drain_timeout,
        )
        await server.start()
        follow = asyncio.create_task(follower.follow_forever(config.follow_interval))
        hooks: list[Callable[[Any], None]] = [vectors.schedule_fill, plane.schedule_update]
        if snapshots is not None:
            if follower.load_source == "snapshot":
                snapshots.loaded_from(follower.version.sha)
            hooks.append(snapshots.schedule)
        follower.on_advance = on_each(*hooks)
        for hook in hooks:
            hook(follower.version)
        version = follower.version
        notifier.ready(f"serving {version.sha[:12]} ({record_count(version)} records)")
        log.info(
            "ready: %s at %s, %d records, loaded from %s in %.0f ms",
            ref,
            version.sha[:12],
            record_count(version),
            follower.load_source,
            follower.load_ms,
        )
        await stop.wait()
        log.info("stopping")
        notifier.stopping()
        follow.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follow
        await server.stop()
        vectors.stop()
        plane.stop()
        if snapshots is not None:
            snapshots.stop()
        await vectors.wait_idle()
        await plane.wait_idle()
        await loop.run_in_executor(None, service.shutdown)
        if snapshots is not None:
            await loop.run_in_executor(None, snapshots.shutdown)
        return 0
    finally:
        if server is None:
            listener.close()
            if owned is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(owned)
        git.shutdown()
        fill_thread.shutdown(wait=False, cancel_futures=True)


def make_snapshot_writer(config: Config) -> SnapshotWriter | None:
    """The background snapshot writer, unless ``--snapshot-interval`` is negative."""
    if config.snapshot_interval < 0:
        return None
    from headd_plane.snapshot_store import SnapshotStore

    from headd.head.snapshot import encode_version

    return SnapshotWriter(
        SnapshotStore(config.store), encode_version, interval=config.snapshot_interval
    )


def make_cold_loader(head: HeadApi, snapshots: SnapshotWriter | None) -> Any:
    """The first load: snapshot at the tip, else at an ancestor + advance, else git."""
    from headd.head.snapshot import decode_version

    store = None if snapshots is None else snapshots.store

    def load(repo: pygit2.Repository, tip: str) -> ColdStart:
        return cold_load(
            repo,
            tip,
            store,
            load_head=head.load_head,
            advance_head=head.advance_head,
            decode=decode_version,
            settle=gc.freeze,
        )

    return load


def on_each(*callbacks: Callable[[Any], None]) -> Callable[[Any], None]:
    """One ``on_advance`` hook that calls each of ``callbacks`` (vectors, then the index)."""

    def call(version: Any) -> None:
        for callback in callbacks:
            try:
                callback(version)
            except Exception:  # one hook's failure must not skip the others
                log.exception("an advance hook failed")

    return call


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s headd[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    environ = os.environ
    config = config_from(args, environ)
    try:
        import uvloop

        return uvloop.run(run(config, environ))
    except HeaddError as exc:
        log.error("%s: %s", exc.code, exc.message)
        return 1


if __name__ == "__main__":
    sys.exit(main())
