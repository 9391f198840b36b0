"""``headctl doctor --secrets`` scans every blob the history ever held, not only the tip: a
credential a later commit removed, one on another branch and one only a reflog still reaches
are each listed with the commits that hold them, and never echoed.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``_tips``: leave out the reflogs -> ``test_every_ref_and_the_reflog_are_scanned``.
- ``_Scanner.tree``: no recursion into subtrees -> ``test_every_ref_and_the_reflog_are_scanned``.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.daemon import headctl, short_socket_dir
from support.git import git
from support.memory import memory_html
from support.secret_corpus import SECRETS
from support.stores import Store, make_store

from headd.secrets.history import scan_history


def _leak(kind: str) -> str:
    return next(text for k, text in SECRETS if k == kind)


def test_every_ref_and_the_reflog_are_scanned(tmp_path: Path) -> None:
    root = tmp_path / "store"
    make_store(root)
    store = Store.open(root)
    leak = memory_html("Deploy key", "The deploy uses a key.", body=_leak("github-token"))
    leaked = store.commit({"areas/inbox/deploy-key.html": leak}, "leak")
    clean = memory_html("Deploy key", "The deploy uses a key.", body="It is in the vault.")
    store.commit({"areas/inbox/deploy-key.html": clean}, "scrub")
    git(root, "branch", "side", leaked)
    git(root, "checkout", "-q", "-b", "other")
    stray = memory_html("Stray", "A stray note.", body=_leak("stripe-key"))
    store.commit({"resources/x/stray.html": stray}, "stray")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-D", "other")  # only the HEAD reflog still reaches it
    found = scan_history(root)
    assert {(f.kind, f.path) for f in found} == {
        ("github-token", "areas/inbox/deploy-key.html"),
        ("stripe-key", "resources/x/stray.html"),
    }
    token = next(f for f in found if f.kind == "github-token")
    assert leaked in token.commits and len(token.commits) == 1


def test_headctl_lists_findings_without_values(tmp_path: Path) -> None:
    root = tmp_path / "store"
    make_store(root)
    base = ["--store", str(root), "--socket", str(short_socket_dir() / "none.sock")]
    clean = headctl(*base, "doctor", "--secrets")
    assert clean.returncode == 0 and "no credentials" in clean.stdout
    text = _leak("aws-access-key-id")
    Store.open(root).commit(
        {"areas/inbox/aws.html": memory_html("AWS", "The key.", body=text)}, "leak"
    )
    run = headctl(*base, "doctor", "--secrets")
    assert run.returncode == 1
    assert "areas/inbox/aws.html:" in run.stdout and "aws-access-key-id" in run.stdout
    assert "headctl forget areas/inbox/aws.html" in run.stdout
    as_json = json.loads(headctl(*base, "--json", "doctor", "--secrets").stdout)
    assert [f["kind"] for f in as_json["findings"]] == ["aws-access-key-id"]
    value = text.split()[3]
    assert value.startswith("AKIA") and value not in run.stdout + json.dumps(as_json)
