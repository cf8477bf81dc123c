"""``proofgym view --export``: one run as static HTML that opens from disk, no server needed."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from proofgym.traces import TraceStore
from proofgym.view._app import STATIC_TYPES, static_file
from proofgym.view._site import PAGE_SIZE, Links, Site, ViewError


@dataclass(frozen=True)
class ExportResult:
    """Where the bundle is (open ``index``) and how many sessions it holds."""

    out_dir: Path
    index: Path
    sessions: int


def export_run(store: TraceStore, run_id: str, out_dir: str | os.PathLike[str], *,
               run_dirs: Iterable[str | os.PathLike[str]] = ()) -> ExportResult:
    """Write run ``run_id`` of ``store`` to ``out_dir``: index.html (the run), sessions/page-N.html, one page per
    session under s/, and the stylesheet and script. The folder is replaced whole: it is written beside, then
    renamed, so a failed export leaves no half bundle."""
    site = Site(store, [Path(p) for p in run_dirs])
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ViewError(f"export folder {out} is a file")
    if not any(r.run_id == run_id for r in store.list_runs(counts=False)):
        raise ViewError(f"run {run_id[:200]!r} is not in {store.url}", 404)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (work / "static").mkdir()
        (work / "sessions").mkdir()
        (work / "s").mkdir()
        for name in STATIC_TYPES:
            (work / "static" / name).write_bytes(static_file(name))
        (work / "index.html").write_text(site.run_page(Links(export=True), run_id), encoding="utf-8")
        total = store.count_sessions(run_id=run_id)
        pages = max(1, -(-total // PAGE_SIZE))
        for page in range(1, pages + 1):
            html = site.sessions_page(Links(export=True, depth=1), {"run": run_id, "page": str(page)})
            (work / "sessions" / f"page-{page}.html").write_text(html, encoding="utf-8")
        nested = Links(export=True, depth=1)
        count = 0
        for session in store.iter_sessions(run_id=run_id):
            html = site.render_session(nested, session)
            (work / "s" / f"{nested.session(session.session_id).rsplit('/', 1)[1]}").write_text(html,
                                                                                              encoding="utf-8")
            count += 1
        if out.exists():
            shutil.rmtree(out)
        os.replace(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return ExportResult(out, out / "index.html", count)
