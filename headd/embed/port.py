"""The embedder port: what the head's vector fill needs from any embedding model.

Structural (a ``Protocol``), so the head never imports a model library and tests plug in the
deterministic :class:`headd.embed.hashing.HashingEmbedder`. ``space`` names the vector space as
``<model id>@<dimension>`` (the form ``index_state.embed_model`` stores); two embedders with the
same space must produce interchangeable vectors, and a cache refuses vectors of another space.
An embedder may also offer ``query_key(text)``: a key equal for texts it embeds alike, which the
query cache (:mod:`headd.embed.query_cache`) uses instead of the exact text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the port must not import numpy
    import numpy as np
    import numpy.typing as npt


@runtime_checkable
class DocumentEmbedder(Protocol):
    """Embeds texts into one vector space: ``embed(texts)`` is a float32 array of shape (n, dim)."""

    @property
    def space(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...
