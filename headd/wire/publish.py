"""``publish``'s request and answer: the per-directory listings and the sitemap, committed.

The files are memhtml 0.15.1's, byte for byte (``headd.memfile.publish``); the answer holds
memhtml's ``publish.report`` keys in the wire's snake case (``headctl --json`` camel-cases them).
"""

from __future__ import annotations

import msgspec


class PublishRequest(msgspec.Struct, forbid_unknown_fields=True):
    """``publish``: regenerate every listing and the sitemap from the tip, and commit what
    changed in one session (no commit when nothing did)."""


class PublishAnswer(msgspec.Struct, kw_only=True):
    root: str
    #: How many files the store's records generate (listings and the sitemap).
    artifacts: int
    #: How many of them differed from the tip and were rewritten.
    written: int
    #: The rewritten files, in path order.
    paths: list[str]
    #: The commit that landed them; None when nothing changed.
    commit_sha: str | None
