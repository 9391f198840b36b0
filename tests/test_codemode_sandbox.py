"""The code-mode sandbox against every way out we could think of, on a real git store.

Most scripts run through the worker's own ``run`` in this process (a fresh QuickJS context
each); the bounds that need a process (the deadline, the memory cap, leaks between scripts,
two scripts at once) run through the real ``Runner`` and its worker processes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pygit2
import pytest
from support.codemode import CORPUS
from support.stores import Store, make_store

from headd.codemode.corpus import CorpusCache
from headd.codemode.runner import ExecResult, Runner
from headd.codemode.worker import Job, run

HELPER = 'import { corpus, walk, memoryAt, ROOT } from "/workspace/lib/corpus.mjs"\n'


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("codemode-store")
    return root, make_store(root, CORPUS)


def run_here(store: tuple[Path, str], script: str, *, output: int = 1 << 20) -> ExecResult:
    """``script`` through the worker's ``run`` in this process."""
    root, sha = store
    repo = pygit2.Repository(str(root))
    corpus = CorpusCache().corpus_json(repo, sha).decode()
    written: dict[str, list[str]] = {"stdout": [], "stderr": []}

    def sink(line: bytes) -> None:
        chunk = json.loads(line)
        if chunk["type"] == "Chunk":
            written[chunk["stream"]].append(chunk["text"])

    outcome = run(Job(script, repo.path, sha, 10_000, 64 << 20, output), corpus, sink)
    stderr = "".join(written["stderr"]) + outcome.failure
    return ExecResult("".join(written["stdout"]), stderr, outcome.exit_code, outcome.timed_out, 0)


def run_pooled(
    store: tuple[Path, str], scripts: list[tuple[str, str]], runner: Runner, timeout_ms: int
) -> list[ExecResult]:
    """``(script, sha)`` pairs through a real runner, all at once."""
    root, _sha = store
    repo = pygit2.Repository(str(root))
    cache = CorpusCache()

    async def main() -> list[ExecResult]:
        try:
            return list(
                await asyncio.gather(
                    *(
                        runner.run(
                            script,
                            git_dir=repo.path,
                            sha=sha,
                            corpus_json=cache.corpus_json(repo, sha),
                            timeout_ms=timeout_ms,
                        )
                        for script, sha in scripts
                    )
                )
            )
        finally:
            await runner.close()

    return asyncio.run(main())


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/mnt/memhtml/../../etc/passwd",
        "/mnt/memhtml/.git/config",
        "/mnt/memhtml/.git/HEAD",
        "/proc/self/environ",
        "mnt/memhtml/areas/ops/a1.html",
    ],
)
def test_a_read_outside_the_commits_tree_is_enoent(store: tuple[Path, str], path: str) -> None:
    result = run_here(
        store,
        'import * as fs from "node:fs"\n'
        f"try {{ fs.readFileSync({path!r}, 'utf8'); console.log('read') }}\n"
        "catch (e) { console.log(e.code) }\n"
        f"console.log(fs.existsSync({path!r}))",
    )
    assert result.stdout == "ENOENT\nfalse\n", result.stderr


def test_the_stores_git_directory_is_not_reachable_by_its_real_path(
    store: tuple[Path, str],
) -> None:
    root, _sha = store
    git_config = str(root / ".git" / "config")
    result = run_here(
        store,
        f'import fs from "fs"\ntry {{ fs.readFileSync({git_config!r}, "utf8") }} '
        "catch (e) { console.log(e.code) }",
    )
    assert result.stdout == "ENOENT\n"


def test_every_write_answers_erofs_and_the_tree_is_unchanged(store: tuple[Path, str]) -> None:
    root, sha = store
    result = run_here(
        store,
        'import * as fs from "node:fs"\n'
        "const codes = []\n"
        "for (const write of [\n"
        '  () => fs.writeFileSync("/mnt/memhtml/areas/ops/a1.html", "x"),\n'
        '  () => fs.appendFileSync("/mnt/memhtml/new.html", "x"),\n'
        '  () => fs.mkdirSync("/mnt/memhtml/d"),\n'
        '  () => fs.rmSync("/mnt/memhtml/areas", { recursive: true }),\n'
        '  () => fs.unlinkSync("/mnt/memhtml/areas/ops/a1.html"),\n'
        '  () => fs.renameSync("/mnt/memhtml/areas/ops/a1.html", "/mnt/memhtml/b.html"),\n'
        '  () => fs.openSync("/mnt/memhtml/areas/ops/a1.html", "w"),\n'
        "]) { try { write(); codes.push('wrote') } catch (e) { codes.push(e.code) } }\n"
        "console.log(codes.join())",
    )
    assert result.stdout == ",".join(["EROFS"] * 7) + "\n", result.stderr
    repo = pygit2.Repository(str(root))
    assert str(repo.head.target) == sha
    assert Store(root).tree_paths(sha) == sorted([".gitignore", *CORPUS])


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ('require("fs")', "ReferenceError: require is not defined"),
        ('import { x } from "/etc/passwd"', "could not load module '/etc/passwd'"),
        ('import { x } from "node:child_process"', "could not load module"),
        ('await import("/workspace/lib/corpus.mjs")', "could not load module"),
        ('await import("/mnt/memhtml/areas/ops/a1.html")', "could not load module"),
        ('await fetch("http://127.0.0.1:1/")', "fetch is disabled"),
        ("new XMLHttpRequest()", "ReferenceError"),
        ("std.loadFile('/etc/passwd')", "ReferenceError: std is not defined"),
        ("os.exec(['id'])", "ReferenceError: os is not defined"),
        ("process.exit(0)", "ReferenceError: process is not defined"),
        ("__host_fs('read', '/etc/passwd')", "ReferenceError: __host_fs is not defined"),
        ("performance.now()", "ReferenceError: performance is not defined"),
        ("throw new TypeError('mine')", "TypeError: mine"),
    ],
)
def test_a_way_out_fails_as_the_scripts_own_error(
    store: tuple[Path, str], script: str, message: str
) -> None:
    result = run_here(store, script)
    assert result.exit_code == 1
    assert message in result.stderr
    assert not result.timed_out


def test_an_uncaught_exception_is_exit_1_with_its_stack(store: tuple[Path, str]) -> None:
    result = run_here(
        store, 'console.log("before")\nfunction deep() { null.x }\nfunction top() { deep() }\ntop()'
    )
    assert result.exit_code == 1
    assert result.stdout == "before\n"
    assert "TypeError" in result.stderr
    assert "at deep" in result.stderr and "at top" in result.stderr


def test_output_past_the_limit_is_cut_and_stops_the_script(store: tuple[Path, str]) -> None:
    result = run_here(
        store, 'for (let i = 0; ; i++) console.log("y".repeat(1000) + i)', output=64 * 1024
    )
    assert result.exit_code == 1
    assert len(result.stdout.encode()) == 64 * 1024
    assert "stdout exceeds the code-mode output limit" in result.stderr


def test_the_helper_and_the_file_system_see_only_the_commit(store: tuple[Path, str]) -> None:
    result = run_here(
        store,
        HELPER + 'import { readdirSync, statSync } from "node:fs"\n'
        "console.log(JSON.stringify({ root: ROOT, top: readdirSync(ROOT),\n"
        '  dir: statSync(ROOT + "/areas").isDirectory(), walk: walk().length }))',
    )
    assert result.stdout == (
        '{"root":"/mnt/memhtml","top":[".gitignore","archive","areas","resources"],'
        '"dir":true,"walk":11}\n'
    ), result.stderr


def test_a_deadline_kills_the_script_with_124_and_keeps_what_it_printed(
    store: tuple[Path, str],
) -> None:
    _root, sha = store
    [result] = run_pooled(
        store, [('console.log("started")\nfor (;;) {}', sha)], Runner(workers=1), 400
    )
    assert (result.exit_code, result.timed_out) == (124, True)
    assert result.stdout == "started\n"
    assert "ran past 400 ms" in result.stderr


def test_a_memory_bomb_hits_the_cap_not_the_machine(store: tuple[Path, str]) -> None:
    _root, sha = store
    bomb = 'const kept = []\nfor (let i = 0; ; i++) kept.push("x".repeat(1 << 16) + i)'
    [result] = run_pooled(store, [(bomb, sha)], Runner(workers=1, memory_bytes=16 << 20), 60_000)
    assert (result.exit_code, result.timed_out) == (1, False), result.stderr
    assert "memory cap" in result.stderr


def test_prototype_tampering_does_not_reach_the_next_script(store: tuple[Path, str]) -> None:
    _root, sha = store
    tamper = (
        "Object.prototype.leak = 'yes'\nArray.prototype.map = () => 'tampered'\n"
        "globalThis.JSON = { stringify: () => 'tampered' }\n"
        "Map.prototype.get = () => 'tampered'\n"
        "console.log(({}).leak, [1].map((x) => x))"
    )
    check = (
        HELPER + "const m = corpus()\n"
        "console.log(JSON.stringify([({}).leak ?? null, [1].map((x) => x * 2),"
        ' m.get("/areas/ops/a1.html").title]))'
    )
    runner = Runner(workers=1)
    first, second = run_pooled(store, [(tamper, sha), (check, sha)], runner, 10_000)
    assert first.stdout == "yes tampered\n"
    assert second.stdout == '[null,[2],"Alpha one"]\n', second.stderr


def test_two_scripts_at_different_commits_run_at_once(tmp_path: Path) -> None:
    store = Store(tmp_path)
    old = make_store(tmp_path, CORPUS)
    new = store.commit({"areas/ops/later.html": CORPUS["areas/ops/c3.html"]}, "later")
    census = HELPER + "const m = corpus()\nconsole.log(m.size, m.has('/areas/ops/later.html'))"
    slow = "const t = Date.now(); while (Date.now() - t < 300) {}\n" + census
    results = run_pooled((tmp_path, new), [(slow, old), (slow, new)], Runner(workers=2), 20_000)
    assert [r.stdout for r in results] == ["11 false\n", "12 true\n"]
