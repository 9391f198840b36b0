"""``headctl integrations install|uninstall|doctor``: write, remove and check the pieces.

``install`` applies each piece (``clients.pieces_for``) to its file and records a receipt under
``~/.config/headd/integrations/``: every file touched, the piece's role and the sha256 of the
fragment as written, and whether the file existed before. Installing again rewrites the same
bytes. ``uninstall`` removes exactly the recorded fragments: a fragment whose digest no longer
matches (a person edited it) is kept and reported, and a file is deleted only when install created
it and nothing else is left in it. ``--dry-run`` prints each change and writes nothing.
``doctor`` reports each recorded piece (present, unchanged) and whether the daemon and the MCP
server answer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO, TypedDict

import msgspec

from headd_client.integrations.clients import headctl_command, pieces_for
from headd_client.integrations.pieces import ClaudeHooks, Piece
from headd_client.store_check import store_problem

RECEIPT_VERSION = 1


class ReceiptEntry(TypedDict):
    """One piece as the receipt records it: where, which role, and the fragment's digest."""

    path: str
    role: str
    kind: str
    sha256: str
    created: bool


class Receipt(TypedDict):
    """What ``install`` leaves under ``~/.config/headd/integrations/``, for ``uninstall``."""

    version: int
    client: str
    scope: str
    root: str
    store: str
    installed_at: str
    entries: list[ReceiptEntry]


class InstalledEntry(ReceiptEntry):
    action: str


class InstallReport(TypedDict):
    warnings: list[str]
    action: str
    client: str
    scope: str
    root: str
    store: str
    dry_run: bool
    receipt: str
    entries: list[InstalledEntry]


class RemovedEntry(TypedDict):
    path: str
    role: str
    action: str


class UninstallReport(TypedDict, total=False):
    action: str
    client: str
    scope: str
    dry_run: bool
    entries: list[RemovedEntry]
    installed: bool


class Check(TypedDict):
    name: str
    ok: bool
    detail: str


class DoctorReport(TypedDict):
    healthy: bool
    checks: list[Check]


def home_of(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or str(Path.home())).expanduser()


def project_root(explicit: str | None) -> Path:
    """``--project-root``, else the git work tree holding the current directory, else cwd."""
    start = Path(explicit).expanduser().absolute() if explicit else Path.cwd()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def receipt_path(home: Path, client: str, scope: str, root: Path) -> Path:
    tag = (
        "user"
        if scope == "user"
        else "project-" + hashlib.sha256(str(root).encode()).hexdigest()[:12]
    )
    return home / ".config" / "headd" / "integrations" / f"{client}-{tag}.json"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str | None) -> None:
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".headd-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def install(
    client: str, scope: str, home: Path, root: Path, store: Path, *, dry_run: bool, out: TextIO
) -> InstallReport:
    receipt_file = receipt_path(home, client, scope, root)
    previous = _load_receipt(receipt_file)
    created_before = {e["path"] for e in previous["entries"] if e["created"]} if previous else set()
    entries: list[InstalledEntry] = []
    for piece in pieces_for(client, scope, home, root, store, headctl_command()):
        before = _read(piece.path)
        after = piece.apply(before)
        action = "unchanged" if after == before else ("created" if before is None else "updated")
        entries.append(
            {
                "path": str(piece.path),
                "role": piece.role,
                "kind": piece.kind,
                "sha256": piece.digest(),
                "created": before is None or str(piece.path) in created_before,
                "action": action,
            }
        )
        if dry_run:
            print(f"{action}: {piece.path} ({piece.role})", file=out)
            if action != "unchanged":
                print(after, file=out)
        elif action != "unchanged":
            _write(piece.path, after)
    warnings = []
    if scope == "project":
        warnings.append(
            "the project files written hold absolute paths of this machine (the headctl"
            f" command and the store {store}); keep them out of the team's commits, or"
            " install with --scope user"
        )
    report: InstallReport = {
        "warnings": warnings,
        "action": "install",
        "client": client,
        "scope": scope,
        "root": str(root if scope == "project" else home),
        "store": str(store),
        "dry_run": dry_run,
        "receipt": str(receipt_file),
        "entries": entries,
    }
    if not dry_run:
        receipt: Receipt = {
            "version": RECEIPT_VERSION,
            "client": client,
            "scope": scope,
            "root": str(root),
            "store": str(store),
            "installed_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "entries": [
                {
                    "path": e["path"],
                    "role": e["role"],
                    "kind": e["kind"],
                    "sha256": e["sha256"],
                    "created": e["created"],
                }
                for e in entries
            ],
        }
        if previous is not None and _same_entries(previous, receipt):
            receipt["installed_at"] = previous["installed_at"]
        _write(receipt_file, json.dumps(receipt, indent=2) + "\n")
    return report


def _same_entries(a: Receipt, b: Receipt) -> bool:
    return a["entries"] == b["entries"] and a["store"] == b["store"]


def _load_receipt(path: Path) -> Receipt | None:
    """The receipt at ``path``; None when there is none, or it is not a receipt this version
    reads (a file edited by hand, a torn write)."""
    text = _read(path)
    if text is None:
        return None
    try:
        return msgspec.json.decode(text, type=Receipt)
    except msgspec.DecodeError:  # ValidationError included
        return None


def uninstall(
    client: str, scope: str, home: Path, root: Path, *, dry_run: bool, out: TextIO
) -> UninstallReport:
    receipt_file = receipt_path(home, client, scope, root)
    receipt = _load_receipt(receipt_file)
    if receipt is None:
        return {
            "action": "uninstall",
            "client": client,
            "scope": scope,
            "entries": [],
            "installed": False,
        }
    store = Path(receipt["store"])
    recorded = {(e["path"], e["role"]): e for e in receipt["entries"]}
    pieces = pieces_for(client, scope, home, Path(receipt["root"]), store, headctl_command())
    entries: list[RemovedEntry] = []
    for piece in pieces:
        entry = recorded.get((str(piece.path), piece.role))
        if entry is None:
            continue
        before = _read(piece.path)
        current = piece.current_digest(before) if before is not None else None
        if current is None and _strays(piece, before):
            action, after = "removed", piece.remove(before)  # hooks an earlier install left
            if after is None and not entry["created"]:
                after = "{}\n"
        elif current is None:
            action, after = "absent", before
        elif current != entry["sha256"]:
            action, after = "kept-modified", before
        else:
            after = piece.remove(before)
            if after is None and not entry["created"]:
                # the file was there before us: leave it, emptied of our fragment
                after = "{}\n" if piece.path.suffix == ".json" else ""
            action = "removed"
        entries.append({"path": str(piece.path), "role": piece.role, "action": action})
        if dry_run:
            print(f"{action}: {piece.path} ({piece.role})", file=out)
        elif action == "removed":
            _write(piece.path, after)
    if not dry_run:
        receipt_file.unlink(missing_ok=True)
    return {
        "action": "uninstall",
        "client": client,
        "scope": scope,
        "dry_run": dry_run,
        "entries": entries,
        "installed": True,
    }


def doctor(
    clients: list[str], scopes: list[str], home: Path, root: Path, socket_path: Path
) -> DoctorReport:
    """Each installed piece: present and unchanged; the daemon and the MCP server answering."""
    from headd.errors import DaemonUnavailable
    from headd_client.sync_client import Client

    checks: list[Check] = []
    try:
        with Client(socket_path, timeout=5.0) as c:
            sha = c.status().sha or ""
        checks.append(
            {"name": "daemon", "ok": True, "detail": f"answers on {socket_path} at {sha[:12]}"}
        )
    except DaemonUnavailable as exc:
        # not a fault: the MCP server starts a daemon on first use
        checks.append(
            {
                "name": "daemon",
                "ok": True,
                "detail": f"not running ({exc.message}); headctl mcp starts one",
            }
        )
    installed = 0
    for client in clients:
        for scope in scopes:
            receipt = _load_receipt(receipt_path(home, client, scope, root))
            if receipt is None:
                continue
            installed += 1
            store = Path(receipt["store"])
            recorded = {(e["path"], e["role"]): e for e in receipt["entries"]}
            for piece in pieces_for(
                client, scope, home, Path(receipt["root"]), store, headctl_command()
            ):
                entry = recorded.get((str(piece.path), piece.role))
                if entry is None:
                    continue
                current = piece.current_digest(_read(piece.path))
                ok = current == entry["sha256"]
                detail = (
                    "matches the receipt"
                    if ok
                    else ("missing" if current is None else "modified since install")
                )
                checks.append(
                    {
                        "name": f"{client}:{scope}:{piece.role}",
                        "ok": ok,
                        "detail": f"{piece.path} {detail}",
                    }
                )
                stray = _strays(piece, _read(piece.path))
                if stray:
                    checks.append(
                        {
                            "name": f"{client}:{scope}:stray-hooks",
                            "ok": False,
                            "detail": f"{piece.path} holds headd hooks this install did not write"
                            f" ({'; '.join(stray)}); `headctl integrations install {client}`"
                            " again replaces them",
                        }
                    )
            problem = store_problem(store)
            checks.append(
                {
                    "name": f"{client}:{scope}:store",
                    "ok": problem is None,
                    "detail": f"{store} is a store" if problem is None else problem,
                }
            )
            checks.append(_mcp_answers(client, scope, store))
    if installed == 0:
        checks.append({"name": "installed", "ok": False, "detail": "no integration is installed"})
    return {"healthy": all(c["ok"] for c in checks), "checks": checks}


def _strays(piece: Piece, text: str | None) -> list[str]:
    """The headd hooks in ``text`` that ``piece`` did not write (only hook pieces have any)."""
    return piece.strays(text) if isinstance(piece, ClaudeHooks) and text is not None else []


def _mcp_answers(client: str, scope: str, store: Path) -> Check:
    """Start the configured MCP command and ask it for its tools."""
    command = [*headctl_command(), "--store", str(store), "mcp", "--no-spawn"]
    from headd_client.mcp.protocol import handshake_lines

    lines = handshake_lines("headctl-doctor")
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            input="".join(json.dumps(m) + "\n" for m in lines),
            capture_output=True,
            text=True,
            timeout=30,
        )
        answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        tools = next(a["result"]["tools"] for a in answers if a.get("id") == 2)
        ms = (time.perf_counter() - started) * 1000
        return {
            "name": f"{client}:{scope}:mcp",
            "ok": len(tools) >= 15,
            "detail": f"{len(tools)} tools in {ms:.0f} ms",
        }
    except Exception as exc:
        return {
            "name": f"{client}:{scope}:mcp",
            "ok": False,
            "detail": f"the MCP server did not answer ({type(exc).__name__})",
        }


def run_integrations(
    args: argparse.Namespace,
    store: Path,
    socket_path: Path,
    environ: Mapping[str, str],
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    home = home_of(environ)
    root = project_root(getattr(args, "project_root", None))
    command = args.integrations_command
    if command == "doctor":
        clients = [args.client] if args.client else ["claude", "codex", "cursor"]
        scopes = [args.scope] if args.scope else ["user", "project"]
        checked = doctor(clients, scopes, home, root, socket_path)
        if args.json:
            stdout.write(json.dumps(checked) + "\n")
        else:
            for check in checked["checks"]:
                print(
                    f"{'ok  ' if check['ok'] else 'FAIL'} {check['name']}: {check['detail']}",
                    file=stdout,
                )
        return 0 if checked["healthy"] else 1
    if args.scope == "project" and root in (Path("/"), home):
        print("ERR_USAGE: a project root may not be / or $HOME", file=stderr)
        return 2
    human = stdout if not args.json else stderr
    report: InstallReport | UninstallReport
    warnings: list[str] = []
    if command == "install":
        report = install(
            args.client, args.scope, home, root, store, dry_run=args.dry_run, out=human
        )
        warnings = report["warnings"]
    else:
        report = uninstall(args.client, args.scope, home, root, dry_run=args.dry_run, out=human)
    if args.json:
        stdout.write(json.dumps(report) + "\n")
    elif not args.dry_run:
        for entry in report["entries"]:
            print(f"{entry['action']}: {entry['path']} ({entry['role']})", file=stdout)
    for warning in warnings:
        print(f"warning: {warning}", file=stderr)
    return 0
