"""The slow-client options ``proofgym serve`` and ``proofgym serve-reward`` share (see proofgym.http._timeouts)."""

from __future__ import annotations

from typing import Any

import typer

# The defaults are the servers' (proofgym.http._timeouts, proofgym.reward_server._app), written out:
# importing proofgym.taskapp here would load FastAPI with every CLI command (tests/cli/test_serve_command.py
# checks that they agree).


def header_timeout_option() -> Any:
    return typer.Option(10.0, "--header-timeout-s", min=0.001,
                        help="Slow clients: a request's headers must be complete this long after its connection "
                             "opened or the previous response (else 408 and the connection is closed).")


def body_timeout_option(default: float) -> Any:
    return typer.Option(default, "--body-timeout-s", min=0.001,
                        help="Slow clients: a request's body must have arrived this long after its headers (else "
                             "408 and the connection is closed).")


def max_connections_option(default: int, what: str) -> Any:
    return typer.Option(default, "--max-connections", min=1,
                        help=f"Connections {what} at once; a request beyond them gets 503.")
