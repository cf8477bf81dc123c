"""``proofgym crafter``: the frames of a stored Crafter rollout as a GIF or a PNG strip."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from proofgym.cli._errors import fail

crafter_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                          help="Crafter rollouts: frames.")
console = Console()


@crafter_app.command("frames")
def frames_command(
    session: str = typer.Argument(..., help="The session id (proofgym traces list shows them)."),
    out: Path = typer.Option(..., "--out", help="Where to write: a .gif (animated) or a .png (a strip)."),
    traces: str = typer.Option("traces/proofgym.db", "--traces", help="The trace store: a SQLite path or a URL."),
    scale: int = typer.Option(4, "--scale", min=1, max=16, help="Enlarge each 64 x 64 frame this many times."),
) -> None:
    """Write the frames stored with a rollout (run with env_config frames.store = true)."""
    from proofgym.crafter import session_frames, write_frames
    from proofgym.traces import TraceStore

    try:
        with TraceStore(traces, create=False) as store:
            found = store.get_session(session)
    except Exception as exc:  # noqa: BLE001 - a store that cannot be opened is the user's to fix
        fail(f"--traces: cannot open the trace store {traces!r}: {exc}")
    if found is None:
        fail(f"session {session!r} is not in {traces}")
    try:
        written = write_frames(session_frames(found), out, scale=scale)
    except (ValueError, OSError) as exc:
        fail(f"--out: {exc}")
    console.print(f"wrote {written}", highlight=False)
