"""``headctl check``: in-process through ``main(argv)`` and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pygit2
import pytest
from support.memory import memory_html

from headd.memfile.check import main
from headd.memfile.parse import parse_memory
from headd.wire.answers import wire_record

VALID = memory_html(article="<p><mark>Checks run before commits.</mark> <span>pasted</span></p>")
INVALID = memory_html(article='<p class="x"><mark>a</mark><mark>b</mark></p>')


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    """A real git work tree with one valid, one invalid and one archived file."""
    root = tmp_path / "store"
    pygit2.init_repository(str(root))
    for rel, text in (
        ("areas/ok.html", VALID),
        ("areas/bad.html", INVALID),
        ("archive/2025/projects/ws/old.html", VALID),
    ):
        file = root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return root


def _run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_reports_paths_relative_to_the_work_tree(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [str(store / "areas/ok.html"), str(store / "archive/2025/projects/ws/old.html")]
    code, out, err = _run_main(["--json", *files], capsys)
    assert code == 0 and err == ""
    results = json.loads(out)
    assert [r["path"] for r in results] == ["areas/ok.html", "archive/2025/projects/ws/old.html"]
    assert all(r["ok"] and r["violations"] == [] for r in results)
    expected = wire_record(parse_memory("areas/ok.html", VALID))
    assert results[0]["record"] == json.loads(msgspec.json.encode(expected))
    assert results[0]["warnings"] == ["<span> outside a <figure>: use a semantic element instead"]
    archived = results[1]["record"]
    assert archived["archived"] is True and archived["origin_path"] == "projects/ws/old.html"


def test_an_invalid_file_exits_1_with_every_violation(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run_main(
        ["--json", str(store / "areas/ok.html"), str(store / "areas/bad.html")], capsys
    )
    assert code == 1
    assert err.strip() == "ERR_INVALID_MEMORY: 1 of 2 file(s) invalid"
    bad = json.loads(out)[1]
    assert bad == {
        "path": "areas/bad.html",
        "ok": False,
        "record": None,
        "violations": [
            "2 <mark> elements: exactly one span is the claim",
            "class attribute on <p>: presentation is not memory",
        ],
        "warnings": [],
    }


def test_root_overrides_the_work_tree(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run_main(
        [
            "--json",
            "--root",
            str(store / "archive/2025"),
            str(store / "archive/2025/projects/ws/old.html"),
        ],
        capsys,
    )
    record = json.loads(out)[0]["record"]
    assert code == 0
    assert record["path"] == "projects/ws/old.html"
    assert record["archived"] is False and record["workspace"] == "ws"


def test_human_output_and_unreadable_files(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run_main(
        [str(store / "areas/bad.html"), str(store / "areas/missing.html")], capsys
    )
    assert code == 1
    assert out.splitlines() == [
        "invalid\tareas/bad.html",
        "  violation: 2 <mark> elements: exactly one span is the claim",
        "  violation: class attribute on <p>: presentation is not memory",
        "not found\tareas/missing.html",
    ]
    assert err.startswith("ERR_INVALID_MEMORY: 1 of 2")


def test_a_missing_path_is_not_found_not_an_invalid_memory(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run_main([str(store / "areas/missing.html")], capsys)
    assert code == 1 and out == "not found\tareas/missing.html\n"
    assert err == "ERR_PATH_NOT_FOUND: 1 of 1 path(s) not found\n"


def test_a_directory_walk_leaves_out_what_is_no_memory(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store's own README.html (``headctl init`` writes one) and index pages are not
    memories: a walk of the store skips them; named on the line, a file is checked."""
    (store / "README.html").write_text("<!doctype html><title>store</title>", encoding="utf-8")
    (store / "areas/index.html").write_text("<!doctype html><title>i</title>", encoding="utf-8")
    (store / "areas/bad.html").unlink()
    code, out, err = _run_main(["--json", str(store)], capsys)
    assert code == 0 and err == ""
    assert [r["path"] for r in json.loads(out)] == [
        "archive/2025/projects/ws/old.html",
        "areas/ok.html",
    ]
    code, _, _ = _run_main([str(store / "README.html")], capsys)
    assert code == 1


@pytest.mark.parametrize("argv", [[], ["--json"], ["--bogus", "x.html"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run_main(argv, capsys)
    assert code == 2 and out == "" and err.startswith("ERR_USAGE: headctl check: ")
    assert err.count("\n") == 1


def test_a_missing_root_is_a_usage_error(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run_main(["--root", str(store / "nope"), str(store / "areas/ok.html")], capsys)
    assert code == 2 and "--root" in err


def test_as_a_real_subprocess(store: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "headd.memfile.check", "--json", "areas/ok.html", "areas/bad.html"],
        cwd=store,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    results = json.loads(run.stdout)
    assert [(r["path"], r["ok"]) for r in results] == [
        ("areas/ok.html", True),
        ("areas/bad.html", False),
    ]
    assert run.stderr.strip() == "ERR_INVALID_MEMORY: 1 of 2 file(s) invalid"
    usage = subprocess.run(
        [sys.executable, "-m", "headd.memfile.check"], capture_output=True, text=True, timeout=60
    )
    assert usage.returncode == 2
    ok = subprocess.run(
        [sys.executable, "-m", "headd.memfile.check", "areas/ok.html"],
        cwd=store,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0 and ok.stdout.startswith("ok\tareas/ok.html")


def test_the_anchor_corpus_checks_as_the_tool_indexed_it(
    anchor_store: Path, anchor_goldens: dict[str, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    paths = sorted(anchor_goldens)[:40]
    code, out, _ = _run_main(["--json", *(str(anchor_store / p) for p in paths)], capsys)
    assert code == 0
    results = json.loads(out)
    assert [r["path"] for r in results] == paths
    for result in results:
        golden = anchor_goldens[result["path"]]
        assert result["record"]["content_hash"] == golden["content_hash"]
        assert result["record"]["blob_sha"] == golden["blob_sha"]
