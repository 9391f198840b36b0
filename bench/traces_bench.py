"""Benchmark the transcript indexer on a generated ~/.claude tree; prints one JSON document.

Three figures, each against its target:

- first scan of the whole tree (target: at least 50 MB/s of transcript read and indexed);
- a rescan with nothing changed (target: at most 0.2 s for 5,000 files);
- a rescan after appending to 1% of the files (target: proportional to the bytes appended,
  shown by two rounds, 20 kB and 100 kB per file: bytes read equal bytes appended, and the
  CPU time over the unchanged rescan grows with them).

Size: ``HEADD_BENCH_TRACES_MB`` (default 200), or 1,024 with ``HEADD_BENCH_FULL=1``;
``HEADD_BENCH_TRACES_FILES`` files (default 5,000), one in five of them a subagent sidecar.
Run: ``.venv/bin/python bench/traces_bench.py``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from headd_plane.db import PlaneDb, open_writer
from headd_plane.traces import traces_index

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
WORDS = [
    *[
        "the",
        "index",
        "keeps",
        "each",
        "fact",
        "in",
        "one",
        "file",
        "and",
        "the",
        "daemon",
        "answers",
        "from",
        "memory",
    ],
    *[
        "while",
        "git",
        "holds",
        "history",
        "so",
        "a",
        "rebuild",
        "is",
        "cheap",
        "and",
        "a",
        "search",
        "is",
        "fast",
    ],
]


_POOL = " ".join(random.Random(3).choice(WORDS) for _ in range(200_000))


def _text(rng: random.Random, n_words: int) -> str:
    """About ``n_words`` words of varied text, sliced from one pool (generation stays cheap)."""
    start = rng.randrange(0, len(_POOL) - n_words * 8)
    return _POOL[start : start + n_words * 6]


class _Writer:
    """Renders plausible Claude Code records for one session (user, assistant, tool results,
    progress), so the scanner meets real proportions: mostly large tool output."""

    def __init__(self, rng: random.Random, session_id: str, agent_id: str | None) -> None:
        self.rng = rng
        self.session_id = session_id
        self.agent_id = agent_id
        self.second = 0
        self.prompt_no = 0

    def _envelope(self, kind: str) -> dict[str, object]:
        self.second += self.rng.randint(1, 20)
        record: dict[str, object] = {
            "parentUuid": None,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": "/home/user/projects/bench",
            "sessionId": self.session_id,
            "version": "2.1.81",
            "gitBranch": "main",
            "type": kind,
            "uuid": str(uuid.UUID(int=self.rng.getrandbits(128))),
            "timestamp": f"2026-08-{1 + self.second // 86400 % 28:02d}T"
            f"{self.second // 3600 % 24:02d}:{self.second // 60 % 60:02d}:"
            f"{self.second % 60:02d}.000Z",
        }
        if self.agent_id:
            record["agentId"] = self.agent_id
        return record

    def lines(self, target_bytes: int) -> bytes:
        out: list[str] = []
        size = 0
        while size < target_bytes:
            roll = self.rng.random()
            if roll < 0.08:
                self.prompt_no += 1
                rec = self._envelope("user")
                rec["promptId"] = f"{self.session_id[:8]}-p{self.prompt_no}"
                rec["message"] = {"role": "user", "content": _text(self.rng, 30)}
            elif roll < 0.45:
                rec = self._envelope("assistant")
                rec["message"] = {
                    "id": "msg_x",
                    "model": "claude-opus-4-6" if roll < 0.4 else "claude-haiku-4-5",
                    "role": "assistant",
                    "content": [{"type": "text", "text": _text(self.rng, 80)}],
                    "usage": {"input_tokens": 10, "output_tokens": 200},
                }
            elif roll < 0.75:
                rec = self._envelope("user")
                rec["message"] = {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": _text(self.rng, self.rng.randint(200, 1500)),
                        }
                    ],
                }
                rec["toolUseResult"] = {"stdout": _text(self.rng, 100), "stderr": ""}
            else:
                rec = self._envelope("progress")
                rec["data"] = {"type": "bash_progress", "output": _text(self.rng, 20)}
            line = json.dumps(rec, separators=(",", ":")) + "\n"
            out.append(line)
            size += len(line)
        return "".join(out).encode()


def generate(root: Path, total_bytes: int, n_files: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    per_file = max(2_000, total_bytes // n_files)
    files: list[Path] = []
    n_sessions = max(1, n_files * 4 // 5)
    sessions: list[tuple[Path, str]] = []
    for i in range(n_sessions):
        slug = root / "projects" / f"-home-user-projects-p{i % 50:02d}"
        slug.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        path = slug / f"{sid}.jsonl"
        path.write_bytes(_Writer(rng, sid, None).lines(int(per_file * rng.uniform(0.5, 1.5))))
        files.append(path)
        sessions.append((slug, sid))
    for j in range(n_files - n_sessions):
        slug, sid = sessions[j % len(sessions)]
        agent = f"a{rng.getrandbits(28):07x}"
        path = slug / sid / "subagents" / f"agent-{agent}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_Writer(rng, sid, agent).lines(int(per_file * rng.uniform(0.5, 1.5))))
        files.append(path)
    return files


def _append_round(
    db: PlaneDb, root: Path, files: list[Path], rng: random.Random, per_file: int
) -> dict[str, object]:
    """Append ``per_file`` bytes to 1% of the files, rescan, and report what it cost."""
    chosen = rng.sample(files, max(1, len(files) // 100))
    appended = 0
    for path in chosen:
        sid = path.parent.parent.name if path.parent.name == "subagents" else path.stem
        chunk = _Writer(rng, sid, None).lines(per_file)
        with open(path, "ab") as fh:
            fh.write(chunk)
        appended += len(chunk)
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    t, cpu = time.perf_counter(), time.process_time()
    after = traces_index(db.conn, root, NOW)
    wall, cpu_s = time.perf_counter() - t, time.process_time() - cpu
    return {
        "files_appended": len(chosen),
        "bytes_appended": appended,
        "bytes_read": after["bytes_read"],
        "tailed": after["tailed"],
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu_s, 3),
    }


def main() -> None:
    full = os.environ.get("HEADD_BENCH_FULL") == "1"
    megabytes = int(os.environ.get("HEADD_BENCH_TRACES_MB", "1024" if full else "200"))
    n_files = int(os.environ.get("HEADD_BENCH_TRACES_FILES", "5000"))
    work = Path(tempfile.mkdtemp(prefix="headd-traces-bench-"))
    try:
        root = work / "claude"
        t = time.perf_counter()
        files = generate(root, megabytes * 1_000_000, n_files)
        generate_s = time.perf_counter() - t
        total = sum(p.stat().st_size for p in files)
        db = open_writer(work / "index.db", None)
        try:
            t, cpu = time.perf_counter(), time.process_time()
            first = traces_index(db.conn, root, NOW)
            first_s, first_cpu = time.perf_counter() - t, time.process_time() - cpu

            t, cpu = time.perf_counter(), time.process_time()
            unchanged = traces_index(db.conn, root, NOW)
            unchanged_s, unchanged_cpu = time.perf_counter() - t, time.process_time() - cpu

            rng = random.Random(11)
            rounds = [
                _append_round(db, root, files, rng, per_file) for per_file in (20_000, 100_000)
            ]
        finally:
            db.close()
        report = {
            "bench": "traces",
            "files": len(files),
            "bytes": total,
            "generate_s": round(generate_s, 2),
            "first_scan": {
                "seconds": round(first_s, 3),
                "mb_per_s": round(total / 1e6 / first_s, 1),
                "cpu_seconds": round(first_cpu, 3),
                "mb_per_cpu_s": round(total / 1e6 / max(1e-9, first_cpu), 1),
                "target_mb_per_s": 50,
                "sessions": first["sessions"],
                "prompts": first["prompts"],
                "bytes_read": first["bytes_read"],
            },
            "unchanged_rescan": {
                "seconds": round(unchanged_s, 3),
                "cpu_seconds": round(unchanged_cpu, 3),
                "target_s_for_5000_files": 0.2,
                "files_read": unchanged["files_read"],
            },
            "append_rescans": rounds,
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
        }
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
