"""memhtml's ``publish`` in ``headctl``: the per-directory ``index.html`` listings and the root
``sitemap.xml``, regenerated from the tip and committed in one daemon session.

The daemon's ``publish`` writes memhtml 0.15.1's bytes (``headd.memfile.publish``) and only the
files that differ, so a second run with nothing changed lands no commit and answers a null
``commitSha``. The answer holds memhtml's ``publish.report`` keys. The listings are no memories:
the head leaves every ``index.html`` and ``sitemap.xml`` out of its records and its skipped count,
and no session may write them (docs/design/mcp.md, "publish").
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO, TypedDict

from headd_client.headctl_commands import Command, Context
from headd_client.headctl_memhtml import runner

if TYPE_CHECKING:
    from headd_client.mcp.tools import Tools


class Published(TypedDict):
    """memhtml's ``publish.report``, as ``--json`` prints it."""

    root: str
    artifacts: int
    written: int
    paths: list[str]
    commitSha: str | None


def _args(_p: argparse.ArgumentParser) -> None:
    """memhtml's ``publish`` takes no argument and no flag of its own."""


def _publish(tools: Tools, _args: argparse.Namespace, _ctx: Context) -> Published:
    from headd_client import calls

    done = tools.link.run(calls.publish())
    return {
        "root": done.root,
        "artifacts": done.artifacts,
        "written": done.written,
        "paths": done.paths,
        "commitSha": done.commit_sha,
    }


def _show(result: Published, out: TextIO) -> None:
    if not result["written"]:
        out.write(f"published: all {result['artifacts']} generated files already current\n")
        return
    sha = str(result["commitSha"])[:12]
    out.write(
        f"published: {result['written']} of {result['artifacts']} generated files rewritten"
        f"  commit {sha}\n"
    )
    for path in result["paths"]:
        out.write(f"  {path}\n")


def commands() -> list[Command]:
    return [
        Command(
            ("publish",),
            "regenerate the per-directory index.html listings and sitemap.xml, and commit them "
            "(one session, one commit; none when nothing changed)",
            _args,
            local=runner(_publish, _show),
        )
    ]
