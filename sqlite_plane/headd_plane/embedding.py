"""What the plane needs from an embedder, and the float32 blob layout of ``embeddings.vec``.

The plane depends on a shape, not on a model: anything with a ``space`` (``<model>@<dim>``),
a ``dim`` and ``embed_documents`` / ``embed_query`` fits. :func:`as_plane_embedder` adapts the
team's ``headd.embed.port.DocumentEmbedder`` (or any object spelling those calls ``embed`` /
``embed_texts``) so the indexer and retrieval call one name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from headd.errors import ModelUnavailable


@runtime_checkable
class PlaneEmbedder(Protocol):
    space: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> Sequence[Any]: ...

    def embed_query(self, text: str) -> Any: ...


class _Adapted:
    """Binds whatever the embedder calls its two methods to the plane's two names."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dim = int(getattr(inner, "dim", 0) or getattr(inner, "dimension", 0))
        space = getattr(inner, "space", None) or getattr(inner, "watermark", None)
        if space is None:
            model = getattr(inner, "model", None) or getattr(inner, "name", "embedder")
            space = f"{model}@{self.dim}"
        self.space = str(space)
        if self.dim <= 0:  # the team's port names the dimension only inside the space
            tail = self.space.rpartition("@")[2]
            self.dim = int(tail) if tail.isdigit() else 1
        self._docs = _first_method(inner, ("embed_documents", "embed_texts", "embed"))
        self._query = _first_method(inner, ("embed_query",)) or (lambda text: self._docs([text])[0])

    def embed_documents(self, texts: Sequence[str]) -> Sequence[Any]:
        return self._docs(list(texts))

    def embed_query(self, text: str) -> Any:
        return self._query(text)


def _first_method(obj: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        method = getattr(obj, name, None)
        if callable(method):
            return method
    return None


def as_plane_embedder(embedder: Any) -> PlaneEmbedder | None:
    if embedder is None:
        return None
    if isinstance(embedder, PlaneEmbedder):
        return embedder
    adapted = _Adapted(embedder)
    if adapted._docs is None:
        raise TypeError("embedder has no embed_documents/embed method")
    return adapted


def to_blob(vector: Any) -> bytes:
    """float32 little-endian, the layout memhtml stores."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes | None) -> np.ndarray | None:
    if blob is None or len(blob) == 0 or len(blob) % 4:
        return None
    return np.frombuffer(blob, dtype="<f4")


def embed_documents(embedder: PlaneEmbedder, texts: Sequence[str]) -> list[bytes]:
    """Embed and encode; a model failure is ModelUnavailable whatever the model raised."""
    try:
        vectors = embedder.embed_documents(texts)
    except ModelUnavailable:
        raise
    except Exception as error:  # the embedder is foreign code: any failure is an outage
        raise ModelUnavailable(
            "embedder failed", {"operation": "embed", "error": type(error).__name__}
        ) from error
    if len(vectors) != len(texts):
        raise ModelUnavailable("embedder returned a wrong count", {"operation": "embed"})
    return [to_blob(v) for v in vectors]
