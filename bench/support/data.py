"""Where the benches find the data sets they measure on: never a fixed path.

SciFact is not part of the repository (its licence keeps it out), so it is named by an
environment variable, and one export serves every bench and ``bench.run``:

- ``HEADD_SCIFACT``: the SciFact directory (``corpus.jsonl.gz``, ``queries-train.jsonl``,
  ``qrels-train.tsv``), read by the stores of ``bench.support.stores`` and by ``parse_bench``,
  ``plane_bench``, ``embed_bench`` and ``vector_bench``;
- ``HEADD_ANCHOR_CORPUS``: memhtml's anchor corpus (``store.bundle``, ``goldens.jsonl``), read by
  ``writer_bench`` and ``bench.peers.plane_parity``; by default the copy the tests ship in
  ``tests/data/anchor-corpus``.

A bench that needs a data set which is not there stops with :class:`DataMissing`, naming the
variable.
Stores built once and reused across runs live under ``HEADD_BENCH_CACHE`` (default: the system's
temporary directory).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SCIFACT_ENV = "HEADD_SCIFACT"
ANCHOR_ENV = "HEADD_ANCHOR_CORPUS"
#: The anchor corpus the repository ships for its tests.
SHIPPED_ANCHOR = Path(__file__).resolve().parents[2] / "tests" / "data" / "anchor-corpus"


class DataMissing(SystemExit):
    """A data set the bench needs is not named, or not where its variable says."""


def data_dir(env: str, needs: str, default: Path | None = None) -> Path:
    """The directory ``$env`` names (else ``default``); it must hold the file ``needs``."""
    value = os.environ.get(env) or (str(default) if default is not None else "")
    if not value:
        raise DataMissing(f"set {env} to the directory holding {needs}")
    path = Path(value)
    if not (path / needs).is_file():
        raise DataMissing(f"{env}={value}: no {needs} there")
    return path


def scifact_dir() -> Path:
    """SciFact's directory, from ``HEADD_SCIFACT``."""
    return data_dir(SCIFACT_ENV, "corpus.jsonl.gz")


def anchor_dir() -> Path:
    """The anchor corpus's directory, from ``HEADD_ANCHOR_CORPUS``, else the shipped copy."""
    return data_dir(ANCHOR_ENV, "store.bundle", SHIPPED_ANCHOR)


CACHE_ENV = "HEADD_BENCH_CACHE"


def cache_dir(name: str) -> Path:
    """Where a bench keeps the stores it builds once and reuses (``name`` under
    ``$HEADD_BENCH_CACHE``, else under the system's temporary directory)."""
    return Path(os.environ.get(CACHE_ENV) or tempfile.gettempdir()) / name
