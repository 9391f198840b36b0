"""``bench.support.data``: the benches find their data sets only where the environment names them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.data import REPO

from bench.support.data import (
    ANCHOR_ENV,
    CACHE_ENV,
    SCIFACT_ENV,
    SHIPPED_ANCHOR,
    DataMissing,
    anchor_dir,
    cache_dir,
    scifact_dir,
)


def test_an_unset_variable_stops_the_bench_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SCIFACT_ENV, raising=False)
    with pytest.raises(DataMissing, match=SCIFACT_ENV):
        scifact_dir()
    monkeypatch.setenv(ANCHOR_ENV, "")
    assert anchor_dir() == SHIPPED_ANCHOR  # the copy the tests ship
    monkeypatch.setenv(ANCHOR_ENV, str(REPO))
    with pytest.raises(DataMissing, match=ANCHOR_ENV):
        anchor_dir()


def test_a_directory_without_the_data_set_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCIFACT_ENV, str(tmp_path))
    with pytest.raises(DataMissing, match="no corpus.jsonl.gz"):
        scifact_dir()
    (tmp_path / "corpus.jsonl.gz").write_bytes(b"")
    assert scifact_dir() == tmp_path


def test_the_cache_follows_its_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert cache_dir("stores") == tmp_path / "stores"
    monkeypatch.delenv(CACHE_ENV)
    assert cache_dir("stores").name == "stores" and cache_dir("stores").parent != tmp_path
