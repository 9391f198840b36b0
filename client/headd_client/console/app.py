"""The console's pages: Starlette routes, each one a few daemon calls rendered by a Jinja2 template.

Routes stay thin: a page asks the daemon (through one ``DaemonLink``, held under a lock because
a request's handlers run on a thread pool and a client carries one request at a time), reads git
history where it needs it (``git_history.py``), and hands the wire's typed answers (the client's
typed calls, ``headd_client.calls``) to its template. Every page
takes ``at=<sha>`` and passes it on in its links, so time travel is one parameter, answered by the
daemon's own ``at``. Changes are POST forms checked for CSRF, each one a daemon session or
method (``actions.py``), and answer with a redirect (post, redirect, get).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TypedDict, TypeVar
from urllib.parse import urlencode

import msgspec
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from headd.errors import DaemonUnavailable, HeaddError, MethodNotFound, RpcError
from headd.head.tokens import tokenize
from headd.store import history as git_history
from headd.wire.answers import SearchAnswer, SearchHit, SleepReviewAnswer, WireRecord
from headd.wire.filter import Filter
from headd_client import calls
from headd_client.calls import Call
from headd_client.console import actions
from headd_client.console.sanitize import safe_body
from headd_client.console.security import Guard, Secret, check_csrf
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.tools import Tools

FILTER_FIELDS = ("type", "workspace", "tag", "entity")
SEARCH_LIMIT = 20
GATE_PROBES = 50
T = TypeVar("T")


@dataclass(frozen=True)
class HitView:
    """One search hit as the page shows it: the wire's hit, and why it ranked as a person reads
    it (the query's words its title, claim, body or tags hold, beside the arms that found it)."""

    path: str
    title: str
    claim: str
    score: float
    arms: list[str]
    matched: list[str]
    #: The score split by arm (``lexical``, ``vector``), as the daemon's ``explain`` answers it.
    why: dict[str, float]
    type: str | None
    date: str | None
    archived: bool

    @property
    def vector_share(self) -> float:
        """The part of the score the vector arm gave, 0 to 1."""
        return self.why.get("vector", 0.0) / self.score if self.score > 0 else 0.0

    @classmethod
    def of(cls, hit: SearchHit, words: set[str]) -> HitView:
        record = hit.record if isinstance(hit.record, WireRecord) else None
        text = ""
        if record is not None:
            text = " ".join((record.title, record.claim, record.body_text, *record.tags))
        return cls(
            path=hit.path,
            title=hit.title,
            claim=hit.claim,
            score=hit.score,
            arms=list(hit.arms),
            matched=sorted(words & set(tokenize(text))),
            why=dict(hit.why) if isinstance(hit.why, dict) else {},
            type=record.memory_type if record else None,
            date=(record.event_at or record.updated_at) if record else None,
            archived=record.archived if record else False,
        )


@dataclass
class Console:
    """What every page reads: the store, the daemon link and the secret."""

    store: Path
    link: DaemonLink
    secret: Secret
    lock: threading.Lock
    local: threading.local = field(default_factory=threading.local)

    @contextmanager
    def daemon(self) -> Iterator[DaemonLink]:
        with self.lock:
            yield self.link

    def repo(self) -> git_history.Repository:
        """The store's repository, opened once per worker thread (a pygit2 Repository is not
        shared between threads); it sees new commits as they land."""
        repo = getattr(self.local, "repo", None)
        if repo is None:
            repo = self.local.repo = git_history.open_repo(self.store)
        return repo


class PageError(Exception):
    """A page that cannot be shown as asked (a bad ``at``, a missing memory): 404 or 400."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _environment() -> Environment:
    folder = resources.files("headd_client.console").joinpath("templates")
    env = Environment(
        loader=FileSystemLoader(str(folder)),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["link"] = _link
    env.filters["count_of"] = lambda value: len(value) if isinstance(value, list | tuple) else value
    env.filters["mb"] = lambda value: "–" if value is None else f"{value / 1e6:.1f} MB"
    return env


def _link(route: str, /, **params: object) -> str:
    """``route`` with the given query parameters, those without a value left out."""
    kept = {k: v for k, v in params.items() if v not in (None, "", False)}
    return route + (f"?{urlencode(kept)}" if kept else "")


class Pages:
    """The handlers, over one :class:`Console`."""

    def __init__(self, console: Console) -> None:
        self.c = console
        self.env = _environment()
        self.tools = Tools(console.link, console.store)

    # -- shared ---------------------------------------------------------------------------

    def render(self, request: Request, name: str, code: int = 200, **context: object) -> Response:
        context.setdefault("at", None)
        context.setdefault("at_commit", None)
        context.setdefault("path", None)
        context.setdefault("q", None)
        context.setdefault("notice", request.query_params.get("notice"))
        context["csrf"] = self.c.secret.csrf
        context["page"] = name
        html = self.env.get_template(f"{name}.html").render(**context)
        return HTMLResponse(html, status_code=code)

    def at_of(self, request: Request) -> tuple[str | None, git_history.Commit | None]:
        """The commit ``at`` names (its full sha and its description), or (None, None)."""
        raw = request.query_params.get("at") or None
        if raw is None:
            return None, None
        if not git_history.is_revision(raw):
            raise PageError(400, "at must be a commit's sha")
        try:
            commit = git_history.commit_of(self.c.repo(), raw)
        except git_history.BadRevision as exc:
            raise PageError(404, str(exc)) from None
        return str(commit.id), git_history.describe(commit)

    def call(self, method: str, **params: object) -> object:
        """A method with no typed call (``gate``): its answer as decoded JSON."""
        with self.c.daemon() as link:
            return link.call(method, params)

    def run(self, call: Call[T]) -> T:
        """A typed read (``headd_client.calls``), decoded into the wire's answer type; a dropped
        connection is remade once, as the link does for its own reads."""
        with self.c.daemon() as link:
            try:
                return link.client().run(call)
            except DaemonUnavailable:
                link.close()
                return link.client().run(call)

    def guarded(self, handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def run(request: Request) -> Response:
            try:
                return handler(request)
            except PageError as exc:
                return self.render(request, "error", exc.status, message=exc.message)
            except (HeaddError, RpcError) as exc:
                failure = actions.failed(exc)
                return self.render(request, "error", 502, message=str(failure))

        return run

    # -- search ---------------------------------------------------------------------------

    def search(self, request: Request) -> Response:
        at, at_commit = self.at_of(request)
        q = request.query_params.get("q", "").strip()
        form = {name: request.query_params.get(name, "").strip() for name in FILTER_FIELDS}
        archived = request.query_params.get("archived") == "on"
        hits: list[HitView] = []
        answer: SearchAnswer | None = None
        if q:
            flt = Filter(
                types=[form["type"]] if form["type"] else None,
                tags=[form["tag"]] if form["tag"] else None,
                workspace=form["workspace"] or None,
                entity=form["entity"] or None,
                include_archived=archived,
            )
            answer = self.run(
                calls.search(q, limit=SEARCH_LIMIT, at=at, filter=flt, records=True, explain=True)
            )
            words = set(tokenize(q))
            hits = [HitView.of(hit, words) for hit in answer.hits]
        return self.render(
            request,
            "search",
            at=at,
            at_commit=at_commit,
            q=q,
            form=form,
            archived=archived,
            hits=hits,
            answer=answer,
        )

    # -- one memory -----------------------------------------------------------------------

    def memory(self, request: Request) -> Response:
        at, at_commit = self.at_of(request)
        path = request.query_params.get("path", "").strip().lstrip("/")
        if not path:
            raise PageError(400, "which memory? (path=…)")
        record = self.run(calls.read(path, at=at)).record
        if record is None:
            raise PageError(404, f"no memory at {path} in this commit")
        resolved = self.run(calls.resolve(path, at=at))
        inbound = self.run(calls.inbound("/" + path, at=at)).paths
        repo = self.c.repo()
        html = git_history.blob_at(repo, record.blob_sha)
        chain = [p for p in resolved.chain if p != path]
        predecessors = [link.href.lstrip("/") for link in record.links if link.rel == "supersedes"]
        return self.render(
            request,
            "memory",
            at=at,
            at_commit=at_commit,
            path=path,
            record=record,
            body=safe_body(html),
            successor=resolved.path if resolved.path != path else None,
            chain=chain,
            predecessors=predecessors,
            inbound=inbound,
            usage=self.usage(path),
        )

    def usage(self, path: str) -> dict[str, object] | None:
        """The memory's usage row from the daemon's state plane (None when it has none)."""
        usage = self.run(calls.state_usage(path)).usage
        return None if usage is None else msgspec.structs.asdict(usage)

    # -- history --------------------------------------------------------------------------

    def history(self, request: Request) -> Response:
        at, at_commit = self.at_of(request)
        path = request.query_params.get("path", "").strip().lstrip("/")
        if not path:
            raise PageError(400, "which memory? (path=…)")
        repo = self.c.repo()
        tip = git_history.commit_of(repo, at) if at else self.tip(repo)
        versions = git_history.file_history(repo, tip, path)
        return self.render(
            request, "history", at=at, at_commit=at_commit, path=path, versions=versions
        )

    def tip(self, repo: git_history.Repository) -> git_history.GitCommit:
        return git_history.commit_of(repo, str(self.run(calls.status()).sha))

    # -- activity -------------------------------------------------------------------------

    def activity(self, request: Request) -> Response:
        at, at_commit = self.at_of(request)
        repo = self.c.repo()
        tip = git_history.commit_of(repo, at) if at else self.tip(repo)
        days = git_history.activity(tip)
        return self.render(request, "activity", at=at, at_commit=at_commit, days=days)

    # -- review ---------------------------------------------------------------------------

    def phases(self, run: git_history.SleepRun) -> Phases:
        """The run's per-phase counts from the daemon's ``sleep.review`` and whether it says the
        run is merged (a replayed merge leaves the branch's tip off main, so ancestry alone
        cannot tell), or why there are no counts (a daemon without sleep methods, or a run it
        does not recognise)."""
        try:
            review = msgspec.convert(self.call("sleep.review", run=run.run_id), SleepReviewAnswer)
        except MethodNotFound:
            return {"note": "this daemon does not offer sleep.review: no per-phase counts"}
        except (HeaddError, RpcError) as exc:
            return {"note": f"sleep.review refused the run: {actions.failed(exc)}"}
        counts = dict(review.phases)
        merged = review.merged
        if not counts:
            return {"note": "sleep.review found no phase recorded on this run", "merged": merged}
        return {"counts": counts, "merged": merged}

    def review(self, request: Request) -> Response:
        repo = self.c.repo()
        status = self.run(calls.status())
        skipped = self.run(calls.skipped()).files
        tip = git_history.commit_of(repo, str(status.sha))
        runs = []
        for run in git_history.sleep_runs(repo, tip):
            phases = self.phases(run)
            if phases.get("merged"):
                continue  # landed by a replay: on main, nothing waits for review
            gate: object = None
            if run.base is not None:
                try:
                    gate = self.call("gate", base=run.base, landed=run.tip, probes=GATE_PROBES)
                except (HeaddError, RpcError) as exc:
                    gate = {"error": str(actions.failed(exc))}
            runs.append({"run": run, "gate": gate, "fell": _fell(gate), "phases": phases})
        remote = msgspec.to_builtins(status.remote)
        return self.render(
            request,
            "review",
            runs=runs,
            status=status,
            last_sleep=status.last_sleep,
            skipped=skipped,
            remote=remote,
            conflicts=_conflicts(remote),
        )

    # -- actions --------------------------------------------------------------------------

    async def form(self, request: Request) -> dict[str, str]:
        data = await request.form()
        fields = {k: v for k, v in data.items() if isinstance(v, str)}
        if not check_csrf(self.c.secret, fields.get("csrf")):
            raise PageError(403, "this form is stale or not the console's own; reload the page")
        return fields

    async def post(self, request: Request) -> Response:
        try:
            fields = await self.form(request)
        except PageError as exc:
            return self.render(request, "error", exc.status, message=exc.message)
        action = request.path_params["action"]
        try:
            with self.c.daemon():
                target = self.act(action, fields)
        except actions.ActionFailed as exc:
            return self.render(request, "error", 409, message=f"{exc.code}: {exc.message}")
        except PageError as exc:
            return self.render(request, "error", exc.status, message=exc.message)
        return RedirectResponse(target, status_code=303)

    def act(self, action: str, fields: dict[str, str]) -> str:
        path = fields.get("path", "").strip().lstrip("/")
        match action:
            case "archive":
                done = actions.archive(self.tools, path, fields.get("reason", "").strip())
                return _link("/memory", path=done.path, notice=f"archived as {done.path}")
            case "correct":
                if not fields.get("claim", "").strip():
                    raise PageError(400, "a correction needs the new claim")
                done = actions.correct(
                    self.tools,
                    path,
                    fields.get("title", ""),
                    fields.get("claim", ""),
                    fields.get("body", ""),
                    fields.get("reason", "").strip(),
                )
                return _link("/memory", path=done.path, notice="corrected")
            case "resolve":
                actions.resolve_conflict(self.c.link, fields.get("conflict", ""))
                return _link("/review", notice="conflict resolved")
            case "merge" | "discard":
                actions.decide_sleep_run(self.c.link, fields.get("run", ""), action)
                verb = "merged" if action == "merge" else "discarded"
                return _link("/review", notice=f"sleep run {verb}")
        raise PageError(404, f"no action {action}")

    def stylesheet(self, _request: Request) -> Response:
        css = resources.files("headd_client.console").joinpath("static/console.css")
        return Response(css.read_text("utf-8"), media_type="text/css")


class Phases(TypedDict, total=False):
    """A run's phases on the review page: the per-phase counts and whether the daemon says the
    run is merged, or a note saying why there are no counts."""

    counts: dict[str, dict[str, int]]
    merged: bool
    note: str


def _fell(gate: object) -> list[Mapping[object, object]]:
    """The probes the landed commit ranks worse than the base (lost or lower)."""
    rows = gate.get("results") if isinstance(gate, Mapping) else None
    if not isinstance(rows, list):
        return []
    fell = []
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        before, after = row.get("rank_before"), row.get("rank_after")
        if isinstance(before, int) and (
            after is None or (isinstance(after, int) and after > before)
        ):
            fell.append(row)
    return fell


def _conflicts(remote: Mapping[str, object] | None) -> list[Mapping[str, object]]:
    found = remote.get("conflicts") if isinstance(remote, Mapping) else None
    if not isinstance(found, list):
        return []
    return [c if isinstance(c, dict) else {"id": str(c)} for c in found]


def build_app(console: Console) -> Guard:
    pages = Pages(console)
    g = pages.guarded
    routes = [
        Route("/", g(pages.search), methods=["GET"]),
        Route("/memory", g(pages.memory), methods=["GET"]),
        Route("/history", g(pages.history), methods=["GET"]),
        Route("/activity", g(pages.activity), methods=["GET"]),
        Route("/review", g(pages.review), methods=["GET"]),
        Route("/static/console.css", pages.stylesheet, methods=["GET"]),
        Route("/do/{action}", pages.post, methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), console.secret)
