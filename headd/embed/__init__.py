"""Embedders: the port, the deterministic hashing embedder, and the real local model.

- :mod:`headd.embed.port` — ``DocumentEmbedder``, what a vector fill needs.
- :mod:`headd.embed.hashing` — deterministic, model-free vectors for tests.
- :mod:`headd.embed.onnx_minilm` — all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the optional
  ``embed`` extra, loaded lazily.
- :mod:`headd.embed.wordpiece`, :mod:`headd.embed.pooling` — its pure tokenizer and pooling.
- :mod:`headd.embed.query_cache` — query vectors by query text (LRU).
- :mod:`headd.embed.factory` — ``--embedder auto|off|hash|NAME`` to an embedder or None.

Nothing here imports onnxruntime until a model is loaded, so importing the package is cheap
with or without the extra.
"""
