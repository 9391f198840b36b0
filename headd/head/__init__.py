"""The head: the corpus as a value (seed 001).

One immutable :class:`~headd.head.version.HeadVersion` per commit, advanced by the paths two
commits differ on, overlaid with a session's pending ops (``overlay.py``), searched by
reciprocal-rank fusion over a BM25 arm and an optional cosine arm (``search.py``), and compared by
the head gate (``gate.py``). Everything here is pure except the git reads in ``version.py`` and
the vector cache in ``vectors.py``.

This package re-exports nothing: import each name from the module that defines it, so importing
one part of the head (``headd.head.ids``, ``headd.head.snapshot``) loads only that part.
"""
