"""Following a git remote: many machines, one memory.

The store is a git repository and every commit headd makes moves the branch with a
compare-and-swap, so a git remote is the distributed engine. This package makes the daemon a
careful citizen of one. Modules, one concept each:

- ``transport``: fetch and push through the user's own ``git`` (their ssh agent, credential
  helpers and config), each failure classified by what it is, never a permanent one called
  transient.
- ``replay``: a local commit's changes, path by path, judged again on another tip (a duplicate
  dedups, a frame-key rival gets its ``contradicts`` link, a path both sides changed keeps the
  remote's version and records the conflict).
- ``rescue``: the refs that keep every local commit reachable until its replay is on the remote,
  and the conflicts until someone resolves them.
- ``sync``: one round (fetch, then fast-forward, push, or replay and push), and its report.
"""
