"""The task app's API key: where it comes from, how a request presents it, and where a key is required."""

from __future__ import annotations

import hmac
import ipaddress
import os
from typing import Mapping

from proofgym.http._serve_error import ServeError

#: Environment variables read for the key, first non-empty wins (the reference's name first).
API_KEY_ENV_VARS: tuple[str, ...] = ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY")


def api_key_from_env(environ: Mapping[str, str] | None = None, *,
                     names: tuple[str, ...] = API_KEY_ENV_VARS) -> str | None:
    """The API key from the first non-empty variable of ``names`` (by default ``ENVIRONMENT_API_KEY``,
    ``PROOFGYM_API_KEY``, ``ENV_API_KEY``), or ``None``."""
    environ = os.environ if environ is None else environ
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries: ``X-API-Key``, else ``Authorization: Bearer <key>``; ``None`` if neither.

    ``headers`` must be case-insensitive (as Starlette's are) or have lower-case names.
    """
    key = (headers.get("x-api-key") or "").strip()
    if key:  # a blank header is no key (as presented_keys drops empty entries)
        return key
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


#: At most this many keys are read from one request (``X-API-Keys`` is a list): each is compared in turn.
MAX_PRESENTED_KEYS = 16


def presented_keys(headers: Mapping[str, str]) -> list[str]:
    """Every key a request carries, in order: ``X-API-Key``, each of the comma-separated ``X-API-Keys`` (the
    reference client sends the key and its aliases there), then ``Authorization: Bearer <key>``; empty entries
    are dropped, duplicates kept once, and at most :data:`MAX_PRESENTED_KEYS` are read.

    ``headers`` must be case-insensitive (as Starlette's are) or have lower-case names.
    """
    candidates = [(headers.get("x-api-key") or "").strip()]
    candidates += [part.strip() for part in (headers.get("x-api-keys") or "").split(",")]
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    if scheme.lower() == "bearer":
        candidates.append(token.strip())
    keys: list[str] = []
    for candidate in candidates:
        if candidate and candidate not in keys:
            keys.append(candidate)
    return keys[:MAX_PRESENTED_KEYS]


def key_matches(expected: str, presented: str | list[str] | None) -> bool:
    """Whether ``presented`` (one key, or several: any of them) is ``expected``, each compared in constant time.

    Every presented key is compared, so the time taken does not say which one matched.
    """
    if presented is None:
        return False
    wanted = expected.encode("utf-8")
    matched = False
    for key in [presented] if isinstance(presented, str) else presented:
        matched |= hmac.compare_digest(key.encode("utf-8", "surrogateescape"), wanted)
    return matched


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only exposes the app to this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def serving_key(host: str, port: int, api_key: str | None, *, could: str, server: str = "",
                names: tuple[str, ...] = API_KEY_ENV_VARS, read_env: bool = True) -> str | None:
    """The key a server started on ``host:port`` requires: ``api_key``, else (with ``read_env``) the first of the
    environment variables ``names`` that is set (see :func:`api_key_from_env`), else ``None``.

    Raises :class:`~proofgym.http.ServeError` when there is no key and ``host`` is not a loopback address (the
    message names the server, ``server`` such as ``"the viewer"``, and says what anyone who can reach it ``could``
    do), or when ``port`` is not in 0..65535. Every proofgym server checks its address this way before it binds."""
    key = api_key if api_key is not None or not read_env else api_key_from_env(names=names)
    if key is None and not is_loopback(host):
        named = f" {server}" if server else ""
        raise ServeError(f"refusing to serve{named} on {host!r} without an API key: anyone who can reach it could "
                         f"{could}. Set {names[0]} (or {', '.join(names[1:])}), or bind a loopback address such "
                         "as 127.0.0.1")
    if not 0 <= port <= 65535:
        raise ServeError(f"port must be in 0..65535, got {port}")
    return key
