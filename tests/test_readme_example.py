"""The README's first screen works as written: its Python example, run against a real daemon on
a store made by ``headctl init``, prints exactly the output the README shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from support.daemon import PYTHON, Daemon, headctl, short_socket_dir
from support.data import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def block(language: str, after: str) -> str:
    """The first fenced block in ``language`` after the heading ``after``."""
    section = README.split(after, 1)[1]
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found is not None, f"no {language} block after {after!r}"
    return found.group(1)


def test_the_quickstart_commands_come_first() -> None:
    commands = [line.split()[0] for line in block("sh", "## Quickstart").splitlines()]
    assert commands == ["./quickstart", "./run-tests"]
    assert README.index("## Quickstart") < README.index("## Use it from Python")


def test_the_python_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    code = block("python", "## Use it from Python")
    shown = block("text", "## Use it from Python")
    assert len(code.strip().splitlines()) <= 12
    home = short_socket_dir()
    store = home / "memhtml"
    env = {"HOME": str(home)}
    assert headctl("init", "~/memhtml", env=env).returncode == 0
    daemon = Daemon(store, store / ".memhtml" / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        script = tmp_path / "example.py"
        script.write_text(code, encoding="utf-8")
        clean = {k: v for k, v in os.environ.items() if k not in ("MEMHTML_ROOT", "HEADD_SOCKET")}
        done = subprocess.run(
            [PYTHON, str(script)],
            capture_output=True,
            text=True,
            env={**clean, **env},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == shown
        listed = headctl("--store", str(store), "--json", "session", "list")
        assert json.loads(listed.stdout)["sessions"] == [], "the example closes its session"
    finally:
        assert daemon.stop() == 0, daemon.log()
