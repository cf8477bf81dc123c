"""How the command line reports an error: each problem on one line of stderr, ``error: <problem>``.

Lines are never wrapped (a terminal or a log shows them whole, and a pipe can grep them) and the text is
shown as written, so a key path such as ``[eval]`` or ``rules[0]`` is not taken for markup, and every control
character (a bidi override, an ESC sequence) as a ``<U+XXXX>`` marker (:func:`shown`, for whatever a command prints
of stored or model text). Problems name their file, key and what was expected; the message itself is the caller's.
"""

from __future__ import annotations

from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from proofgym.core import show_controls

_stderr = Console(stderr=True)


def shown(value: Any) -> str:
    """``value`` as text for a rich console: no markup in it is read, and no control character acts on the
    terminal (each shows as ``<U+XXXX>``: U+202E would reorder the line around it)."""
    return escape(show_controls(str(value)))


def print_error(message: Any) -> None:
    """Print ``message`` (an exception or text) to stderr, one ``error:`` line per line of it."""
    for line in str(message).splitlines() or [""]:
        _stderr.print(f"[red]error:[/red] {shown(line)}", highlight=False, soft_wrap=True)


def fail(message: Any, code: int = 2) -> NoReturn:
    """:func:`print_error`, then exit with ``code`` (2: a usage or config error)."""
    print_error(message)
    raise typer.Exit(code)


def fail_running(config: Any, message: Any, code: int = 2) -> NoReturn:
    """:func:`fail` for a problem found while running the config file ``config``: the libraries name the key
    (``eval.env_name: ...``), not the file, which only the command knows; each line gets ``config: `` in front
    unless it starts with it already."""
    source = f"{config}:"
    lines = str(message).splitlines() or [""]
    fail("\n".join(line if line.startswith(source) else f"{source} {line}" for line in lines), code)
