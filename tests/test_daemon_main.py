"""``headd`` refusing to start: each refusal is one ``ERR_…`` log line and exit status 1."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from support.daemon import short_socket_dir
from support.stores import make_store

from headd.daemon.main import main


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("main") / "store"
    make_store(root)
    return root


def test_a_socket_path_over_107_bytes_is_refused(
    store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    long_path = short_socket_dir() / ("s" * 120 + ".sock")
    with caplog.at_level(logging.ERROR):
        assert main(["--store", str(store), "--socket", str(long_path)]) == 1
    assert "ERR_STORAGE" in caplog.text and "107-byte limit" in caplog.text
    assert not long_path.exists()


def test_an_unknown_embedder_is_refused(store: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = short_socket_dir() / "head.sock"
    with caplog.at_level(logging.ERROR):
        code = main(["--store", str(store), "--socket", str(path), "--embedder", "nonsense"])
    assert code == 1 and "ERR_MODEL_UNAVAILABLE" in caplog.text
    assert not path.exists()


def test_a_store_that_is_not_a_git_repository_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = short_socket_dir() / "head.sock"
    with caplog.at_level(logging.ERROR):
        assert main(["--store", str(tmp_path), "--socket", str(path)]) == 1
    assert "ERR_GIT" in caplog.text
    assert not path.exists()


def test_a_second_daemon_is_refused_before_loading(
    store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import socket

    path = short_socket_dir() / "head.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as live:
        live.bind(str(path))
        live.listen(1)
        with caplog.at_level(logging.ERROR):
            assert main(["--store", str(store), "--socket", str(path)]) == 1
    assert "ERR_DAEMON_RUNNING" in caplog.text
    assert path.exists(), "the other daemon's socket is left alone"
