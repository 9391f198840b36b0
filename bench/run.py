"""Run every self-contained bench of the project; write each one's JSON under ``bench/results/``.

``python -m bench.run [--quick] [--only head_bench,parse_bench] [--results DIR]``

Each bench (``bench/<area>_bench.py``) prints one JSON document on stdout and logs to stderr. It
runs here as its own process (``python -m bench.<name> ...``), one after another, so one bench's
memory and caches never colour the next one's figures and a crash costs that bench only. Results
go to ``<results>/<UTC stamp>/<name>.json`` (the bench's document, or its raw stdout when that is
not one JSON document, with the exit code, elapsed time, load average and the tail of stderr)
plus a ``summary.json``; ``bench/results/`` is ignored by git.

The runner refuses to start, naming what is missing, when a listed bench's module is not in the
tree or a data set it needs is not named (``HEADD_SCIFACT``: see ``bench.support.data``); it
exits 1 when any bench fails. The tools that need memhtml and Node (``bench/peers/``,
``mcp_bench``, ``exec_bench`` and ``cli_bench``), ``history_bench`` (a notes repository), ``load_bench`` (a store path) and
``quality_bench`` and ``hook_relevance_bench`` (LoCoMo, ``HEADD_LOCOMO``), ``query_encoder_bench``
(levers measured and not adopted, no target) and ``footprint_bench`` (a 10,000-memory store beside
memhtml's MCP server) are not in the list; docs/benchmarks.md says how to run them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

log = logging.getLogger("bench.run")

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
STDERR_TAIL = 4_000


@dataclass(frozen=True)
class BenchModule:
    """One bench: its module name under the package, and its arguments per mode."""

    name: str
    quick_args: tuple[str, ...] = ()
    full_args: tuple[str, ...] = ()
    quick_env: Mapping[str, str] = field(default_factory=dict)
    full_env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 3_600
    #: Environment variables naming the data sets the bench reads.
    needs: tuple[str, ...] = ()


class RunRefused(SystemExit):
    """A listed bench cannot run: its module is not in the tree, or its data is not named."""


SCIFACT = ("HEADD_SCIFACT",)


#: Every self-contained bench of the project, in the order they run.
MODULES: tuple[BenchModule, ...] = (
    BenchModule("head_bench", ("--quick",), (), needs=SCIFACT),
    BenchModule("parse_bench", ("--repeat", "1"), (), needs=SCIFACT),
    BenchModule("daemon_bench", ("--queries", "100"), (), needs=SCIFACT),
    BenchModule("commit_bench", ("--commits", "10"), ()),
    BenchModule(
        "traces_bench",
        quick_env={"HEADD_BENCH_TRACES_MB": "50", "HEADD_BENCH_TRACES_FILES": "1000"},
        full_env={"HEADD_BENCH_FULL": "1"},
    ),
    BenchModule("embed_bench", ("--limit-docs", "300", "--skip-cold-load"), (), needs=SCIFACT),
    BenchModule("plane_bench", ("--docs", "1000", "--queries", "100"), (), needs=SCIFACT),
    BenchModule("daemon_plane_bench", ("--n", "1000"), (), needs=SCIFACT),
    BenchModule("coldstart_bench", ("--n", "2000"), (), needs=SCIFACT),
    BenchModule("vector_bench", ("--skip", "scifact", "--skip", "embed"), (), needs=SCIFACT),
    BenchModule("writer_bench"),
    BenchModule("concurrency_bench", ("--n", "500", "--runs", "1"), (), needs=SCIFACT),
    BenchModule("remote_bench", ("--samples", "3", "--burst", "20", "--pushes", "3"), ()),
    BenchModule("import_bench", ("--sizes", "200"), ()),
    BenchModule("secrets_bench", ("--limit", "500"), (), needs=("HEADD_SCIFACT", "HEADD_LOCOMO")),
    BenchModule("sleep_bench", ("--sizes", "1000"), ()),
    BenchModule("ui_bench", ("--n", "2000", "--requests", "10", "--history", "20"), ()),
)


def parse_output(stdout: str) -> Any | None:
    """The JSON document a bench printed: the whole of stdout, or None when stdout is anything
    else (a bench logs to stderr, so a line on stdout beside the document is a bench's bug)."""
    try:
        return json.loads(stdout)
    except ValueError:
        return None


def exists(package: str, name: str, cwd: Path) -> bool:
    """Whether the bench's source file is in the tree under ``cwd`` (nothing is imported)."""
    return (cwd / package.replace(".", "/") / f"{name}.py").is_file()


def check_runnable(
    modules: Sequence[BenchModule], *, package: str, cwd: Path, env: Mapping[str, str]
) -> None:
    """Raise :class:`RunRefused` naming every listed bench that is not in the tree and every
    data-set variable a listed bench needs that ``env`` does not set; before anything runs."""
    problems = [
        f"{b.name}: no {package}/{b.name}.py" for b in modules if not exists(package, b.name, cwd)
    ]
    problems += [
        f"{b.name}: {var} is not set" for b in modules for var in b.needs if not env.get(var)
    ]
    if problems:
        raise RunRefused("bench.run refuses to start:\n  " + "\n  ".join(problems))


def run_one(
    bench: BenchModule, *, quick: bool, package: str = "bench", cwd: Path = REPO
) -> dict[str, Any]:
    """Run one bench as a subprocess; its record (never raises for a failing bench)."""
    args = list(bench.quick_args if quick else bench.full_args)
    env = dict(os.environ)
    env.update(bench.quick_env if quick else bench.full_env)
    command = [sys.executable, "-m", f"{package}.{bench.name}", *args]
    record: dict[str, Any] = {
        "module": f"{package}.{bench.name}",
        "args": args,
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
    }
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=bench.timeout_s,
            check=False,
        )
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc = None
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = f"timed out after {bench.timeout_s} s"
    record["elapsed_s"] = round(time.perf_counter() - started, 2)
    record["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    record["rc"] = rc
    parsed = parse_output(stdout)
    if parsed is None:
        record["stdout"] = stdout
    else:
        record["result"] = parsed
    record["ok"] = rc == 0 and parsed is not None
    record["stderr_tail"] = stderr[-STDERR_TAIL:]
    return record


def run_all(
    modules: Sequence[BenchModule],
    results: Path,
    *,
    quick: bool,
    package: str = "bench",
    cwd: Path = REPO,
    now: datetime | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Run ``modules`` in order into ``results/<stamp>/``; the directory and the summary.
    Raises :class:`RunRefused` before running anything when one of them cannot run."""
    check_runnable(modules, package=package, cwd=cwd, env=os.environ)
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    out_dir = results / stamp
    out_dir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"at": stamp, "quick": quick, "benches": {}}
    for bench in modules:
        log.info("run %s", bench.name)
        record = run_one(bench, quick=quick, package=package, cwd=cwd)
        (out_dir / f"{bench.name}.json").write_text(json.dumps(record, indent=2) + "\n")
        summary["benches"][bench.name] = {
            "status": "ok" if record["ok"] else "failed",
            "rc": record["rc"],
            "elapsed_s": record["elapsed_s"],
        }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return out_dir, summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="each bench's quick arguments")
    parser.add_argument("--only", help="comma-separated bench names")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    modules = list(MODULES)
    if args.only:
        wanted = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = wanted - {m.name for m in modules}
        if unknown:
            parser.error(f"unknown bench(es): {', '.join(sorted(unknown))}")
        modules = [m for m in modules if m.name in wanted]
    out_dir, summary = run_all(modules, args.results, quick=args.quick)
    summary["results"] = str(out_dir)
    print(json.dumps(summary, indent=2))
    return 0 if all(b["status"] == "ok" for b in summary["benches"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
