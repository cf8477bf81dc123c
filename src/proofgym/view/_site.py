"""The viewer's pages, rendered from a trace store: the same code serves them and exports them to files."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import quote, urlencode

import jinja2

from proofgym.traces import SESSION_STATUSES, SessionTrace, TraceStore, TraceStoreError
from proofgym.view._evidence import breakdowns, frames, group_of, panels
from proofgym.view._markup import attribute, visible
from proofgym.view._runs import RunFolder, find_run_folders

PAGE_SIZE = 50
MAX_TEXT = 20_000  # characters of one stored text shown before "... N more characters"
MAX_GROUP_SESSIONS = 512
#: The sessions page's query parameters: name -> (kind, what the filter is).
SESSION_FILTERS: dict[str, str] = {
    "run": "text", "outcome": "text", "status": "text", "seed": "int", "task": "text",
    "min_reward": "float", "max_reward": "float", "min_score": "float", "max_score": "float",
    "order": "text", "page": "int", "cid": "text",
}
ORDERS = {"started": "oldest first", "-started": "newest first", "-reward": "highest reward",
          "reward": "lowest reward", "-score": "highest judge / outcome score", "score": "lowest score"}


_NO_SESSIONS: dict[str, Any] = {"n_sessions": 0, "by_status": {}, "by_outcome": {}, "reward": None}


class ViewError(ValueError):
    """A request the viewer cannot answer: ``status`` is the HTTP status (400 bad parameter, 404 not found)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Links:
    """Where each page is: absolute paths on the server; ``export=True``: file names relative to the bundle."""

    def __init__(self, *, export: bool = False, depth: int = 0) -> None:
        self.export = export
        self._up = "../" * depth

    def runs(self) -> str:
        return self._up + "index.html" if self.export else "/"

    def run(self, run_id: str) -> str:
        return self._up + "index.html" if self.export else _id_path("runs", run_id)

    def sessions(self, **params: Any) -> str:
        params = {k: v for k, v in params.items() if v is not None and v != ""}
        if self.export:
            return self._up + f"sessions/page-{int(params.get('page', 1))}.html"
        return "/sessions" + ("?" + urlencode(params) if params else "")

    def session(self, session_id: str) -> str:
        if self.export:
            return self._up + f"s/{file_name(session_id)}.html"
        return _id_path("sessions", session_id)

    def group(self, session_id: str) -> str | None:
        return None if self.export else _id_path("groups", session_id)

    def compare(self, a: str, b: str | None = None) -> str | None:
        if self.export:
            return None
        return "/compare?" + urlencode({"a": a, **({"b": b} if b else {})})

    def static(self, name: str) -> str:
        return self._up + f"static/{name}" if self.export else f"/static/{name}"


#: Path segments a browser takes for a step up or in place, percent-encoded or not (the URL standard's
#: "single-dot" and "double-dot" segments): an id that is one of them travels in the query instead.
_DOT_SEGMENTS = frozenset({".", ".."})


def _segment(value: str) -> str:
    """``value`` as one path segment: every character but letters, digits and ``-_~`` percent-encoded, dots too."""
    return quote(value, safe="", errors="surrogatepass").replace(".", "%2E")


def _id_path(route: str, value: str) -> str:
    """The path of ``/route/<id>``; an id a browser would resolve as ``.`` or ``..`` goes as ``/route/?id=...``
    (``/sessions/%2E%2E`` is ``/`` to a browser), which the route reads the same."""
    if value in _DOT_SEGMENTS:
        return f"/{route}/?id={_segment(value)}"
    return f"/{route}/{_segment(value)}"


def file_name(session_id: str) -> str:
    """A file name for a session id that is safe on any file system (the id itself may hold anything)."""
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]


@dataclass
class Text:
    """A stored value shown as text: ``shown`` (at most ``MAX_TEXT`` characters) and how many were left out."""

    shown: str
    omitted: int


def as_text(value: Any, indent: int | None = 2) -> Text:
    """Any stored value as text: strings as they are, anything else as JSON (indented by default); capped at
    ``MAX_TEXT``."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, indent=indent, ensure_ascii=False, default=repr, allow_nan=True)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return Text(text[:MAX_TEXT], max(0, len(text) - MAX_TEXT))


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:+.{digits}f}" if value else f"{0:.{digits}f}"
    if isinstance(value, (Mapping, list, tuple)):
        return as_text(value, indent=None).shown
    return str(value)


def _environment() -> jinja2.Environment:
    # finalize: every printed expression is escaped and shows its control characters (see _markup).
    env = jinja2.Environment(loader=jinja2.PackageLoader("proofgym.view", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, finalize=visible)
    env.filters["num"] = _fmt
    env.filters["text"] = as_text
    env.filters["attribute"] = attribute
    return env


def _parse(params: Mapping[str, str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for name, value in params.items():
        if name not in SESSION_FILTERS:
            raise ViewError(f"query parameter {name!r} is not known; expected one of {', '.join(SESSION_FILTERS)}")
        value = value.strip()
        if value == "":
            continue
        kind = SESSION_FILTERS[name]
        try:
            parsed[name] = int(value) if kind == "int" else float(value) if kind == "float" else value
        except ValueError:
            raise ViewError(f"query parameter {name!r} must be {'an integer' if kind == 'int' else 'a number'}, "
                            f"got {value[:80]!r}") from None
        if kind == "float" and not math.isfinite(parsed[name]):
            raise ViewError(f"query parameter {name!r} must be a finite number, got {value[:80]!r}")
    if parsed.get("status") is not None and parsed["status"] not in SESSION_STATUSES:
        raise ViewError(f"query parameter 'status' must be one of {', '.join(SESSION_STATUSES)}, "
                        f"got {parsed['status'][:80]!r}")
    if parsed.get("order", "started") not in ORDERS:
        raise ViewError(f"query parameter 'order' must be one of {', '.join(ORDERS)}, got {parsed['order'][:80]!r}")
    if parsed.get("page", 1) < 1:
        raise ViewError(f"query parameter 'page' must be 1 or more, got {parsed['page']}")
    return parsed


class Site:
    """Renders every page of the viewer from ``store`` (and the run folders found under ``run_dirs``)."""

    def __init__(self, store: TraceStore, run_dirs: Iterable[Path] = ()) -> None:
        self.store = store
        self.run_dirs = [Path(p) for p in run_dirs]
        self._env = _environment()

    def render(self, template: str, links: Links, **context: Any) -> str:
        return self._env.get_template(template).render(links=links, orders=ORDERS, **context)

    def _folders(self) -> dict[str, RunFolder]:
        return find_run_folders(self.run_dirs)

    # -- pages ------------------------------------------------------------------------------------------------

    def runs_page(self, links: Links) -> str:
        """Every run: kind, env, policy or model, counts by status and outcome, reward statistics."""
        stats = self.store.run_statistics()
        runs = [(run, stats.get(run.run_id, _NO_SESSIONS), _policy(run.config))
                for run in reversed(self.store.list_runs(counts=False))]
        return self.render("runs.html", links, title="runs", runs=runs, store_url=self.store.url)

    def run_page(self, links: Links, run_id: str) -> str:
        """One run: its config and summary, charts (metrics.csv), and its best and worst sessions."""
        run = next((r for r in self.store.list_runs(counts=False) if r.run_id == run_id), None)
        if run is None:
            raise ViewError(f"run {run_id[:200]!r} is not in {self.store.url}", 404)
        stats = self.store.run_statistics(run_id).get(run_id, _NO_SESSIONS)
        folder = self._folders().get(run_id)
        charts = folder.charts() if folder else []
        best = self.store.list_sessions(run_id=run_id, order="-reward", limit=10)
        worst = self.store.list_sessions(run_id=run_id, order="reward", limit=10)
        return self.render("run.html", links, title=f"run {run_id}", run=run, stats=stats, charts=charts,
                           folder=folder, best=best, worst=worst, policy=_policy(run.config))

    def sessions_page(self, links: Links, params: Mapping[str, str]) -> str:
        """Sessions filtered and sorted by the query parameters (``SESSION_FILTERS``), ``PAGE_SIZE`` a page."""
        q = _parse(params)
        if q.get("cid"):
            found = self.store.find_by_correlation_id(q["cid"])
            rows, total = [_summary(s) for s in found[:PAGE_SIZE]], len(found)
        else:
            filters = {"run_id": q.get("run"), "outcome": q.get("outcome"), "status": q.get("status"),
                       "seed": q.get("seed"), "task_id": q.get("task"), "min_reward": q.get("min_reward"),
                       "max_reward": q.get("max_reward"), "min_score": q.get("min_score"),
                       "max_score": q.get("max_score")}
            filters = {k: v for k, v in filters.items() if v is not None}
            try:
                total = self.store.count_sessions(**filters)
                rows = self.store.list_sessions(**filters, order=q.get("order", "started"), limit=PAGE_SIZE,
                                                offset=(q.get("page", 1) - 1) * PAGE_SIZE)
            except TraceStoreError as exc:
                raise ViewError(str(exc)) from None
        page = q.get("page", 1)
        pages = max(1, -(-total // PAGE_SIZE))
        shown = {k: params.get(k, "") for k in SESSION_FILTERS if k != "page"}
        return self.render("sessions.html", links, title="sessions", rows=rows, total=total, page=page,
                           pages=pages, query=shown, run_ids=[r.run_id for r in self.store.list_runs(counts=False)],
                           statuses=SESSION_STATUSES)

    def session_page(self, links: Links, session_id: str) -> str:
        """Every step of one session, then its verdicts and the "why" panel, and the reward arithmetic."""
        return self.render_session(links, self._session(session_id))

    def render_session(self, links: Links, session: SessionTrace) -> str:
        """The session page of a loaded session."""
        return self.render("session.html", links, title=f"session {session.session_id}", s=session,
                           panels=panels(session), breakdowns=breakdowns(session), frames=frames,
                           group=group_of(session))

    def group_page(self, links: Links, session_id: str) -> str:
        """One GRPO group side by side: the samples of one prompt with their rewards and advantages."""
        session = self._session(session_id)
        key = group_of(session)
        if key is None:
            raise ViewError(f"session {session_id[:200]!r} is not a GRPO rollout (its step info has no group)", 404)
        # The samples of one training step share an id prefix; they are read together, not one by one.
        prefix = session.session_id.rsplit("-", 1)[0] + "-"
        step = self.store.list_sessions(run_id=session.run_id, id_prefix=prefix, limit=MAX_GROUP_SESSIONS)
        members = [m for m in self.store.get_sessions([s.session_id for s in step]) if group_of(m) == key]
        rewards = [m.total_reward for m in members]
        return self.render("group.html", links, title=f"group {key[1]} of step {key[0]}", s=session, key=key,
                           members=members, flat=len(set(rewards)) <= 1)

    def compare_page(self, links: Links, a: str, b: str | None) -> str:
        """Two sessions step by step; without ``b``, the other sessions of the same seed to pick from."""
        left = self._session(a)
        right = self._session(b) if b else None
        candidates = []
        if right is None and left.seed is not None:
            candidates = [s for s in self.store.list_sessions(seed=left.seed, limit=PAGE_SIZE)
                          if s.session_id != left.session_id]
        pairs = []
        if right is not None:
            for i in range(max(len(left.steps), len(right.steps))):
                pairs.append((left.steps[i] if i < len(left.steps) else None,
                              right.steps[i] if i < len(right.steps) else None))
        return self.render("compare.html", links, title="compare", a=left, b=right, pairs=pairs,
                           candidates=candidates)

    def error_page(self, links: Links, message: str, status: int) -> str:
        return self.render("error.html", links, title=f"error {status}", message=message, status=status)

    def _session(self, session_id: str) -> SessionTrace:
        session: SessionTrace | None = self.store.get_session(session_id)
        if session is None:
            raise ViewError(f"session {session_id[:200]!r} is not in {self.store.url}", 404)
        return session


def _policy(config: Mapping[str, Any]) -> str | None:
    """The policy or model a run's config names."""
    policy = config.get("policy_config") if isinstance(config, Mapping) else None
    for value in (config.get("model"), (policy or {}).get("model") if isinstance(policy, Mapping) else None,
                  config.get("policy_name"), config.get("policy"), config.get("source_run")):
        if isinstance(value, str) and value:
            return value
    return None


def _summary(session: SessionTrace) -> Any:
    from proofgym.traces import SessionSummary

    return SessionSummary(session_id=session.session_id, run_id=session.run_id, env_name=session.env_name,
                          seed=session.seed, policy_id=session.policy_id, correlation_id=session.correlation_id,
                          status=session.status, error=session.error, started_at=session.started_at,
                          ended_at=session.ended_at, n_steps=len(session.steps), total_reward=session.total_reward,
                          outcome_score=session.outcome_reward.score if session.outcome_reward else None)
