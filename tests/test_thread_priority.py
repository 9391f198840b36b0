"""Background threads really run below the others: the nice value moves for that thread only."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from headd.thread_priority import BACKGROUND_NICENESS, lower_thread_priority


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
