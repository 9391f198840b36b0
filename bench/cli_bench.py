"""memhtml's command line: ``headctl`` against memhtml 0.15.1, the same commands on the same store.

``python -m bench.cli_bench [--sizes 1000,10000] [--repeat 3]`` builds, for each size, one store
of generated memories (``bench.support.stores.generated_memories``) and two copies of it: one
served by ``headd --embedder off``, one indexed for memhtml (``memhtml index rebuild``, untimed;
``MEMHTML_EMBED=off``). Then the same script of commands runs on both, each command a process as
a person or a script runs it (``headctl …`` against the daemon, ``memhtml …`` on its own), timed
start to exit: writes (memhtml pays its index update per write), a duplicate, a batch, a link, a
correction, lists, neighbours, entity activity, tasks through ``done``, an archive, doctor,
publish (every listing at the first repeat, the touched ones after). Each
command runs ``--repeat`` times; the figure is the median wall time per side and memhtml's over
ours, with each side's CPU time beside it (headctl's includes the daemon's share of the command).
Prints one JSON document on stdout. memhtml comes from ``bash bench/peers/peers.sh``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pygit2

from bench.peers.memhtml_mcp import memhtml_command, memhtml_env, memhtml_version
from bench.support import stores
from bench.support.serve import daemon_argv

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[1]

#: One step of the script: a name, and the argument list of the command at repeat ``i``.
Step = tuple[str, Callable[[int], list[str]]]

SOURCE = "areas/gen/00/m000000.html"
OTHER = "areas/gen/01/m000001.html"


def script() -> list[Step]:
    """The commands, in order; each may depend on what an earlier one wrote."""

    def write(i: int) -> list[str]:
        return [
            "write", "--title", f"Bench fact {i}", "--claim", f"The bench fact number {i} holds.",
            "--type", "semantic",
        ]  # fmt: skip

    return [
        ("write", write),
        ("write (duplicate)", write),
        ("link", lambda i: ["link", f"areas/inbox/bench-fact-{i}.html", "relates_to", SOURCE]),
        ("list --limit 50", lambda i: ["list", "--limit", "50"]),
        ("list --type semantic", lambda i: ["list", "--type", "semantic", "--limit", "50"]),
        ("neighbors --depth 2", lambda i: ["neighbors", SOURCE, "--depth", "2"]),
        ("entity activity", lambda i: ["entity", "activity"]),
        ("task add", lambda i: ["task", "add", "--title", f"Bench task {i}"]),
        (
            "task status done",
            lambda i: ["task", "status", f"areas/inbox/tasks/bench-task-{i}.html", "done"],
        ),
        ("task list", lambda i: ["task", "list"]),
        (
            "correct",
            lambda i: [
                "correct",
                f"areas/inbox/bench-fact-{i}.html",
                "--title",
                f"Bench fact {i} v2",
                "--claim",
                f"The bench fact number {i} holds twice.",
            ],
        ),  # fmt: skip
        (
            "archive",
            lambda i: ["archive", f"areas/inbox/bench-fact-{i}-v2.html", "--reason", "bench"],
        ),
        ("doctor", lambda i: ["doctor"]),
        ("publish", lambda i: ["publish"]),
    ]


def build(dest: Path, n: int) -> None:
    """A store of ``n`` generated memories in one commit, checked out, with memhtml's layout."""
    repo = pygit2.init_repository(str(dest), bare=False, initial_head="main")
    files = {path: html.encode("utf-8") for path, html in stores.generated_memories(n)}
    files[".gitignore"] = b"/.memhtml/*\n!/.memhtml/state/\n"
    tree = stores.write_tree(repo, files)
    sig = pygit2.Signature("bench", "bench@headd.local", 1_764_489_600, 0)
    repo.create_commit("refs/heads/main", sig, sig, f"bench: {n} memories", tree, [])
    repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
    repo.config["user.name"] = "bench"
    repo.config["user.email"] = "bench@headd.local"


def timed(command: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, the command's own CPU seconds (user + system), its exit status."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(list(command), env=env, cwd=str(cwd), capture_output=True, timeout=600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - cpu.ru_utime + after.ru_stime - cpu.ru_stime
    return wall, used, done.returncode


def process_cpu_s(pid: int) -> float:
    """A live process's CPU seconds so far (``/proc/PID/stat``: utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_ready(socket_path: Path, env: dict[str, str]) -> None:
    for _ in range(600):
        probe = [PYTHON, "-m", "headd_client.headctl", "--socket", str(socket_path), "status"]
        if subprocess.run(probe, env=env, capture_output=True).returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError("headd did not answer")


def run_size(n: int, repeat: int, work: Path) -> dict[str, Any]:
    ours, theirs = work / f"ours-{n}", work / f"theirs-{n}"
    build(ours, n)
    shutil.copytree(ours, theirs, symlinks=True)
    theirs_env = memhtml_env(theirs)
    index_s, _, code = timed([*memhtml_command(), "index", "rebuild"], theirs_env, theirs)
    if code != 0:
        raise RuntimeError("memhtml index rebuild failed")
    socket_path = Path(tempfile.mkdtemp(prefix="hcb-")) / "head.sock"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    daemon = subprocess.Popen(
        daemon_argv(ours, socket_path, python=PYTHON),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(socket_path, env)
        headctl = [PYTHON, "-m", "headd_client.headctl", "--store", str(ours)]
        headctl += ["--socket", str(socket_path), "--json"]
        times: dict[str, dict[str, list[float]]] = {}
        cpu: dict[str, dict[str, list[float]]] = {}
        failures: dict[str, list[str]] = {}
        for i in range(repeat):
            for name, args in script():
                row = times.setdefault(name, {"headctl": [], "memhtml": []})
                row_cpu = cpu.setdefault(name, {"headctl": [], "memhtml": []})
                for side, command, cmd_env, cwd in (
                    ("headctl", headctl + args(i), env, ours),
                    ("memhtml", [*memhtml_command(), *args(i)], theirs_env, theirs),
                ):
                    served = process_cpu_s(daemon.pid)
                    wall, used, code = timed(command, cmd_env, cwd)
                    if side == "headctl":  # the daemon's share of the command counts too
                        used += process_cpu_s(daemon.pid) - served
                    row[side].append(wall * 1000.0)
                    row_cpu[side].append(used * 1000.0)
                    if code != 0:
                        failures.setdefault(name, []).append(f"{side} exit {code}")
    finally:
        daemon.terminate()
        daemon.wait(30)
    commands = {}
    for name, sides in times.items():
        ours_ms = statistics.median(sides["headctl"])
        theirs_ms = statistics.median(sides["memhtml"])
        commands[name] = {
            "headctl_ms": round(ours_ms, 1),
            "headctl_cpu_ms": round(statistics.median(cpu[name]["headctl"]), 1),
            "memhtml_ms": round(theirs_ms, 1),
            "memhtml_cpu_ms": round(statistics.median(cpu[name]["memhtml"]), 1),
            "ratio": round(theirs_ms / ours_ms, 2) if ours_ms else None,
        }
    return {
        "memories": n,
        "memhtml_index_rebuild_s": round(index_s, 2),
        "commands": commands,
        "failures": failures,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="store sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command per side")
    parser.add_argument("--quick", action="store_true", help="one size of 300, one run")
    args = parser.parse_args(argv)
    sizes = [300] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="cli-bench-") as tmp:
        runs = [run_size(n, repeat, Path(tmp)) for n in sizes]
    out = {
        "bench": "cli_bench",
        "memhtml": memhtml_version(),
        "repeat": repeat,
        "load_average": os.getloadavg()[0],
        "sizes": runs,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
