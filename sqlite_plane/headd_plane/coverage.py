"""Vector coverage: the share of chunks carrying a vector in the counted space.

Read in one statement, so the chunk count and the vector count cannot straddle a rebuild. The
counted space is the configured one when the caller names it, else the stored
``index_state.embed_model``. An index with no chunks has coverage 1.
"""

from __future__ import annotations

from headd.wire.plane_answers import IndexVectors

from .db import PlaneDb

VECTOR_COVERAGE_FLOOR = 0.95
VECTOR_COVERAGE_HARD_FLOOR = 0.5
VECTOR_COVERAGE_REMEDY = (
    "run `headctl index embed` to backfill the missing vectors, or `headctl index rebuild --embed`"
)


#: The coverage read in one statement; ``index.status`` answers it as it is.
VectorCoverage = IndexVectors


def read_vector_coverage(db: PlaneDb, space: str | None = None) -> VectorCoverage:
    row = db.get(
        "SELECT (SELECT count(*) FROM chunk_spans) AS chunks, "
        "(SELECT count(*) FROM embeddings WHERE model = "
        "coalesce(?1, (SELECT embed_model FROM index_state WHERE id = 1))) AS embedded, "
        "coalesce(?1, (SELECT embed_model FROM index_state WHERE id = 1)) AS model",
        (space,),
        op="coverage",
    )
    chunks = int(row["chunks"]) if row else 0
    embedded = int(row["embedded"]) if row else 0
    return VectorCoverage(
        chunks=chunks,
        embeddings=embedded,
        coverage=1.0 if chunks == 0 else embedded / chunks,
        model=None if row is None else row["model"],
    )
