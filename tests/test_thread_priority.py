"""Background threads really run below the others: the nice value moves for that thread only."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from headd.thread_priority import (
    BACKGROUND_NICENESS,
    lower_thread_priority,
    run_at_background_priority,
)


def _lowered_in_a_new_thread() -> tuple[int, int]:
    """A fresh thread's nice value before and after it calls ``lower_thread_priority``."""
    seen: dict[str, int] = {}

    def background() -> None:
        tid = threading.get_native_id()
        seen["before"] = os.getpriority(os.PRIO_PROCESS, tid)
        lower_thread_priority()
        seen["after"] = os.getpriority(os.PRIO_PROCESS, tid)

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    return seen["before"], seen["after"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_only_the_calling_thread_is_lowered() -> None:
    main_before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    before, after = _lowered_in_a_new_thread()
    assert after == min(19, before + BACKGROUND_NICENESS)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_before


def test_off_linux_no_priority_is_touched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Elsewhere ``setpriority(PRIO_PROCESS, tid)`` names a process, not the thread: the call
    must not be made at all (checked by the thread's nice value staying where it was)."""
    monkeypatch.setattr(sys, "platform", "darwin")
    before, after = _lowered_in_a_new_thread()
    assert after == before


def test_the_embedders_helper_threads_are_lowered() -> None:
    from headd.embed.onnx_minilm import OnnxEmbedder

    embedder = OnnxEmbedder(threads=2)
    try:
        pool = embedder._helper_pool()
        tid = pool.submit(threading.get_native_id).result()
        main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        if sys.platform.startswith("linux"):
            assert os.getpriority(os.PRIO_PROCESS, tid) == min(19, main + BACKGROUND_NICENESS)
    finally:
        embedder.close()


def _nice_of_a_thread_started_inside() -> int:
    """The nice value of a thread that the function run at the background priority starts."""
    seen: list[int] = []

    def starts_a_worker() -> str:
        worker = threading.Thread(
            target=lambda: seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        )
        worker.start()
        worker.join()
        return "built"

    assert run_at_background_priority(starts_a_worker) == "built"
    return seen[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_threads_started_in_the_background_inherit_it_and_the_caller_keeps_its_own() -> None:
    """What the embedder's session build relies on: onnxruntime's workers inherit the nice value
    of the thread that built the session, whichever thread asked for the build."""
    base = os.getpriority(os.PRIO_PROCESS, os.getpid())
    caller = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert _nice_of_a_thread_started_inside() == min(19, base + BACKGROUND_NICENESS)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == caller
    # Asked from a thread already below the loop (the fill's), the workers land at the same
    # level, not twice as low.
    from_background: list[int] = []

    def background() -> None:
        lower_thread_priority()
        from_background.append(_nice_of_a_thread_started_inside())

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    assert from_background == [min(19, base + BACKGROUND_NICENESS)]


def test_a_failure_at_the_background_priority_reaches_the_caller() -> None:
    def fails() -> None:
        raise ValueError("no session")

    with pytest.raises(ValueError, match="no session"):
        run_at_background_priority(fails)
