"""``headd`` refusing to start: each refusal is one ``ERR_…`` log line and exit status 1, and a
usage error is one ``ERR_USAGE: …`` line and exit status 2."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from support.daemon import short_socket_dir
from support.git import git
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


def test_an_unknown_embedder_is_a_usage_error_naming_the_value_and_the_choices(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = short_socket_dir() / "head.sock"
    with pytest.raises(SystemExit) as exited:
        main(["--store", str(store), "--socket", str(path), "--embedder", "nonsense"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("ERR_USAGE: --embedder 'nonsense' is not an embedder; choose from auto,")
    assert "hash" in err and "minilm" in err and err.count("\n") == 1
    assert not path.exists()


@pytest.mark.parametrize(
    ("argv", "environ", "named"),
    [
        (["--log-level", "loud"], {}, "--log-level 'loud'"),
        ([], {"HEADD_LOG_LEVEL": "chatty"}, "$HEADD_LOG_LEVEL 'chatty'"),
        ([], {"HEADD_EMBEDDER": "bogus"}, "$HEADD_EMBEDDER 'bogus'"),
    ],
)
def test_a_bad_log_level_or_embedder_from_the_environment_is_a_usage_error(
    store: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    environ: dict[str, str],
    named: str,
) -> None:
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exited:
        main(["--store", str(store), "--socket", str(short_socket_dir() / "h.sock"), *argv])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith(f"ERR_USAGE: {named} is not")


def test_a_missing_store_says_how_to_create_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "nowhere"
    with caplog.at_level(logging.ERROR):
        assert main(["--store", str(missing), "--socket", str(short_socket_dir() / "h.sock")]) == 1
    assert f"no store at {missing}; create one with `headctl init {missing}`" in caplog.text


def test_a_repository_without_a_commit_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import pygit2

    pygit2.init_repository(str(tmp_path / "empty"))
    with caplog.at_level(logging.ERROR):
        code = main(
            [
                "--store",
                str(tmp_path / "empty"),
                "--socket",
                str(short_socket_dir() / "h.sock"),
                "--embedder",
                "off",
            ]
        )
    assert code == 1 and "the repository has no commit yet" in caplog.text


def test_a_store_that_is_not_a_git_repository_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = short_socket_dir() / "head.sock"
    with caplog.at_level(logging.ERROR):
        assert main(["--store", str(tmp_path), "--socket", str(path)]) == 1
    assert "ERR_GIT" in caplog.text and "is not a git repository; create one with" in caplog.text
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


@pytest.mark.parametrize("link", [".memhtml", ".memhtml/headd"])
def test_a_symlinked_memhtml_dir_is_refused_before_anything_is_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, link: str
) -> None:
    """A committed ``.memhtml -> elsewhere`` would carry index.db, state.db, the session logs
    and the snapshots there: the daemon refuses to start, naming the link, and writes nothing."""
    store = tmp_path / "store"
    make_store(store)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (store / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, store / link)
    if link == ".memhtml":
        git(store, "add", ".memhtml")
        git(store, "commit", "-qm", "a committed link")
    path = short_socket_dir() / "head.sock"
    with caplog.at_level(logging.ERROR):
        assert main(["--store", str(store), "--socket", str(path)]) == 1
    assert "ERR_STORAGE" in caplog.text and f"{store / link} is a symbolic link" in caplog.text
    assert list(elsewhere.iterdir()) == [], "nothing written through the link"
    assert not path.exists()
