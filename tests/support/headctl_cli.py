"""``headctl`` in a subprocess against one store and socket, and the store's git history: what the
command-line tests of memhtml's commands read after each write (one commit, or none)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from support.daemon import headctl


class Cli:
    def __init__(self, store: Path, socket_path: Path) -> None:
        self.store = store
        self.socket_path = socket_path

    def run(self, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return headctl(
            "--store", str(self.store), "--socket", str(self.socket_path), *argv, stdin=stdin
        )

    def json(self, *argv: str, stdin: str | None = None) -> Any:
        done = self.run("--json", *argv, stdin=stdin)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def git(self, *argv: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.store), *argv], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def commits(self) -> int:
        return int(self.git("rev-list", "--count", "HEAD"))

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")
