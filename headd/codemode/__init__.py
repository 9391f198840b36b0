"""Code-mode: one read-only script over a version of the head instead of a tool call per hop.

``projection`` reads the helper's fields from a memory's HTML (the seed's definitions);
``corpus`` builds a version's corpus from them, shared between versions by blob id; ``guest``
holds the JavaScript the script runs beside; ``worker`` is the one-script subprocess that runs
it under QuickJS; ``runner`` starts workers off the event loop, at most N at once. The choice of
engine and the sandbox's limits are in docs/design.md, "Code-mode".
"""
