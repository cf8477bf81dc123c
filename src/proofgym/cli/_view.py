"""``proofgym view``: browse a trace store in a local web app, or export one run as static HTML."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from proofgym.cli._errors import print_error

ENV_VAR = "PROOFGYM_TRACES"


def view_command(
    traces: Optional[str] = typer.Option(None, "--traces", help="Trace store: a SQLite file or a database URL "
                                                                f"(default: ${ENV_VAR}, else traces/proofgym.db)."),
    runs: list[Path] = typer.Option([], "--runs", help="Folders of run outputs (summary.json, metrics.csv) to "
                                                       "chart; default: runs/ and the trace store's folder."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; anything but loopback needs a key "
                                                         "(ENVIRONMENT_API_KEY or PROOFGYM_API_KEY)."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port to listen on."),
    export: Optional[Path] = typer.Option(None, "--export", help="Write the run given by --run as static HTML "
                                                                 "into this folder instead of serving."),
    run: Optional[str] = typer.Option(None, "--run", help="The run to export (with --export)."),
) -> None:
    """Open a read-only web viewer of a trace store: runs, sessions, and why each reward is what it is."""
    try:
        from proofgym.http import ServeError
        from proofgym.traces import DEFAULT_PATH, TraceStore, TraceStoreError
        from proofgym.view import ViewError, export_run, serve_view
    except ImportError as exc:
        print_error(f"the viewer needs the view extra (pip install 'proofgym[view]'): {exc}")
        raise typer.Exit(2) from None
    location = traces or os.environ.get(ENV_VAR) or DEFAULT_PATH
    run_dirs = list(runs) or [Path("runs")] + ([Path(location).parent] if "://" not in str(location) else [])
    if export is not None or run is not None:
        if export is None or run is None:
            print_error("--export DIR and --run ID go together: the export writes one run")
            raise typer.Exit(2)
        try:
            with TraceStore(location, create=False) as store:
                result = export_run(store, run, export, run_dirs=run_dirs)
        except (TraceStoreError, ViewError, OSError) as exc:
            print_error(exc)
            raise typer.Exit(2) from None
        typer.echo(f"wrote {result.sessions} sessions of run {run} to {result.out_dir}; open {result.index}")
        return
    from proofgym.http import api_key_from_env

    try:
        serve_view(location, run_dirs=run_dirs, host=host, port=port, api_key=api_key_from_env(),
                   announce=lambda url: typer.echo(f"proofgym view of {location} on {url} (Ctrl+C to stop)"))
    except ServeError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
