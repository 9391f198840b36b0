"""Near duplicates of texts about to be written: memhtml's batch assist, over the head's vectors.

Each text is compared with the active memories (tasks aside, as memhtml's assist leaves them out)
through the version's matrix, and with the texts before it in the same call, which nothing stored
can show yet: a later text reports an earlier one, never the reverse, so one restatement is one
finding. Per text the two sources merge best first (a stored match before a batch one on a tie,
then by path or position) and are cut at ``k``. Proposals only: nothing here writes or refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from headd.lazy_import import LazyModule
from headd.wire.answers import NearMatch

if TYPE_CHECKING:
    import numpy as np

    from headd.head.vectors import VersionMatrix
    from headd.record import MemoryRecord
else:
    np = LazyModule("numpy", globals(), "np")


def _admitted(record: MemoryRecord) -> bool:
    return record.memory_type != "task" and not record.archived


def near_matches(
    view: Any, matrix: VersionMatrix, vectors: Any, floor: float, k: int
) -> list[list[NearMatch]]:
    """Per text (a row of ``vectors``), its matches at or above ``floor``, ``k`` at most."""
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    answer: list[list[NearMatch]] = []
    for at in range(rows.shape[0]):
        found = [
            NearMatch(round(score, 6), path=path, claim=_claim(view, path))
            for score, _, path in matrix.ranked(rows[at], _admitted, k)
            if score >= floor
        ]
        for before in range(at):
            scale = norms[at] * norms[before]
            score = float(np.dot(rows[at], rows[before]) / scale) if scale > 0 else 0.0
            if score >= floor:
                found.append(NearMatch(round(score, 6), batch_index=before))
        found.sort(key=lambda m: (-m.similarity, m.path is None, m.path or "", m.batch_index or 0))
        answer.append(found[:k])
    return answer


def combined_vectors(embedder: Any, texts: list[str], titles: list[str] | None) -> Any:
    """The texts' vectors as a stored memory's is made (``record_vector``: the article's unit
    vector plus its title's), so a text and the memory it restates meet in one geometry."""
    from headd.head.vectors import record_vector

    if titles is None:
        return embedder.embed(texts)
    both = embedder.embed([*texts, *titles])
    n = len(texts)
    return np.stack(
        [record_vector(both[i], both[n + i] if titles[i].strip() else None) for i in range(n)]
    )


def _claim(view: Any, path: str) -> str | None:
    record = view.record(path)
    return None if record is None else record.claim
