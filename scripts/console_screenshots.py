"""Take the screenshots in docs/console.md: the console on the demo store, in headless Chromium.

``python scripts/console_screenshots.py [OUT_DIR]`` (default ``docs/console``) copies the bundled
demo memories into a fresh store, starts the real daemon and the console, makes a little history
through the console's own forms (a correction), leaves the daemon's own sleep run under ``sleep/`` for
the review page, and saves one PNG per main page.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pygit2
from headd_client.console.serve import ConsoleServer
from headd_client.store_init import init_store
from headd_client.sync_client import Client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the browser tests' own launcher (support.console)
CORRECTED = "areas/inbox/user-prefers-short-answers.html"
POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
EDITS = [
    (
        "Redis only",
        "Refunds live there too since the November migration. Redis only",
        "claude-4e1b",
    ),
    ("Refunds live", "Refunds and chargebacks live", "codex-91a0"),
]


def agent_edits(client: Client, root: Path) -> None:
    """Two agent sessions that each revise one memory, as a History page shows them."""
    repo = pygit2.Repository(str(root))
    for old, new, session_id in EDITS:
        blob = client.call("read", path=POSTGRES)["record"]["blob_sha"]
        html = bytes(repo[blob].read_raw()).decode().replace(old, new, 1)
        session = client.call("session.open")["session"]
        op = {"op": "put", "path": POSTGRES, "html": html}
        client.call("session.apply", session=session, ops=[op])
        message = f"revise: {new[:40]}"
        client.call("session.commit", session=session, message=message, session_id=session_id)


def demo_store(root: Path) -> None:
    init_store(root)
    shutil.copytree(REPO / "demo" / "store", root, dirs_exist_ok=True)
    repo = pygit2.Repository(str(root))
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("Dana", "dana@example.org")
    parents = [] if repo.head_is_unborn else [repo.head.target]
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", sig, sig, "the demo memories", tree, parents)


def sleep_run(sock: Path) -> None:
    """The daemon's own sleep run on the demo store (placement moves the inbox memories that
    have a home), left on its review branch."""
    with Client(sock, timeout=600) as client:
        client.call("sleep.run", {"date": "2026-12-04"})


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "docs" / "console"
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hd-shots-"))
    store, sock = work / "store", work / "head.sock"
    demo_store(store)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "headd.daemon.main", "--store", str(store), "--socket", str(sock)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            try:
                with Client(sock, timeout=30) as client:
                    client.call("status")
                break
            except Exception:
                time.sleep(0.1)
        with Client(sock, timeout=600) as client:
            agent_edits(client, store)
            client.call("vectors.fill")  # the vector arm on every memory (the model loads once)
        server = ConsoleServer(store, sock, 0, spawn=False)
        thread = threading.Thread(target=server.serve, daemon=True)
        thread.start()
        while not server.server.started:
            time.sleep(0.02)
        origin = f"http://127.0.0.1:{server.port}"
        from support.console import browser

        with browser() as ctx:
            page = ctx.new_page()
            page.goto(server.url)
            page.goto(f"{origin}/memory?path={CORRECTED}")
            page.fill(
                "form.correct textarea[name=claim]",
                "The user prefers short answers, with the command first and one line of why.",
            )
            page.fill("form.correct input[name=reason]", "asked for the reason too")
            page.click("form.correct button")
            sleep_run(sock)
            page.goto(f"{origin}/?q=which+database+holds+the+orders")
            page.screenshot(path=str(out / "search.png"), full_page=True)
            page.goto(f"{origin}/memory?path={POSTGRES}")
            page.screenshot(path=str(out / "memory.png"), full_page=True)
            page.get_by_role("link", name="History").click()
            page.screenshot(path=str(out / "history.png"), full_page=True)
            page.locator("li.version").last.get_by_role("link", name="Open this version").click()
            page.screenshot(path=str(out / "time-travel.png"), full_page=True)
            page.goto(f"{origin}/activity")
            page.screenshot(path=str(out / "activity.png"), full_page=True)
            page.goto(f"{origin}/review")
            page.locator("article.run details").first.evaluate("d => d.open = true")
            page.screenshot(path=str(out / "review.png"), full_page=True)
        server.stop()
        thread.join(10)
    finally:
        daemon.terminate()
        daemon.wait(30)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
