"""``exec`` end to end: a real daemon over a real store, its socket, ``headctl exec``.

The recipes' answers over ``support.codemode.CORPUS`` are worked out by hand in that module's
docstring; these tests hold the daemon's answers to them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client.sync_client import Client
from support.codemode import A0, A00, A1, CORPUS
from support.daemon import Daemon, headctl, short_socket_dir
from support.stores import Store, make_store

from bench.support.exec_recipes import (
    CENSUS,
    CO_OCCURRENCE,
    LIVE_CONTRADICTIONS,
    LONGEST_CHAIN,
    ORPHANS,
)
from headd.errors import InvalidParams

LATER = "areas/ops/later.html"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, str, str]]:
    root = tmp_path_factory.mktemp("codemode-daemon")
    old = make_store(root, CORPUS)
    new = Store(root).commit({LATER: CORPUS["areas/ops/c3.html"]}, "later")
    d = Daemon(root, short_socket_dir() / "head.sock").wait_ready(timeout=60)
    try:
        yield d, old, new
    finally:
        assert d.stop() == 0, d.log()


def call(d: Daemon, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    with Client(d.socket_path, timeout=timeout) as client:
        answer = client.call("exec", params)
    assert isinstance(answer, dict)
    return answer


def printed(d: Daemon, script: str, **params: Any) -> Any:
    answer = call(d, {"script": script, **params})
    assert answer["exit_code"] == 0, answer["stderr"]
    return json.loads(answer["stdout"])


@pytest.mark.parametrize(
    ("recipe", "expected"),
    [
        (
            CENSUS,
            {
                "memories": 11,
                "byType": {"procedural": 2, "semantic": 7, "verdict": 2},
                "resolved": 7,
                "dangling": 1,
            },
        ),
        (ORPHANS, {"count": 2, "first": ["/resources/nested.html", "/resources/orphan.html"]}),
        (LONGEST_CHAIN, {"length": 3, "chain": [A1, A0, A00]}),
        (
            CO_OCCURRENCE,
            {"pairs": 1, "top": [["service:checkout-api + service:payments", 2]]},
        ),
        (
            LIVE_CONTRADICTIONS,
            {
                "count": 2,
                "pairs": [
                    ["/areas/ops/c1.html", "/areas/ops/c2.html"],
                    ["/areas/ops/c2.html", "/areas/ops/c1.html"],
                ],
            },
        ),
    ],
    ids=["census", "orphans", "longest-chain", "co-occurrence", "live-contradictions"],
)
def test_the_cookbook_recipes_answer_as_worked_out_by_hand(
    daemon: tuple[Daemon, str, str], recipe: str, expected: Any
) -> None:
    d, old, _new = daemon
    assert printed(d, recipe, at=old) == expected


#: memhtml's own ``memhtml exec`` example as its cookbook prints it, indentation and all.
COOKBOOK_EXEC_EXAMPLE = """import { corpus, edges } from "/workspace/lib/corpus.mjs"
  const memories = corpus()
  const { resolved, dangling } = edges(memories)
  console.log(JSON.stringify({ memories: memories.size, resolved: resolved.length, dangling: dangling.length }))"""


def test_the_cookbooks_exec_example_runs_unchanged(daemon: tuple[Daemon, str, str]) -> None:
    d, old, _new = daemon
    assert printed(d, COOKBOOK_EXEC_EXAMPLE, at=old) == {
        "memories": 11,
        "resolved": 7,
        "dangling": 1,
    }


def test_the_helper_keeps_the_seeds_rules(daemon: tuple[Daemon, str, str]) -> None:
    d, old, _new = daemon
    script = (
        'import { corpus, chain, edges, memoryAt, walk, ROOT } from "/workspace/lib/corpus.mjs"\n'
        "const m = corpus()\n"
        "const nested = m.get('/resources/nested.html')\n"
        "const doc = nested.document\n"
        "const dt = doc.querySelector('article dl dt')\n"
        "const direct = memoryAt(ROOT + '/resources/nested.html')\n"
        "console.log(JSON.stringify({\n"
        "  keys: [...m.keys()].every((k) => k.startsWith('/') && !k.startsWith(ROOT)),\n"
        "  listing: m.has('/resources/index.html'),\n"
        "  walked: walk().length,\n"
        "  cycle: chain(m, '/areas/loop/x.html', 'memhtml-supersedes'),\n"
        "  absent: chain(m, '/nowhere.html', 'memhtml-supersedes'),\n"
        "  dangling: edges(m).dangling,\n"
        "  claim: nested.claim, facets: nested.facets, eventAt: nested.eventAt,\n"
        "  file: nested.file, same: JSON.stringify(direct) === JSON.stringify(nested),\n"
        "  mark: doc.querySelector('article mark').text,\n"
        "  childMark: doc.querySelectorAll('article > mark').length,\n"
        "  dd: doc.querySelectorAll('article dl dd').map((e) => e.text),\n"
        "  next: [dt.text, dt.nextElementSibling.rawTagName, dt.nextElementSibling.text],\n"
        "  href: m.get('/areas/ops/a1.html').document.querySelector('link[rel^=\"memhtml-\"]')\n"
        "    .getAttribute('href'),\n"
        "}))"
    )
    assert printed(d, script, at=old) == {
        "keys": True,
        "listing": False,
        "walked": 11,
        "cycle": ["/areas/loop/x.html", "/areas/loop/y.html"],
        "absent": ["/nowhere.html"],
        "dangling": [
            {
                "from": "/resources/dangling.html",
                "rel": "memhtml-relates-to",
                "href": "/resources/nowhere.html",
            }
        ],
        "claim": "The nested claim is found.",
        "facets": {"owner": "sre", "tier": "one"},
        "eventAt": "2026-01-02",
        "file": "/mnt/memhtml/resources/nested.html",
        "same": True,
        "mark": "The nested claim is found.",
        "childMark": 0,
        "dd": ["sre", "second", "one"],
        "next": ["owner", "dd", "sre"],
        "href": A0,
    }


def test_a_script_runs_at_the_tip_by_default_and_at_any_commit_asked(
    daemon: tuple[Daemon, str, str],
) -> None:
    d, old, new = daemon
    census = 'import { corpus } from "/workspace/lib/corpus.mjs"\nconsole.log(corpus().size)'
    tip = call(d, {"script": census})
    past = call(d, {"script": census, "at": old[:12]})
    assert (tip["sha"], tip["stdout"]) == (new, "12\n")
    assert (past["sha"], past["stdout"]) == (old, "11\n")
    assert set(tip) == {"stdout", "stderr", "exit_code", "timed_out", "sha", "took_ms"}


def test_a_failing_script_is_an_answer_not_an_error(daemon: tuple[Daemon, str, str]) -> None:
    d, _old, _new = daemon
    answer = call(d, {"script": "const x = 1\nx.y.z", "timeout_ms": 5000})
    assert (answer["exit_code"], answer["timed_out"], answer["stdout"]) == (1, False, "")
    assert "TypeError" in answer["stderr"]
    late = call(d, {"script": "for (;;) {}", "timeout_ms": 300})
    assert (late["exit_code"], late["timed_out"]) == (124, True)


@pytest.mark.parametrize(
    "params",
    [
        {"script": "//" + "x" * (1024 * 1024)},
        {"script": "1", "timeout_ms": 600_001},
        {"script": "1", "timeout_ms": 0},
        {"script": "1", "lang": "python"},
        {"script": "1", "bogus": True},
    ],
    ids=["over-1-MiB", "timeout-over-cap", "timeout-zero", "lang", "unknown-field"],
)
def test_bad_params_are_refused_before_anything_runs(
    daemon: tuple[Daemon, str, str], params: dict[str, Any]
) -> None:
    d, _old, _new = daemon
    with pytest.raises(InvalidParams):
        call(d, params)


def test_searches_answer_while_four_scripts_run(daemon: tuple[Daemon, str, str]) -> None:
    d, _old, _new = daemon
    done: list[float] = []

    def spin() -> None:
        call(d, {"script": "const t = Date.now(); while (Date.now() - t < 3000) {}"})
        done.append(time.monotonic())

    threads = [threading.Thread(target=spin) for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    with Client(d.socket_path, timeout=60) as client:
        hits = client.call("search", {"query": "deploys fridays"})
    answered = time.monotonic()
    for thread in threads:
        thread.join(timeout=60)
    assert hits["hits"], hits
    assert len(done) == 4 and answered < min(done)  # every script was still running


def env_of(d: Daemon) -> dict[str, str]:
    return {"MEMHTML_ROOT": str(d.store), "HEADD_SOCKET": str(d.socket_path)}


def test_headctl_exec_takes_the_script_from_each_source(
    daemon: tuple[Daemon, str, str], tmp_path: Path
) -> None:
    d, _old, new = daemon
    script = 'import { corpus } from "/workspace/lib/corpus.mjs"\nconsole.log(corpus().size)'
    file = tmp_path / "census.mjs"
    file.write_text(script)
    env = env_of(d)
    for args, stdin in [
        (("--script", script), None),
        (("--file", str(file)), None),
        (("--file", "-"), script),
        (("-",), script),
        ((), script),
    ]:
        result = headctl("exec", *args, env=env, stdin=stdin)
        assert (result.returncode, result.stdout) == (0, "12\n"), (args, result.stderr)
    report = headctl("exec", "--json", "--sha", new, "--script", script, env=env)
    data = json.loads(report.stdout)
    assert set(data) == {
        "corpusMount",
        "sha",
        "exitCode",
        "stdout",
        "stderr",
        "durationMs",
        "timeoutMs",
        "timedOut",
    }
    assert (data["corpusMount"], data["sha"], data["stdout"]) == ("/mnt/memhtml", new, "12\n")
    assert (data["exitCode"], data["timeoutMs"], data["timedOut"]) == (0, 30000, False)


def test_headctl_exec_exit_codes(daemon: tuple[Daemon, str, str], tmp_path: Path) -> None:
    d, _old, _new = daemon
    env = env_of(d)
    late = headctl("exec", "--timeout-ms", "300", "--script", "for(;;){}", env=env)
    assert late.returncode == 124 and "ran past 300 ms" in late.stderr
    failing = headctl("exec", "--json", "--script", "throw new Error('mine')", env=env)
    assert failing.returncode == 0 and json.loads(failing.stdout)["exitCode"] == 1
    script = tmp_path / "x.mjs"
    script.write_text("console.log(1)", encoding="utf-8")
    both = headctl("exec", "--script", "1", "--file", str(script), env=env)
    assert both.returncode == 2 and "--script" in both.stderr
    missing = headctl("exec", "--json", "--file", str(tmp_path / "absent.mjs"), env=env)
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["error"]["code"] == "ERR_USAGE"
    assert "absent.mjs" in missing.stderr
    over = headctl("exec", "--timeout-ms", "600001", "--script", "1", env=env)
    assert over.returncode == 2 and "600000" in over.stderr


def test_at_most_headd_exec_workers_scripts_run_at_once(tmp_path: Path) -> None:
    """With one worker, three scripts started together run one after another: each one's span
    (``Date.now()`` at its start and end) begins after the one before it ended."""
    make_store(tmp_path, CORPUS)
    d = Daemon(tmp_path, short_socket_dir() / "h.sock", env={"HEADD_EXEC_WORKERS": "1"})
    d.wait_ready(timeout=60)
    script = (
        "const t = Date.now(); while (Date.now() - t < 400) {}\n"
        "console.log(JSON.stringify([t, Date.now()]))"
    )
    spans: list[list[int]] = []
    try:

        def run() -> None:
            answer = call(d, {"script": script})
            spans.append(json.loads(answer["stdout"]))

        threads = [threading.Thread(target=run) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        assert d.stop() == 0, d.log()
    spans.sort()
    assert len(spans) == 3
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))
