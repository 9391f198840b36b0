"""A test hook: kill this process with SIGKILL at a named step of the commit path.

Set ``HEADD_TEST_CRASH_AT`` to one of ``STEPS`` and the commit path dies right after that step,
with no cleanup, exactly as a power cut or an OOM kill would stop it. The crash tests run a commit
in a subprocess at every step and check that the next call settles what was left. Outside tests
the variable is unset and each check is one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "HEADD_TEST_CRASH_AT"

#: The commit path's steps, in order.
STEPS = (
    "validated",  # the batch was judged; nothing written
    "objects",  # blobs, tree and commit written; nothing references them
    "intent",  # the intent record is durable in the session log
    "tempfile",  # one work-tree file is written beside its path, not yet renamed into place
    "worktree",  # the checkout follows the new commit; the branch has not moved
    "swapped",  # the branch points at the new commit; the log does not say so yet
    "settled",  # the log says landed; the call has not answered
)


def crash_point(step: str) -> None:
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
