"""Sleep: curation of the store on a review branch, landed on main only through two gates.

``catalog`` names the phases and their rules of order, ``working`` is the mutable copy of one
version a run edits, ``phases`` holds the pure phase functions, ``run`` builds the branch with git
plumbing (never touching main or the work tree), ``branch`` reads a run's branch and its trailers
back, ``review`` classifies what a run changed, and ``merge`` lands it through the head gate and
the retention gate (``headd.head.retention_gate``). The reporting rows are the plane's
(``headd_plane.sleep_rows``), written by the daemon.
"""
