"""A deterministic hashing embedder: no model, no I/O, same vectors on every machine.

Each lowercased word (runs of letters, numbers and ``_``) and each adjacent word pair is hashed
with BLAKE2b into one of ``dimension`` buckets with a sign, and the sum is L2-normalized. Texts
sharing words point the same way, which is enough for tests of the vector arm and the fill, and
the output depends only on the text (never on the process, the hash seed or the platform). An
empty text embeds as the zero vector, whose cosine with anything is 0.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = LazyModule("numpy", globals(), "np")

MODEL_ID: Final = "headd-hash-v1"
DEFAULT_DIMENSION: Final = 256
_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """A :class:`headd.embed.port.DocumentEmbedder` for tests and offline runs."""

    def __init__(self, dimension: int = DEFAULT_DIMENSION, model_id: str = MODEL_ID) -> None:
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.model_id = model_id
        self.calls = 0

    @property
    def space(self) -> str:
        return f"{self.model_id}@{self.dimension}"

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        vector = np.zeros(self.dimension, dtype=np.float64)
        words = _WORD.findall(text.lower())
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vector[value % self.dimension] += 1.0 if (value >> 63) & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vector /= norm
        return vector.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._vector(text)
        return out
