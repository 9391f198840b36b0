"""From a transformer's token states to one unit vector per text (pure numpy).

all-MiniLM-L6-v2 was trained with mean pooling over the real tokens (padding masked out) and is
compared by cosine, so the sentence vector is the masked mean, L2-normalized; with unit vectors a
dot product is the cosine, which is all the vector arm computes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:  # numpy waits for the first embedding: a daemon's start does not need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

#: Below this norm a vector is treated as zero rather than blown up into noise.
NORM_FLOOR = 1e-12


def masked_mean(
    hidden: npt.NDArray[np.floating], mask: npt.NDArray[np.integer]
) -> npt.NDArray[np.float32]:
    """Mean of ``hidden[b, t, :]`` over the tokens where ``mask[b, t]`` is 1.

    A row with no real token (never produced by the tokenizer, which always adds [CLS] and
    [SEP]) yields zeros instead of dividing by zero.
    """
    if hidden.ndim != 3 or mask.shape != hidden.shape[:2]:
        raise ValueError(f"shapes do not match: hidden {hidden.shape}, mask {mask.shape}")
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), 1.0)
    return (summed / counts).astype(np.float32)


def l2_normalize(vectors: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Each row scaled to unit length; an all-zero row stays zero."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.maximum(norms, NORM_FLOOR)).astype(np.float32)
