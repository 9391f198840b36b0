"""``headctl init``: a new store, laid out exactly as ``memhtml init`` (0.15.1) lays one out.

The same files with the same bytes: the four PARA buckets with ``.gitkeep`` files (and the
``areas/inbox``, ``areas/arcs`` and ``resources/people`` folders memhtml's placement writes into),
``.memhtml/state`` and ``.memhtml/sleep``, the ``.gitignore`` that keeps memhtml's databases out,
the ``.gitattributes`` and the ``README.html`` memory, in one first commit on ``main``. A store
made here is one memhtml itself reads, and one the daemon can serve at once (it needs a commit).
headd's own files under ``.memhtml/headd/`` go into ``.git/info/exclude``, as the daemon does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

from headd.errors import StorageFailure

KEEP_DIRS = (
    ".memhtml/sleep",
    ".memhtml/state",
    "archive",
    "areas",
    "areas/arcs",
    "areas/inbox",
    "projects",
    "resources",
    "resources/people",
)

GITIGNORE = """.memhtml/index.db
.memhtml/state.db
.memhtml/index.db-*
.memhtml/state.db-*
"""

GITATTRIBUTES = """index.html merge=ours
sitemap.xml merge=ours
*.html diff=html
"""

README_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Memory</title>
</head>
<body>
<article>
<p><mark>This repository is one agent's memory: one fact per file, as semantic HTML5.</mark>
Directories follow PARA — <code>projects/</code>, <code>areas/</code>, <code>resources/</code>,
<code>archive/</code>. Nothing is ever deleted; eviction moves a file to
<code>archive/&lt;YYYY&gt;/</code> with its original path mirrored beneath, so
<code>git log --follow</code> reads straight through.</p>
<p>The index under <code>.memhtml/</code> is derived and gitignored. This tree is the system of
record.</p>
</article>
</body>
</html>
"""

COMMIT_MESSAGE = "headctl init: scaffold the memory repository\n"
BRANCH = "main"


def layout() -> dict[str, str]:
    """Every file of a new store, path to text."""
    files = {f"{d}/.gitkeep": "" for d in KEEP_DIRS}
    files.update({".gitignore": GITIGNORE, ".gitattributes": GITATTRIBUTES})
    files["README.html"] = README_HTML
    return files


class StoreCreated(TypedDict):
    """What ``headctl init`` answers (and prints with ``--json``): the store, its first commit,
    its branch and the files it laid out."""

    store: str
    sha: str
    branch: str
    files: list[str]


def init_store(target: Path, now: datetime | None = None) -> StoreCreated:
    """Create the store at ``target`` (missing or an empty directory) and commit it.

    Raises StorageFailure, with a message that says what to do instead, when ``target`` holds
    anything already: a store is never initialised over existing files.
    """
    from headd.store.git_io import exclude_in_store, init_store_repository

    if target.exists() and not target.is_dir():
        raise StorageFailure(f"{target} exists and is not a directory", {"path": str(target)})
    if target.is_dir() and any(target.iterdir()):
        already = (target / ".git").exists()
        hint = (
            "it is already a git repository; serve it with headd"
            if already
            else "pick an empty directory"
        )
        raise StorageFailure(f"{target} is not empty: {hint}", {"path": str(target)})
    target.mkdir(parents=True, exist_ok=True)
    files = layout()
    for rel, text in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    sha = init_store_repository(
        target,
        files,
        COMMIT_MESSAGE,
        now or datetime.now(UTC),
        BRANCH,
        {"merge.ours.driver": "true"},
    )
    exclude_in_store(target, "/.memhtml/headd/")
    return {"store": str(target), "sha": str(sha), "branch": BRANCH, "files": sorted(files)}
