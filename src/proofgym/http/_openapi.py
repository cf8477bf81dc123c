"""The OpenAPI pieces every proofgym server publishes: the API key's security schemes, the error statuses and
their body (:class:`ErrorResponse`, the same on every route, from the guard and the app), and :func:`publish`, which
applies a server's schema transforms to FastAPI's schema once.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Collection, Mapping

from pydantic import BaseModel, ConfigDict

Schema = dict[str, Any]

#: The two ways to send the API key (the guard reads both, see :mod:`proofgym.http._auth`).
SECURITY_SCHEMES: dict[str, Schema] = {
    "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                     "description": "the server's API key"},
    "BearerToken": {"type": "http", "scheme": "bearer", "description": "the server's API key as a bearer token"},
}

_ERRORS: dict[int, str] = {
    400: "Malformed request: a Content-Length that is not a byte count, or a body that is not UTF-8",
    401: "Missing or wrong API key (checked before the body is read)",
    404: "No such route, or a rollout for an environment this app does not serve",
    408: "The request body did not arrive within the server's body timeout",
    413: "The body is larger than the server's limit (declared in Content-Length or streamed)",
    422: "The body or a parameter is invalid: one entry per problem, each with its field path",
    500: "The server failed (for a rollout: its trace could not be stored)",
    503: "The server is draining for shutdown (retry on another instance, see Retry-After) or at its "
         "connection limit",
}


def error_responses(*, keyed: bool, extra: Mapping[int, Mapping[str, Any]] | None = None) -> dict[int | str, Any]:
    """The error statuses any route may answer, for FastAPI's ``responses=``, each with :class:`ErrorResponse`.

    ``keyed``: the route needs the API key (so it may answer 401). ``extra`` replaces or adds entries.
    """
    responses: dict[int | str, Any] = {status: {"model": ErrorResponse, "description": text}
                                       for status, text in _ERRORS.items() if keyed or status != 401}
    for status, entry in (extra or {}).items():  # replacing or adding, as dict.update would
        responses[status] = entry
    # At the connection limit uvicorn itself answers, in plain text (see proofgym.http._timeouts).
    busy = responses[503]
    busy["content"] = {**busy.get("content", {}), "text/plain": {"schema": {"type": "string"}}}
    return responses


def publish(app: Any, *transforms: Callable[[Schema], None]) -> None:
    """Make ``app.openapi()`` (and ``/openapi.json``) FastAPI's schema with ``transforms`` applied, once."""
    generate = app.openapi

    def openapi() -> Schema:
        if app.openapi_schema is None:
            schema = generate()
            for transform in transforms:
                transform(schema)
            app.openapi_schema = schema
        published: Schema = app.openapi_schema
        return published

    app.openapi = openapi


def require_key(open_paths: Collection[str] = ("/health",), *,
                schemes: Mapping[str, Schema] = SECURITY_SCHEMES) -> Callable[[Schema], None]:
    """A transform declaring the API key ``schemes``, any one required on every operation but those of
    ``open_paths``."""

    def transform(schema: Schema) -> None:
        schema.setdefault("components", {}).setdefault("securitySchemes", {}).update(copy.deepcopy(dict(schemes)))
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                if path not in open_paths:
                    operation["security"] = [{name: []} for name in schemes]

    return transform


class ErrorDetail(BaseModel):
    """One problem of a 422: where in the request (``loc``, e.g. ``["body", "env", "seed"]``), what was
    expected (``msg``) and its kind (``type``); the offending ``input`` may follow."""

    model_config = ConfigDict(extra="allow")

    loc: list[str | int]
    msg: str
    type: str


class ErrorResponse(BaseModel):
    """Every error answer (400, 401, 404, 408, 413, 422, 500, 503): ``detail`` says what went wrong, as
    text or, for a 422, one entry per problem. The same body on every route, from the guard and the app."""

    detail: str | list[ErrorDetail]
