"""``exec``'s bounds, apart from the request so ``headctl`` reads them without loading the wire.

They are memhtml's (``memhtml help exec``): 30 s by default, 600 s at most, for the script's time.
"""

from __future__ import annotations

EXEC_DEFAULT_TIMEOUT_MS = 30_000
EXEC_MAX_TIMEOUT_MS = 600_000
#: 1 MiB of UTF-8: a script is a traversal, not a payload; a longer one is refused before any
#: worker starts.
EXEC_MAX_SCRIPT_BYTES = 1024 * 1024
