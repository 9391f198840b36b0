"""Importers: the memories people already keep elsewhere, brought in as memhtml memories.

One module per source turns files into ``Item`` values (pure: paths in, items and skipped
reasons out; ``model``), ``plan`` turns items into ops and checks each one before any is sent,
and ``run`` lands them through a session (the daemon's when one serves the store), one commit per
batch the session cap allows. docs/design/importers.md says why each choice is what it is.
"""
