"""The log lines of a server proofgym runs, with the credentials a request carried taken out.

uvicorn's access log writes each request line with its query string, and at trace level every ASGI scope (the
query string as bytes); an app's error lines may quote a URL; httpx logs every URL a policy or a client calls.
A credential in any of them (``?api_key=...``, ``user:pass@``, ``Authorization: Bearer ...``) would be in the
log. While a server runs (its app's lifespan, or :func:`~proofgym.taskapp.serve` and the like around uvicorn),
those loggers pass each record through :func:`~proofgym.core.redact_text`: its message, its arguments (where
formatters expect them) and its traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from proofgym.core import redact_text

#: The loggers that write what a request sent: uvicorn's (access, errors, trace-level ASGI messages) and httpx's.
SERVER_LOGGERS: tuple[str, ...] = ("uvicorn.access", "uvicorn.error", "uvicorn.asgi", "httpx")


class RedactingFilter(logging.Filter):
    """A logging filter that takes credentials out of each record it sees (and lets every record through)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_text(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(arg) for arg in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {key: _redacted(arg) for key, arg in record.args.items()}
        if record.exc_info and not record.exc_text:
            # Formatted here so that the exception's message (a URL an HTTP client failed on) is redacted too;
            # formatters use exc_text when it is set.
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True


def _redacted(arg: Any) -> Any:
    """A record's argument, redacted as its text; kept as it is (for ``%d`` and the like) when it holds none."""
    if arg is None or isinstance(arg, (bool, int, float)):
        return arg
    text = arg if isinstance(arg, str) else str(arg)
    clean = redact_text(text)
    return arg if clean == text else clean


@contextmanager
def redacted_logs(loggers: tuple[str, ...] = SERVER_LOGGERS) -> Iterator[None]:
    """While inside, the records of ``loggers`` (default: :data:`SERVER_LOGGERS`) have their credentials taken
    out. Each use adds a filter of its own and removes it on the way out, so servers in one process may nest."""
    redactor = RedactingFilter()
    for name in loggers:
        logging.getLogger(name).addFilter(redactor)
    try:
        yield
    finally:
        for name in loggers:
            logging.getLogger(name).removeFilter(redactor)
