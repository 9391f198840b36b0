"""``headd``: run the daemon in the foreground (the ``headd`` console script).

This module is the daemon's composition: :func:`main` reads the configuration (``config.py``)
and :func:`run` builds the collaborators from it and runs them. Start, in order: resolve the
store and the socket; open the store; take the listening socket (inherited from systemd, or bound
here after the stale-socket probe, which is what refuses a second daemon before any slow work);
load the head on the git thread, sending ``STATUS=`` lines while it runs; serve; tell systemd
``READY=1``. What no first answer needs waits until ``AFTER_READY_S`` after READY (READY from a
snapshot within 0.5 s at 10,000 memories): opening the SQLite plane, the first vector fill,
index update and snapshot write, building the lexical buckets a snapshot decode left for first
use, importing the search and gate. With ``--log-level DEBUG`` each start step logs its wall and
CPU time. SIGTERM or SIGINT: ``STOPPING=1``, stop accepting, let in-flight requests finish
(bounded), remove the socket we bound, exit 0. A failure to start is one ``ERR_…: message`` log
line and exit 1; a usage error is exit 2.

Importing this module imports only what parsing the command line needs; :func:`run` imports the
daemon (asyncio, the head, the services, pygit2). numpy is not imported before READY (the
snapshot decode leaves its arrays to first use); it is imported after READY with the late
modules, and ``--log-level DEBUG`` logs whether READY found it loaded. pygit2 is imported on the
way to READY: the session registry opens the repository (and settles any interrupted commit)
before the first answer, so keeping libgit2 off that way would save nothing
(``docs/design/coldstart.md``). :func:`main` turns the cyclic
collector off first, so the objects those imports and the snapshot decode make are not walked
again and again while they are made; the cold start's settle freezes them (``coldstart.py``) and
:func:`run` turns it back on.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from headd.daemon.config import Config, build_parser, config_from
from headd.daemon.usage import check_arguments, start_failure_hint, store_problem
from headd.errors import GitFailure, HeaddError
from headd.memory_trim import limit_heap_arenas

if TYPE_CHECKING:
    import asyncio
    import socket

    import pygit2

    from headd.daemon.coldstart import ColdStart
    from headd.daemon.collector import VersionCollector
    from headd.daemon.follow import ColdLoader
    from headd.daemon.notify import Notifier
    from headd.daemon.remote_follower import RemoteFollower
    from headd.daemon.snapshots import SnapshotWriter
    from headd.embed.port import DocumentEmbedder
    from headd.head.version import HeadVersion
    from headd.store.manager import SessionManager

log = logging.getLogger("headd")

STATUS_INTERVAL_S = 1.0
#: How long after READY the background start-up work waits, so that the requests already queued
#: on the socket are answered without sharing the interpreter with it.
AFTER_READY_S = 0.2
#: Heap arenas every thread shares (glibc): a load from git, 300 searches and 5 commits at
#: 10,000 memories leave 150 MB resident against 166 MB with an arena per thread, 133 against
#: 149 MB after a start from the snapshot (docs/design/coldstart.md, "Heap arenas").
HEAP_ARENAS = 2


def open_listener(
    config: Config, environ: MutableMapping[str, str]
) -> tuple[socket.socket, Path | None]:
    """The inherited socket (we do not own its file) or one bound here (we remove it at exit)."""
    from headd.daemon.notify import inherited_listener
    from headd.wire.socket_path import bind_listener

    inherited = inherited_listener(environ)
    if inherited is not None:
        log.info("using the socket systemd passed (fd 3)")
        return inherited, None
    return bind_listener(config.socket), config.socket


def make_embedder(
    setting: str, store: Path, environ: Mapping[str, str] = os.environ
) -> DocumentEmbedder | None:
    """The embedder ``--embedder`` names (None for off, and for auto without the extra); a
    local model converts into the machine's model cache (``quantize.model_cache_for_store``)."""
    from headd.embed.factory import make_embedder as factory
    from headd.embed.quantize import model_cache_for_store

    embedder = factory(setting, model_cache=model_cache_for_store(store, environ))
    if embedder is None and setting.strip() == "auto":
        from headd.embed.install_hint import embed_install_hint

        log.info(
            "vectors off: --embedder auto found no embed extra installed (%s); searches run "
            "lexical + recency and answer degraded",
            embed_install_hint(),
        )
    return embedder


class StartSteps:
    """DEBUG lines timing each step from process start to READY (wall since ``main``, and the
    process's CPU so far, which includes starting Python and the imports)."""

    def __init__(self) -> None:
        self._started = time.perf_counter()
        self._last = self._started

    def mark(self, step: str) -> None:
        if not log.isEnabledFor(logging.DEBUG):
            return
        now = time.perf_counter()
        log.debug(
            "start step %s: %.1f ms (at %.1f ms, process cpu %.1f ms)",
            step,
            (now - self._last) * 1000.0,
            (now - self._started) * 1000.0,
            time.process_time() * 1000.0,
        )
        self._last = now


#: Modules kept off the way to READY: imported after it, in the background, or at the
#: first call that needs them. ``log_heavy_modules`` says which of them were loaded at READY.
HEAVY_MODULES = ("numpy",)


def log_heavy_modules() -> None:
    """One DEBUG line naming which of :data:`HEAVY_MODULES` were imported by READY (a test reads
    it, so a module-level import that brings one back on the way to READY is caught)."""
    if log.isEnabledFor(logging.DEBUG):
        loaded = [name for name in HEAVY_MODULES if name in sys.modules]
        log.debug("heavy modules loaded at READY: %s", ",".join(loaded) or "none")


async def _report_load_progress(notifier: Notifier, started: float, what: str) -> None:
    import asyncio

    while True:
        await asyncio.sleep(STATUS_INTERVAL_S)
        notifier.status(f"loading {what} ({time.monotonic() - started:.0f} s)")


async def run(
    config: Config,
    environ: MutableMapping[str, str],
    stop: asyncio.Event | None = None,
    steps: StartSteps | None = None,
    *,
    collector_off: bool = False,
) -> int:
    """Serve until SIGTERM/SIGINT (or until ``stop`` is set, for an embedding caller).

    ``collector_off``: the caller turned the cyclic collector off before importing the daemon
    (:func:`main` does); it is turned back on once the first load has frozen what start-up made.
    """
    import asyncio
    import signal
    from concurrent.futures import ThreadPoolExecutor

    from headd.daemon.collector import VersionCollector
    from headd.daemon.follow import GitThread, RefFollower, resolve_followed_ref
    from headd.daemon.handlers import Service
    from headd.daemon.notify import Notifier
    from headd.daemon.plane_service import PlaneService
    from headd.daemon.server import Server
    from headd.daemon.sessions_port import make_registry
    from headd.daemon.vectors import PlaneVectorStore, VectorService
    from headd.head.version import advance_head, load_head
    from headd.store.git_io import open_repo
    from headd.thread_priority import lower_thread_priority

    steps = steps or StartSteps()
    steps.mark("loop running")
    from headd.store.own_dirs import check_own_dirs

    check_own_dirs(config.store)  # before anything is written under .memhtml/
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
    notifier = Notifier.from_environ(environ)
    ref = resolve_followed_ref(open_repo(config.store), config.ref)
    steps.mark("repository open, ref resolved")
    embedder = make_embedder(config.embedder, config.store)  # a bad one fails before we bind
    steps.mark("embedder made")
    listener, owned = open_listener(config, environ)
    steps.mark("socket bound")
    git = GitThread(config.store)
    # The fill runs below the event loop's priority, so answers never queue behind it.
    fill_thread = ThreadPoolExecutor(
        1, thread_name_prefix="headd-embed", initializer=lower_thread_priority
    )
    plane = PlaneService(config.store, embedder, config.trace_root)
    vectors = VectorService(
        config.store,
        embedder,
        fill_thread,
        persistence=PlaneVectorStore(config.store, plane),
        notify=notifier.status,
    )
    snapshots = make_snapshot_writer(config)
    collector = VersionCollector()
    follower = RefFollower(
        config.store,
        ref,
        git,
        loader=load_head,
        advancer=advance_head,
        cold_loader=make_cold_loader(snapshots, collector),
        collector=collector,
    )
    steps.mark("services made")
    server: Server | None = None
    try:
        started = time.monotonic()
        notifier.status(f"loading {ref}")
        progress = asyncio.create_task(_report_load_progress(notifier, started, ref))

        def load_all() -> None:
            follower.load_blocking()
            steps.mark("head loaded")
            vectors.load_blocking()
            steps.mark("vectors loaded")

        load: asyncio.Future[None] = asyncio.ensure_future(loop.run_in_executor(None, load_all))
        stopper: asyncio.Future[object] = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait((load, stopper), return_when=asyncio.FIRST_COMPLETED)
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
        if collector_off:
            gc.enable()
        service = Service(
            store=config.store,
            follower=follower,
            sessions=make_registry(config.store, follower),
            vectors=vectors,
            plane=plane,
            snapshots=snapshots,
            socket_path=owned,
            embedder=config.embedder,
        )
        if config.remote is not None and service.sessions is not None:
            service.remote = make_remote_follower(config, ref, service.sessions)
        server = Server(
            listener,
            service.dispatch,
            owned_path=owned,
            line_limit=config.line_limit,
            drain_timeout=config.drain_timeout,
        )
        await server.start()
        steps.mark("serving")
        follow = asyncio.create_task(follower.follow_forever(config.follow_interval))
        hooks: list[Callable[[HeadVersion], None]] = [vectors.schedule_fill, plane.schedule_update]
        if snapshots is not None:
            if follower.load_source == "snapshot":
                snapshots.loaded_from(follower.version.sha)
            snapshots.remember(follower.version)
            hooks.append(snapshots.schedule)
        each_hook = on_each(*hooks)
        follower.on_advance = each_hook
        version = follower.version
        notifier.ready(f"serving {version.sha[:12]} ({version.size} records)")
        steps.mark("ready")
        log_heavy_modules()

        async def after_ready() -> None:
            """What no first answer needs, started once the first answers had the threads to
            themselves: the plane's open, the first fill/update/snapshot, the lexical buckets,
            the search and gate modules."""
            await asyncio.sleep(AFTER_READY_S)
            plane.open_in_background()
            each_hook(follower.version)  # a hook's failure is logged, as after an advance
            await git.run(lambda _repo: settle_loaded(version, collector))
            await loop.run_in_executor(None, import_late_modules)

        background = asyncio.create_task(after_ready())
        if service.remote is not None:
            service.remote.start()
        log.info(
            "ready: %s at %s, %d records, loaded from %s in %.0f ms",
            ref,
            version.sha[:12],
            version.size,
            follower.load_source,
            follower.load_ms,
        )
        await stop.wait()
        log.info("stopping")
        notifier.stopping()
        follow.cancel()
        background.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follow
        with contextlib.suppress(asyncio.CancelledError):
            await background
        # Long calls stop at their next batch first, so the drain below sees them answer; the
        # remote follower's round is cut (its rescue refs make the next start replay it).
        vectors.stop()
        plane.stop()
        if service.remote is not None:
            await service.remote.close()
        await server.stop()
        await service.close_exec()
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


#: What ``after_ready`` imports in the background: the modules the first calls of each kind need
#: (numpy first: the heaviest, and kept off the way to READY, see HEAVY_MODULES).
LATE_MODULES = (
    "numpy",
    "headd.head.search",
    "headd.head.gate",
    "headd.head.scope",
    "headd.head.overlay",
)


def import_late_modules() -> None:
    """Import :data:`LATE_MODULES` (on a worker thread, after READY)."""
    started = time.perf_counter()
    for module in LATE_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:  # the call that needs it will say so
            log.exception("importing %s failed", module)
    log.debug("late modules imported in %.1f ms", (time.perf_counter() - started) * 1000.0)


def make_remote_follower(config: Config, ref: str, sessions: SessionManager) -> RemoteFollower:
    """The remote follower ``--remote`` asks for; a remote git does not know is refused at start."""
    from headd.daemon.remote_follower import RemoteFollower
    from headd.remote import transport
    from headd.remote.sync import RemoteSync

    assert config.remote is not None
    if transport.remote_url(config.store, config.remote) is None:
        raise GitFailure(
            f"no git remote named {config.remote!r} in {config.store} "
            f"(add one: git -C {config.store} remote add {config.remote} URL)",
            {"remote": config.remote},
        )
    sync = RemoteSync(
        config.store,
        config.remote,
        ref,
        versions=sessions.versions,
        overlay=sessions.overlay,
        lock=sessions.exclusive,
        timeout=config.remote_timeout,
    )
    return RemoteFollower(sync, config.fetch_interval)


def make_snapshot_writer(config: Config) -> SnapshotWriter | None:
    """The background snapshot writer, unless ``--snapshot-interval`` is negative."""
    if config.snapshot_interval < 0:
        return None
    from headd.daemon.snapshot_store import SnapshotStore
    from headd.daemon.snapshots import SnapshotWriter
    from headd.head.snapshot import encode_version

    return SnapshotWriter(
        SnapshotStore(config.store), encode_version, interval=config.snapshot_interval
    )


def make_cold_loader(snapshots: SnapshotWriter | None, collector: VersionCollector) -> ColdLoader:
    """The first load: snapshot at the tip, else at an ancestor + advance, else git."""
    from headd.daemon.coldstart import cold_load
    from headd.head.snapshot import decode_version
    from headd.head.version import advance_head, load_head

    store = None if snapshots is None else snapshots.store

    def load(repo: pygit2.Repository, tip: str) -> ColdStart:
        return cold_load(
            repo,
            tip,
            store,
            load_head=load_head,
            advance_head=advance_head,
            decode=decode_version,
            settle=collector.settled,
        )

    return load


def settle_loaded(version: HeadVersion, collector: VersionCollector) -> None:
    """After READY: build what a snapshot decode left for first use (the lexical buckets), with
    the collector paused and its objects frozen after, as the cold start does for the rest."""
    from headd.head.snapshot import settle_version
    from headd.head.version import collector_paused
    from headd.memory_trim import release_free_memory

    started = time.perf_counter()
    try:
        with collector_paused():
            if settle_version(version):
                collector.settled()
                release_free_memory()
                log.debug(
                    "loaded version settled in %.1f ms", (time.perf_counter() - started) * 1e3
                )
    except Exception:  # the first search builds it instead
        log.exception("settling the loaded version failed")


def on_each(*callbacks: Callable[[HeadVersion], None]) -> Callable[[HeadVersion], None]:
    """One ``on_advance`` hook that calls each of ``callbacks`` (vectors, then the index)."""

    def call(version: HeadVersion) -> None:
        for callback in callbacks:
            try:
                callback(version)
            except Exception:  # one hook's failure must not skip the others
                log.exception("an advance hook failed")

    return call


def main(argv: Sequence[str] | None = None) -> int:
    collector_was_on = gc.isenabled()
    gc.disable()  # until the first load froze what start-up made: see the module docstring
    try:
        return _main(argv)
    finally:
        if collector_was_on:  # on every way out, for a caller in the same process
            gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    steps = StartSteps()
    parser = build_parser()
    args = parser.parse_args(argv)
    environ = os.environ
    level = check_arguments(parser, args, environ)
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level),
        format="%(asctime)s headd[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    steps.mark("imported, logging set")
    config = config_from(args, environ)
    steps.mark("configured")
    problem = store_problem(config.store)
    if problem is not None:
        log.error("%s: %s", GitFailure.code, problem)
        return 1
    limit_heap_arenas(HEAP_ARENAS)  # before the first thread, with large blocks on mmap
    try:
        import uvloop

        return uvloop.run(run(config, environ, steps=steps, collector_off=True))
    except HeaddError as exc:
        log.error("%s: %s%s", exc.code, exc.message, start_failure_hint(exc, config.store))
        return 1


if __name__ == "__main__":
    sys.exit(main())
