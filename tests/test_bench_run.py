"""``bench.run``: every listed bench runs as its own process, failures are recorded, each one's
JSON lands in the results directory, and a bench that is missing or lacks its data stops the run
before anything starts.

The benches run here are tiny modules written into a temporary package, run through real
subprocesses exactly as the project's benches are.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.data import REPO

from bench.run import (
    MODULES,
    BenchModule,
    RunRefused,
    exists,
    parse_output,
    run_all,
)

FAKE_BENCHES = {
    "good": 'import json, sys\nprint(json.dumps({"argv": sys.argv[1:], "x": 1}))\n',
    "chatty": 'print("store ready in 0.1 s")\nprint(\'{\\n  "y": 2\\n}\')\n',
    "broken": 'import sys\nprint("no json here")\nsys.stderr.write("boom\\n")\nsys.exit(3)\n',
    "env": 'import json, os\nprint(json.dumps({"mb": os.environ.get("FAKE_MB")}))\n',
}


@pytest.fixture
def fake_package(tmp_path: Path) -> Path:
    package = tmp_path / "fakebench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, source in FAKE_BENCHES.items():
        (package / f"{name}.py").write_text(source)
    return tmp_path


def test_parse_output() -> None:
    assert parse_output('{"a": 1}') == {"a": 1}
    assert parse_output('{\n "a": [1,\n 2]\n}\n') == {"a": [1, 2]}
    assert parse_output('loading\n{"a": 1}\n') is None  # a line beside the document
    assert parse_output("load_head: 1.2 s\nsearch p50 1 ms") is None
    assert parse_output("") is None


def test_run_all_records_each_bench(fake_package: Path) -> None:
    modules = [
        BenchModule("good", quick_args=("--quick",), full_args=("--full",)),
        BenchModule("chatty"),
        BenchModule("broken"),
        BenchModule("env", quick_env={"FAKE_MB": "50"}, full_env={"FAKE_MB": "1024"}),
    ]
    results = fake_package / "results"
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    out_dir, summary = run_all(
        modules, results, quick=True, package="fakebench", cwd=fake_package, now=now
    )
    assert out_dir == results / "20261130T120000Z"
    statuses = {name: b["status"] for name, b in summary["benches"].items()}
    assert statuses == {
        "good": "ok",
        "chatty": "failed",
        "broken": "failed",
        "env": "ok",
    }
    good = json.loads((out_dir / "good.json").read_text())
    assert good["result"] == {"argv": ["--quick"], "x": 1} and good["rc"] == 0
    chatty = json.loads((out_dir / "chatty.json").read_text())
    assert chatty["rc"] == 0 and "result" not in chatty and chatty["stdout"].startswith("store")
    broken = json.loads((out_dir / "broken.json").read_text())
    assert broken["rc"] == 3 and broken["stdout"] == "no json here\n"
    assert "boom" in broken["stderr_tail"]
    assert json.loads((out_dir / "env.json").read_text())["result"] == {"mb": "50"}
    assert json.loads((out_dir / "summary.json").read_text()) == summary


def test_full_mode_uses_full_arguments(fake_package: Path) -> None:
    modules = [
        BenchModule("good", ("--quick",), ("--full",)),
        BenchModule("env", full_env={"FAKE_MB": "1024"}),
    ]
    out_dir, _ = run_all(
        modules, fake_package / "r", quick=False, package="fakebench", cwd=fake_package
    )
    assert json.loads((out_dir / "good.json").read_text())["result"]["argv"] == ["--full"]
    assert json.loads((out_dir / "env.json").read_text())["result"] == {"mb": "1024"}


def test_a_missing_bench_or_data_set_refuses_the_whole_run(
    fake_package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = fake_package / "results"
    with pytest.raises(RunRefused, match="absent: no fakebench/absent.py"):
        run_all(
            [BenchModule("good"), BenchModule("absent")],
            results,
            quick=True,
            package="fakebench",
            cwd=fake_package,
        )
    monkeypatch.delenv("FAKE_DATA", raising=False)
    with pytest.raises(RunRefused, match="good: FAKE_DATA is not set"):
        run_all(
            [BenchModule("good", needs=("FAKE_DATA",))],
            results,
            quick=True,
            package="fakebench",
            cwd=fake_package,
        )
    assert not results.exists()  # refused before anything ran
    monkeypatch.setenv("FAKE_DATA", "/data")
    _, summary = run_all(
        [BenchModule("good", needs=("FAKE_DATA",))],
        results,
        quick=True,
        package="fakebench",
        cwd=fake_package,
    )
    assert summary["benches"]["good"]["status"] == "ok"


#: Runnable benches the runner leaves out: each needs an argument only its user can give, or
#: memhtml and Node.
NOT_IN_THE_RUNNER = {
    "cli_bench",
    "exec_bench",
    "footprint_bench",
    "history_bench",
    "hook_relevance_bench",
    "load_bench",
    "mcp_bench",
    "quality_bench",
    "query_encoder_bench",
}


def test_the_project_benches_are_listed_once_present_and_named_by_area() -> None:
    names = [m.name for m in MODULES]
    assert len(names) == len(set(names))
    assert names[0] == "head_bench"
    assert all(exists("bench", name, REPO) for name in names)
    assert not exists("bench", "no_such_bench", REPO)
    top_level = {p.stem for p in (REPO / "bench").glob("*.py")} - {"__init__", "run"}
    assert all(name.endswith("_bench") for name in top_level), sorted(top_level)
    assert top_level == set(names) | NOT_IN_THE_RUNNER
