"""Memory paths: the one home of their rules, with one meaning per name.

A path is a memory's id (format: "Paths"): repo-relative, under one of the four PARA buckets
(``projects/``, ``areas/``, ``resources/``, ``archive/``), archived exactly when it sits under
``archive/``. The parser, the head, the store, the SQLite plane and the daemon's method layer all
ask these functions, so none of them can disagree about what a path means:

- ``normalize_path``: leading slashes dropped, doubled slashes collapsed, one trailing slash
  dropped (an ``href``'s ``/areas/x.html`` and ``areas//x.html`` both become ``areas/x.html``).
- ``para_of``: the bucket a path sits in, or None outside all four.
- ``record_para``: the ``para`` a record carries: its bucket, or ``areas`` for a file outside all
  four, as memhtml's indexer files it (the record of ``misc/x.html`` says ``areas``).
- ``workspace_of``: the directory right under ``projects/``, or None.
- ``origin_path_of``: the path with exactly one ``archive/<YYYY>/`` prefix removed, or None.
- ``path_problem``: why a path given on the wire is refused, or None. One rule for every method
  and every op (``headd.wire.methods`` applies it to each path a request carries), checked on
  the normalised form: no control character (``\\n``, ``\\r``, NUL, DEL and the rest of C0), no
  backslash, no component over ``MAX_COMPONENT_BYTES`` and no path over ``MAX_PATH_BYTES`` (the
  limits of Linux file systems: ``NAME_MAX`` and ``PATH_MAX``), no ``..`` component, no
  component a file system takes for ``.git`` (``headd.git_names``), and a first
  component that is one of the four buckets. Softer rules (a ``.html`` suffix, ``.`` or empty
  segments, reserved names) stay with the session's validation, which reports them as
  violations of the op as memhtml does.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from headd.git_names import is_git_name
from headd.memfile.vocabulary import PARA_BUCKETS

#: The ``para`` a record outside all four buckets carries.
UNBUCKETED_PARA: Final = "areas"
#: Bytes of UTF-8 one path component may take (Linux ``NAME_MAX``).
MAX_COMPONENT_BYTES: Final = 255
#: Bytes of UTF-8 a whole path may take (Linux ``PATH_MAX``, less the store's own prefix).
MAX_PATH_BYTES: Final = 4096

_DOUBLE_SLASHES = re.compile(r"/{2,}")
_ARCHIVE_PREFIX = re.compile(r"archive/[0-9]{4,}/(.+)", re.DOTALL)
#: A later archived copy of one path in one year: ``archive/<YYYY>/<N>/<path>``, ``N`` >= 2
#: (``headd.memfile.archive.archive_path``); ``<path>`` starts with a bucket, so a real path can
#: never be read as one.
_ARCHIVE_SEQUENCE = re.compile(r"([2-9]|[1-9][0-9]+)/((?:projects|areas|resources)/.+)", re.DOTALL)
_REFUSED_CHAR = re.compile(r"[\x00-\x1f\x7f\\]")
_MAX_UTF8_BYTES = 4


def normalize_path(path: str) -> str:
    """Leading slashes dropped, doubled slashes collapsed, one trailing slash dropped.

    A git tree path is already in this form, and the indexer asks for every path of a tree, so
    such a path returns as it came without running the regex.
    """
    if not path.startswith("/") and "//" not in path and not path.endswith("/"):
        return path
    collapsed = path.lstrip("/")
    if "//" in collapsed:
        collapsed = _DOUBLE_SLASHES.sub("/", collapsed)
    return collapsed[:-1] if collapsed.endswith("/") else collapsed


def para_of(path: str) -> str | None:
    """The PARA bucket a path sits in (its first segment), or None outside all four."""
    head, sep, _ = normalize_path(path).partition("/")
    return head if sep and head in PARA_BUCKETS else None


def record_para(path: str) -> str:
    """The ``para`` field of the record at ``path``: its bucket, else ``UNBUCKETED_PARA``."""
    return para_of(path) or UNBUCKETED_PARA


def workspace_of(path: str) -> str | None:
    """The directory right under ``projects/``, else None."""
    normalized = normalize_path(path)
    if not normalized.startswith("projects/"):
        return None
    rest = normalized[len("projects/") :]
    at = rest.find("/")
    return None if at <= 0 else rest[:at]


def origin_path_of(path: str) -> str | None:
    """The path with exactly one ``archive/<YYYY>/`` prefix (and the ``<N>/`` of a later copy
    in that year) removed, or None when not archived."""
    match = _ARCHIVE_PREFIX.fullmatch(normalize_path(path))
    if match is None:
        return None
    later = _ARCHIVE_SEQUENCE.fullmatch(match.group(1))
    return later.group(2) if later else match.group(1)


@functools.lru_cache(maxsize=4096)
def path_problem(path: str) -> str | None:
    """Why ``path`` is refused wherever a request names a memory path, or None (see above).

    Cached: a client reads and writes the same few paths over and over, and every request pays
    this check before its handler runs."""
    refused = _REFUSED_CHAR.search(path)
    if refused is not None:
        if refused.group() == "\\":
            return "a path may not hold a backslash"
        return "a path may not hold a control character"
    normalized = normalize_path(path)
    components = normalized.split("/")
    if len(normalized) > MAX_COMPONENT_BYTES // _MAX_UTF8_BYTES:  # short paths cannot overrun
        if len(normalized.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
            return f"a path may not be longer than {MAX_PATH_BYTES} bytes"
        if any(len(c.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES for c in components):
            return f"a path component may not be longer than {MAX_COMPONENT_BYTES} bytes"
    if ".." in components:
        return "a path may not hold a `..` component"
    if any(is_git_name(c) for c in components):
        return "a path may not hold a component a file system takes for `.git`"
    if len(components) < 2 or components[0] not in PARA_BUCKETS:
        return "a path must sit under projects/, areas/, resources/ or archive/"
    return None
