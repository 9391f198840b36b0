"""``headctl`` as a shell sees it: real subprocesses against a real daemon on a temporary store.

Each test runs the console module (``python -m headd_client.headctl``) and reads its exit status,
stdout and stderr: options anywhere on the line, unquoted queries, one-line failures (a JSON
error with ``--json``), output a person can read, the lookup commands, ``init``, and what the
messages say to do when there is no store or no daemon.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest
from headd_client.headctl import build_parser
from headd_client.sync_client import Client
from support.daemon import PYTHON, Daemon, headctl, short_socket_dir, wait_for
from support.data import REPO
from support.memory import memory_html
from support.stores import BASE_FILES, make_store

from headd.errors import InvalidRequest

SHORT = "areas/inbox/user-prefers-short-answers.html"
#: The tree ``memhtml init`` (0.15.1) commits, measured on that tool: ``headctl init`` lays out
#: the same bytes, so its first tree is this one.
MEMHTML_INIT_TREE = "3c914b396f297f3a8fa4e501e459aa2105c9bda4"
INTERNAL_NAMES = ("_command", "session_command", "index_command", "traces_command", "Namespace")


class Shell:
    """``headctl`` with the store and socket in the environment, as a user's shell has them."""

    def __init__(self, store: Path, socket_path: Path) -> None:
        self.store = store
        self.socket_path = socket_path
        self.env = {"MEMHTML_ROOT": str(store), "HEADD_SOCKET": str(socket_path)}

    def run(self, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return headctl(*argv, env=self.env, stdin=stdin)

    def ok(self, *argv: str, stdin: str | None = None) -> str:
        done = self.run(*argv, stdin=stdin)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "", done.stderr
        return done.stdout

    def json(self, *argv: str, stdin: str | None = None) -> Any:
        return json.loads(self.ok(*argv, "--json", stdin=stdin))


def one_failure_line(done: subprocess.CompletedProcess[str], code: str) -> str:
    """The failure's one stderr line, checked for its shape; returns its message."""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"{code}: "), done.stderr
    assert "Traceback" not in done.stderr
    for name in INTERNAL_NAMES:
        assert name not in done.stderr
    return done.stderr[len(code) + 2 :].strip()


@pytest.fixture(scope="module")
def sh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    store = tmp_path_factory.mktemp("manners") / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    shell = Shell(store, daemon.socket_path)
    # Every vector filled first, so two searches in a test answer alike whenever they run.
    shell.ok("vectors", "fill")
    yield shell
    assert daemon.stop() == 0, daemon.log()


# -- the line -----------------------------------------------------------------------------


def test_json_and_the_global_options_work_anywhere_on_the_line(sh: Shell) -> None:
    before = json.loads(sh.ok("--json", "search", "short", "answers", "--limit", "3"))
    after = json.loads(sh.ok("search", "short", "answers", "--limit", "3", "--json"))
    assert before["hits"] == after["hits"] and before["hits"]
    nowhere = str(short_socket_dir() / "none.sock")
    done = headctl("status", "--store", str(sh.store), "--socket", nowhere)
    one_failure_line(done, "ERR_DAEMON_UNAVAILABLE")
    assert nowhere in done.stderr, "--socket after the command is the socket used"


def test_an_unquoted_query_is_the_words_joined(sh: Shell) -> None:
    quoted = sh.json("search", "short answers")
    unquoted = sh.json("search", "short", "answers")
    assert quoted["hits"] == unquoted["hits"] and SHORT in [h["path"] for h in quoted["hits"]]


def _leaves(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _leaves(child)


def test_every_option_and_argument_has_help_text() -> None:
    missing = []
    for parser in _leaves(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{parser.prog} {action.dest}")
    assert missing == []


def test_every_command_has_its_one_line_description_in_help() -> None:
    done = headctl("--help")
    listed = {
        line.split(None, 1)[0]: line.split(None, 1)[1:]
        for line in done.stdout.splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    }
    for command in ("mcp", "integrations", "hook", "check", "init", "sync"):
        assert listed.get(command), (command, done.stdout)


def test_version_of_both_commands() -> None:
    for module, name in (("headd_client.headctl", "headctl"), ("headd.daemon.main", "headd")):
        done = subprocess.run(
            [PYTHON, "-m", module, "--version"], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0 and re.fullmatch(rf"{name} \d+\.\d+\S*\n", done.stdout)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["search", "x", "--type", "bogus"], "invalid choice: 'bogus'"),
        (["session"], "headctl session needs a subcommand: open, apply, commit"),
        (["index"], "headctl index needs a subcommand: rebuild, update, status"),
        (["frobnicate"], "no command 'frobnicate'; see headctl --help"),
        (["statsu"], "no command 'statsu'; did you mean status?"),
        (["session", "comit"], "no command 'comit'; did you mean commit?"),
        (["search", "   "], "the query is empty"),
        (["recall", ""], "the query is empty"),
        (["search", "\udcff\udcfe"], "an argument is not UTF-8 text"),
        (["read", "areas/\udcff.html"], "an argument is not UTF-8 text"),
        (["search"], "the following arguments are required: QUERY"),
        (["read", "a", "--limit", "3"], "unrecognized arguments: --limit 3"),
    ],
)
def test_usage_errors_are_one_err_usage_line_without_internal_names(
    sh: Shell, argv: list[str], named: str
) -> None:
    done = sh.run(*argv)
    assert done.returncode == 2 and done.stdout == ""
    assert named in one_failure_line(done, "ERR_USAGE")


def test_a_request_over_the_line_limit_is_refused_as_such_and_the_daemon_stays(
    sh: Shell,
) -> None:
    """The daemon would close the connection on a line past its limit; the client refuses it
    first, naming the limit, instead of reporting a dead daemon."""
    with Client(sh.socket_path, timeout=30) as client:
        with pytest.raises(InvalidRequest, match="over the 8388608-byte line limit"):
            client.call("search", {"query": "x" * (9 * 1024 * 1024)})
        assert client.call("status")["sha"]


def test_with_json_a_failure_prints_a_json_error_too(sh: Shell) -> None:
    done = sh.run("--json", "search", "x", "--type", "bogus")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "ERR_USAGE"
    done = sh.run("read", "areas/none.html", "--json")
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "ERR_PATH_NOT_FOUND"
    assert error["details"]["path"] == "areas/none.html"


# -- reads and lookups --------------------------------------------------------------------


def test_reading_a_missing_path_exits_1_with_path_not_found(sh: Shell) -> None:
    done = sh.run("read", "areas/inbox/no-such-memory.html")
    assert done.returncode == 1 and done.stdout == ""
    assert "areas/inbox/no-such-memory.html" in one_failure_line(done, "ERR_PATH_NOT_FOUND")


def test_a_leading_slash_path_is_the_same_memory(sh: Shell) -> None:
    plain = sh.json("read", SHORT)
    slashed = sh.json("read", "/" + SHORT)
    assert plain == slashed and plain["record"]["path"] == SHORT
    assert sh.json("resolve", "/" + SHORT)["path"] == SHORT


def test_the_lookup_commands_answer_as_their_methods(sh: Shell) -> None:
    records = [sh.json("read", path)["record"] for path in BASE_FILES if "broken" not in path]
    framed = next(r for r in records if r["frame_key"])
    record = sh.json("read", SHORT)["record"]
    entity = "person:dana"
    cases = [
        (["inbound", SHORT], "inbound", {"href": "/" + SHORT}),
        (["by-entity", entity], "by_entity", {"entity": entity}),
        (["by-frame-key", framed["frame_key"]], "by_frame_key", {"key": framed["frame_key"]}),
        (
            ["by-content-hash", record["content_hash"]],
            "by_content_hash",
            {"hash": record["content_hash"]},
        ),
    ]
    for argv, method, params in cases:
        answer = sh.json(*argv)
        assert answer == sh.json("call", method, json.dumps(params)), argv
        human = sh.ok(*argv)
        for path in answer["paths"]:
            assert f"{path}\n" in human
        assert f"{len(answer['paths'])} paths at {answer['sha'][:12]}" in human
    assert SHORT in sh.json("by-content-hash", record["content_hash"])["paths"]
    assert framed["path"] in sh.json("by-frame-key", framed["frame_key"])["paths"]
    assert sh.json("by-entity", entity)["paths"], "the lookups find something"


def test_vectors_fill_reports_what_it_embedded(sh: Shell) -> None:
    filled = sh.json("vectors", "fill")
    assert filled["space"].startswith("headd-hash") and filled["remaining"] == 0
    human = sh.ok("vectors", "fill")
    assert human.startswith(f"{filled['space']}: 0 embedded now, ") and "coverage 100%" in human


# -- human output -------------------------------------------------------------------------

DICT_DUMP = re.compile(r"\bNone\b|\bFalse\b|\bTrue\b|\w+=\[|\{'")


def test_search_shows_aligned_hits_with_the_claim_under_each_title(sh: Shell) -> None:
    answer = sh.json("search", "short", "answers")
    out = sh.ok("search", "short", "answers").splitlines()
    first = answer["hits"][0]
    row = next(i for i, line in enumerate(out) if first["path"] in line)
    assert out[row].startswith(" 1.") and "+".join(first["arms"]) in out[row]
    assert out[row + 1].strip() == first["title"]
    assert out[row + 2].strip() == first["claim"]
    assert out[row + 2].index(first["claim"]) > out[row + 1].index(first["title"])
    starts = {line.index(h["path"]) for h in answer["hits"] for line in out if h["path"] in line}
    assert len(starts) == 1, "paths start in one column"
    assert out[-1].startswith(f"{len(answer['hits'])} hits at {answer['sha'][:12]} (")
    assert not DICT_DUMP.search("\n".join(out))


def test_status_is_a_dozen_lines_and_verbose_shows_the_rest(sh: Shell) -> None:
    status = sh.json("status")
    short = sh.ok("status").splitlines()
    assert 8 <= len(short) <= 12
    labels = [line.split()[0] for line in short]
    assert labels[:5] == ["store", "ref", "memories", "loaded", "embedder"]
    assert len({line.index(line.split()[1], len(line.split()[0])) for line in short}) == 1
    assert f"at {status['sha'][:12]}" in short[1]
    assert "embedder  hash" in "\n".join(short)
    assert not DICT_DUMP.search("\n".join(short))
    verbose = sh.ok("status", "--verbose")
    assert len(verbose.splitlines()) > len(short) + 10
    assert "uptime_s" in verbose and "embedder_state:" in verbose


def test_the_gates_verbose_table_counts_inversions_as_its_summary_does(sh: Shell) -> None:
    done = sh.run("gate", "HEAD", "HEAD", "--verbose")
    assert done.returncode == 0, done.stderr
    summary, *table = done.stdout.splitlines()
    assert summary.endswith("inversions 0 -> 0")
    rows = dict(line.split(None, 1) for line in table if len(line.split(None, 1)) == 2)
    assert rows["inversions_before"] == "0" and rows["inversions"] == "0"


def test_read_shows_the_record_not_a_dump(sh: Shell) -> None:
    out = sh.ok("read", SHORT)
    assert re.search(r"^title +User prefers short answers$", out, re.M)
    assert re.search(r"^claim +\S", out, re.M) and not DICT_DUMP.search(out)


# -- sessions -----------------------------------------------------------------------------


def test_applying_a_missing_file_is_one_line(sh: Shell, tmp_path: Path) -> None:
    session = sh.json("session", "open")["session"]
    done = sh.run("session", "apply", session, str(tmp_path / "missing.jsonl"))
    assert done.returncode == 2
    assert "missing.jsonl" in one_failure_line(done, "ERR_USAGE")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"op": "write", "title": "Caf\xe9"}\n')
    done = sh.run("session", "apply", session, str(latin))
    assert done.returncode == 2
    assert "are not UTF-8 text" in one_failure_line(done, "ERR_USAGE")
    sh.ok("session", "close", session)


def test_an_empty_commit_says_so_and_makes_no_commit(sh: Shell) -> None:
    tip = pygit2.Repository(str(sh.store)).head.target
    session = sh.json("session", "open")["session"]
    out = sh.ok("session", "commit", session)
    assert out.startswith("nothing to commit: ") and "no commit made" in out
    assert pygit2.Repository(str(sh.store)).head.target == tip
    sh.ok("session", "close", session)


def test_session_list_says_where_each_session_stands(sh: Shell) -> None:
    opened = sh.json("session", "open")["session"]
    op = {
        "op": "put",
        "path": "areas/inbox/manners-commit.html",
        "html": memory_html("Manners commit", "A committed session shows its commit."),
    }
    sh.ok("session", "apply", opened, stdin=json.dumps(op))
    listed = sh.ok("session", "list")
    assert re.search(rf"^{opened} +\w{{12}} +open, 1 uncommitted ops ", listed, re.M)
    committed = sh.json("session", "commit", opened)
    listed = sh.ok("session", "list")
    expected = rf"^{opened} +\w{{12}} +committed {committed['sha'][:12]}, nothing pending "
    assert re.search(expected, listed, re.M), listed
    assert listed.splitlines()[0].split() == ["SESSION", "BASE", "STATE", "UPDATED"]
    sh.ok("session", "close", opened)


# -- the plane ----------------------------------------------------------------------------


def test_recall_prints_each_entry_once(sh: Shell) -> None:
    assert wait_for(lambda: sh.run("--json", "index", "status").returncode == 0, timeout=60)
    assert wait_for(lambda: sh.json("index", "status").get("indexed"), timeout=60)
    pack = sh.json("recall", "short", "answers")
    assert pack["entries"], pack
    out = sh.ok("recall", "short", "answers")
    for entry in pack["entries"]:
        assert out.count(entry["path"]) == 1, entry["path"]
    assert not DICT_DUMP.search(out)
    assert out.splitlines()[-1].startswith(f"{len(pack['entries'])} quoted, ")


# -- check --------------------------------------------------------------------------------


def test_check_of_a_directory_recurses(sh: Shell) -> None:
    done = sh.run("--json", "check", str(sh.store))
    results = json.loads(done.stdout)
    paths = {r["path"] for r in results}
    assert {SHORT, "areas/inbox/broken-memory.html"} <= paths
    assert not any(p.startswith((".git/", ".memhtml/")) for p in paths)
    assert done.returncode == 1, "the broken memory under the directory is found"
    done = sh.run("check")
    assert done.returncode == 2 and done.stderr.startswith("ERR_USAGE: ")


def test_check_as_the_readme_runs_it_finds_the_stores_files(tmp_path: Path) -> None:
    """From the checkout (no ``areas/`` there), ``check areas/`` checks the store's, with
    ``--store`` before or after the command; a missing path is not found; a fresh store from
    ``headctl init`` checks clean (its README.html is no memory)."""
    store = tmp_path / "fresh"
    assert headctl("init", str(store)).returncode == 0
    (store / "areas" / "inbox").mkdir(parents=True, exist_ok=True)
    (store / "areas/inbox/short.html").write_text(memory_html(), encoding="utf-8")
    assert not (REPO / "areas").exists()
    for argv in (
        ("--store", str(store), "--json", "check", "areas/"),
        ("--json", "check", "areas/", "--store", str(store)),
        ("--json", "check", f"--store={store}", "areas/"),
    ):
        done = headctl(*argv)
        assert done.returncode == 0, done.stderr
        assert [r["path"] for r in json.loads(done.stdout)] == ["areas/inbox/short.html"]
    done = headctl("check", str(store))
    assert done.returncode == 0 and done.stdout == "ok\tareas/inbox/short.html\n", done.stdout
    done = headctl("check", "areas/inbox/none.html", "--store", str(store))
    assert done.returncode == 1 and done.stdout == "not found\tareas/inbox/none.html\n"
    assert one_failure_line(done, "ERR_PATH_NOT_FOUND") == "1 of 1 path(s) not found"


# -- no store, no daemon ------------------------------------------------------------------


def test_no_store_and_no_daemon_say_what_to_run(tmp_path: Path) -> None:
    nowhere = str(short_socket_dir() / "none.sock")
    missing = tmp_path / "missing"
    done = headctl("--store", str(missing), "--socket", nowhere, "status")
    assert done.returncode == 1
    message = one_failure_line(done, "ERR_DAEMON_UNAVAILABLE")
    assert f"headctl init {missing}" in message
    store = tmp_path / "store"
    make_store(store)
    done = headctl("--store", str(store), "--socket", nowhere, "status")
    message = one_failure_line(done, "ERR_DAEMON_UNAVAILABLE")
    assert f"headd --store {store}" in message and nowhere in message
    empty = tmp_path / "empty"
    pygit2.init_repository(str(empty))
    done = headctl("--store", str(empty), "--socket", nowhere, "status")
    assert "has no commit yet" in one_failure_line(done, "ERR_DAEMON_UNAVAILABLE")


def test_init_lays_a_store_out_as_memhtml_does_and_a_daemon_serves_it(tmp_path: Path) -> None:
    store = tmp_path / "new"
    created = json.loads(headctl("--json", "init", str(store)).stdout)
    repo = pygit2.Repository(str(store))
    assert str(repo.head.peel(pygit2.Commit).tree_id) == MEMHTML_INIT_TREE
    assert repo.head.shorthand == "main" and created["sha"] == str(repo.head.target)
    again = headctl("init", str(store))
    assert again.returncode == 1
    assert "not empty" in one_failure_line(again, "ERR_STORAGE")
    daemon = Daemon(store, short_socket_dir() / "head.sock").wait_ready()
    try:
        done = headctl(
            "--store", str(store), "--socket", str(daemon.socket_path), "--json", "status"
        )
        status = json.loads(done.stdout)
        assert status["sha"] == created["sha"]
        assert status["skipped"] == 0, "the README.html init writes is no broken memory"
    finally:
        assert daemon.stop() == 0, daemon.log()


# -- streams ------------------------------------------------------------------------------


def test_a_closed_pipe_is_one_line_not_a_traceback(sh: Shell) -> None:
    proc = subprocess.Popen(
        [PYTHON, "-m", "headd_client.headctl", "status", "--verbose"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **sh.env},
        cwd=str(REPO),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before headctl writes, as with `| head -0`
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1
    assert err.count("\n") == 1 and err.startswith("ERR_OUTPUT_CLOSED: ")
    assert "Traceback" not in err


def test_auto_without_the_embed_extra_says_vectors_are_off_and_why(
    tmp_path: Path,
) -> None:
    """A ``sitecustomize`` hides the extra's modules, as a plain ``pip install headd`` has it."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'onnxruntime', 'onnx', 'ml_dtypes'}:\n"
        "            raise ModuleNotFoundError(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Hide())\n",
        encoding="utf-8",
    )
    store = tmp_path / "store"
    make_store(store)
    env = {"PYTHONPATH": str(hide)}
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "auto"], env=env)
    try:
        daemon.wait_ready()
        done = headctl(
            "--store", str(store), "--socket", str(daemon.socket_path), "--json", "status"
        )
        state = json.loads(done.stdout)["embedder_state"]
        assert state["state"] == "off" and state["reason"] == "the embed extra is not installed"
        # The hint fits this install: an editable one from the checkout, not a second headd.
        assert f"-m pip install -e '{REPO}[embed]'" in daemon.log()
    finally:
        assert daemon.stop() == 0, daemon.log()
    lines = [line for line in daemon.log().splitlines() if "vectors off" in line]
    assert len(lines) == 1 and "embed extra" in lines[0] and "degraded" in lines[0]
