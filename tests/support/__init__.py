"""What the tests share, one home for each thing: no test module imports another.

- ``data``: the data the repository ships for its tests (``tests/data/``) and how to open it;
- ``memory``: the one memory-file builder (memhtml's writer template, every knob a test needs);
- ``stores``: the one store maker (a real git repository with a work tree, built with pygit2);
- ``git``: the one git helper (the ``git`` command, as a person at a terminal runs it);
- ``daemon``: a real ``headd`` process, its socket, and ``headctl`` in a subprocess;
- ``plane``: the SQLite plane's row dumps and the deterministic embedder (the one fake allowed);
- ``transcripts``: Claude Code transcripts, generated in the layout and fields Claude Code writes;
- ``scifact``: a small generated data set in SciFact's file format, for the benches' own tests;
- ``writer_vectors``: the anchor corpus's recorded writes, as test vectors for the writer;
- ``wire``: JSON values worth sending a daemon, for the wire fuzz tests;
- ``head_corpus``: the port of memhtml's head-test generator (the search golden's 120 files).
"""
