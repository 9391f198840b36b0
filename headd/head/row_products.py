"""The dense arm's matrix-vector product, its rows split over two cores when there are many.

Why: at 10,000 rows of 384 floats the product reads 15 MB, and one core's share of the memory
bandwidth sets its time (about 1.5 ms on a two-core Zen 2 after a model call has swept the
caches). Two cores reading half each take about two thirds of it, so the caller scans the first
half while one helper thread scans the second. The split cannot change a score: each row's
product is the same einsum over the same bytes at the same address, whichever rows share a call,
so the ranking is the same bit for bit. The caller waits for the helper's half before it returns,
so nothing can change the matrix while the helper reads it (the event loop, the only writer, is
the caller). Below :data:`SPLIT_ROWS` rows the hand-off costs more than the half it saves; on one
usable core the product runs alone.

``np.einsum``, not ``@``: OpenBLAS's own threads hand a product this small between them slower
than one core computes it, ten times slower on a busy two-core machine.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from headd.cores import usable_cores

#: Rows from which the product is split over two cores (measured on a two-core Zen 2, caches
#: swept as a model call sweeps them: 2,000 rows 0.34-0.39 ms alone against 0.37-0.39 split,
#: 5,183 0.89 against 0.67-0.69, 10,000 1.46-1.74 against 1.08-1.17).
SPLIT_ROWS = 4096

_helper: ThreadPoolExecutor | None = None
#: Whether the core count has been asked: once, so a single-core process does not ask per search.
_decided = False
_helper_lock = threading.Lock()


def _scan(
    matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    products: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query)
    return products


def _helper_pool() -> ThreadPoolExecutor | None:
    """The one helper thread, started at the first split; None on a single usable core."""
    global _helper, _decided
    if not _decided:
        with _helper_lock:
            if not _decided:
                if usable_cores() >= 2:
                    _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="headd-rows")
                _decided = True
    return _helper


def row_products(
    matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``matrix @ query`` row by row, as ``np.einsum("ij,j->i")`` computes it, in the same bits."""
    rows = matrix.shape[0]
    pool = _helper_pool() if rows >= SPLIT_ROWS else None
    if pool is None:
        return _scan(matrix, query)
    half = rows // 2
    try:
        second = pool.submit(_scan, matrix[half:], query)
    except RuntimeError:  # the interpreter is shutting the helper down: scan alone
        return _scan(matrix, query)
    first = _scan(matrix[:half], query)
    return np.concatenate((first, second.result()))
