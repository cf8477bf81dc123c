"""``proofgym view``: a read-only web viewer of runs, sessions and the evidence behind each reward.

Server-rendered HTML (Jinja2, autoescaped) under a strict Content-Security-Policy; charts are inline SVG; the one
script is a file in the package. FastAPI and uvicorn (the serve extra) are imported on first use.
"""

from typing import Any

from proofgym.view._site import ORDERS, PAGE_SIZE, SESSION_FILTERS, Links, Site, ViewError

_LAZY = {"create_view_app": "proofgym.view._app", "CONTENT_SECURITY_POLICY": "proofgym.view._app",
         "export_run": "proofgym.view._export", "ExportResult": "proofgym.view._export",
         "serve_view": "proofgym.view._serve", "view_url": "proofgym.view._serve",
         "DEFAULT_PORT": "proofgym.view._serve"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "DEFAULT_PORT",
    "ORDERS",
    "PAGE_SIZE",
    "SESSION_FILTERS",
    "ExportResult",
    "Links",
    "Site",
    "ViewError",
    "create_view_app",
    "export_run",
    "serve_view",
    "view_url",
]
