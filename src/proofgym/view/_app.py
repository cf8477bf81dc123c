"""The viewer's web app: read-only GET pages over a trace store, behind the task app's key rules."""

from __future__ import annotations

import contextlib
import os
from importlib import resources
from pathlib import Path
from typing import AsyncIterator, Iterable
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from proofgym.http import key_matches, presented_key
from proofgym.traces import TraceStore, TraceStoreError, TraceValidationError
from proofgym.view._site import Links, Site, ViewError

#: Sent with every response: no inline script, nothing from elsewhere, no framing, no form posts elsewhere.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
KEY_COOKIE = "proofgym_view_key"
KEY_PARAM = "key"
STATIC_TYPES = {"view.css": "text/css; charset=utf-8", "view.js": "text/javascript; charset=utf-8"}


def static_file(name: str) -> bytes:
    """A file shipped in the package's ``static`` folder."""
    return resources.files("proofgym.view").joinpath("static", name).read_bytes()


def create_view_app(traces: str | os.PathLike[str], *, run_dirs: Iterable[str | os.PathLike[str]] = (),
                    api_key: str | None = None) -> FastAPI:
    """The viewer over the trace store ``traces`` (opened read-only: a missing store is an error, nothing is made).

    With ``api_key``, every request must present it: ``X-API-Key`` or ``Authorization: Bearer`` (as the task
    app), or the viewer's cookie, which ``?key=...`` on any page sets (then the page reloads without it).
    """
    store = TraceStore(traces, create=False)
    site = Site(store, [Path(p) for p in run_dirs])
    links = Links()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        store.close()

    app = FastAPI(title="proofgym view", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.store = store

    @app.middleware("http")
    async def guard(request: Request, call_next):  # type: ignore[no-untyped-def]
        if request.method not in ("GET", "HEAD"):
            response: Response = _page(site.error_page(links, "the viewer is read-only: only GET requests", 405),
                                       405)
            response.headers["Allow"] = "GET, HEAD"
        elif api_key is not None and not _authorised(request, api_key):
            offered = request.query_params.get(KEY_PARAM)
            if offered is not None and key_matches(api_key, offered):
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != KEY_PARAM]
                response = RedirectResponse(_local_path(request) + ("?" + urlencode(rest) if rest else ""), 303)
                response.set_cookie(KEY_COOKIE, api_key, httponly=True, samesite="strict",
                                    secure=request.url.scheme == "https")
            else:
                response = _page(site.error_page(links, "this viewer needs its API key: send X-API-Key or "
                                                        "Authorization: Bearer, or open it with ?key=...", 401), 401)
        else:
            response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> Response:
        return _page(site.error_page(links, str(exc.detail), exc.status_code), exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError) -> Response:
        named = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
        return _page(site.error_page(links, f"bad request: {named}", 400), 400)

    @app.exception_handler(ViewError)
    async def view_error(_request: Request, exc: ViewError) -> Response:
        return _page(site.error_page(links, str(exc), exc.status), exc.status)

    @app.exception_handler(TraceStoreError)
    async def store_error(_request: Request, exc: TraceStoreError) -> Response:
        # A value the store refuses (a NUL or a lone surrogate in an id, ...) is the request's fault; anything
        # else is the store's (locked, gone, corrupt): one line either way, never a traceback.
        status = 400 if isinstance(exc, TraceValidationError) else 503
        return _page(site.error_page(links, _one_line(str(exc)), status), status)

    @app.get("/", response_class=HTMLResponse)
    def runs() -> Response:
        return _page(site.runs_page(links))

    # Each id route also reads its id from ?id=, where Links puts an id a browser would take for "." or "..".
    @app.get("/runs/{run_id:path}", response_class=HTMLResponse)
    def run(run_id: str, query_id: str | None = Query(None, alias="id")) -> Response:
        return _page(site.run_page(links, _path_or_query_id(run_id, query_id)))

    @app.get("/sessions", response_class=HTMLResponse)
    def sessions(request: Request) -> Response:
        params = {k: v for k, v in request.query_params.items() if k != KEY_PARAM}
        return _page(site.sessions_page(links, params))

    @app.get("/sessions/{session_id:path}", response_class=HTMLResponse)
    def session(session_id: str, query_id: str | None = Query(None, alias="id")) -> Response:
        return _page(site.session_page(links, _path_or_query_id(session_id, query_id)))

    @app.get("/groups/{session_id:path}", response_class=HTMLResponse)
    def group(session_id: str, query_id: str | None = Query(None, alias="id")) -> Response:
        return _page(site.group_page(links, _path_or_query_id(session_id, query_id)))

    @app.get("/compare", response_class=HTMLResponse)
    def compare(a: str, b: str | None = None) -> Response:
        return _page(site.compare_page(links, a, b or None))

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC_TYPES:
            raise ViewError(f"no static file {name[:80]!r}", 404)
        return Response(static_file(name), media_type=STATIC_TYPES[name])

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok", "traces": store.url}

    return app


def _local_path(request: Request) -> str:
    """The request's path as the client sent it, for a redirect that stays on the viewer: its leading slashes
    (and backslashes, which browsers read as slashes) collapsed to one, as ``//host/x`` is another site to a
    browser."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path)
    return "/" + path.lstrip("/\\")


def _path_or_query_id(in_path: str, in_query: str | None) -> str:
    if in_path:
        return in_path
    if in_query is None:
        raise ViewError("no id: expected one after the route's slash, or as ?id=...", 404)
    return in_query


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _authorised(request: Request, api_key: str) -> bool:
    presented = presented_key(request.headers) or request.cookies.get(KEY_COOKIE)
    return key_matches(api_key, presented)


def _page(html: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(html, status_code=status)
