"""The one HTTP layer: the outbound clients proofgym calls other services with (an OpenAI-compatible chat client for
policies and judges, the task-app client for eval and RL), and the server-side pieces every proofgym server (the task
app, serve-model, serve-reward, the viewer) is built from: the API key (where it comes from, how a request presents
it, the loopback rule), the ASGI guard in front of an app (key, body size and shape, body timeout), JSON answers that
cannot fail to encode, the published OpenAPI pieces (security schemes, error statuses and body), log lines with
credentials taken out, uvicorn's limits for slow clients, and an app served on a thread.

Importing this package loads no HTTP library (httpx is imported on first use): the judges and policies import it at
their own import time. Of the server side, ``RequestGuard`` (with ``Refusal`` / ``Refusals``), ``SafeJSONResponse``
and ``json_bytes`` load Starlette, on first use; fastapi and uvicorn are imported by the functions that build or run a
server.
"""

from typing import TYPE_CHECKING, Any

# The outbound clients are _chat_client's and _task_app_client's; the other modules are the server side.
from proofgym.http._auth import (
    API_KEY_ENV_VARS,
    MAX_PRESENTED_KEYS,
    api_key_from_env,
    is_loopback,
    key_matches,
    presented_key,
    presented_keys,
    serving_key,
)
from proofgym.http._background import BackgroundServer
from proofgym.http._chat_client import (
    MAX_RESPONSE_BYTES,
    MAX_RETRY_AFTER_S,
    NO_RETRIES,
    ChatAnswer,
    ChatAttempt,
    ChatClient,
    RetryPolicy,
    chat_completions_url,
)
from proofgym.http._openapi import (
    SECURITY_SCHEMES,
    ErrorDetail,
    ErrorResponse,
    error_responses,
    publish,
    require_key,
)
from proofgym.http._redacted_logs import SERVER_LOGGERS, redacted_logs
from proofgym.http._serve_error import ServeError
from proofgym.http._task_app_client import (
    RL_ROLLOUT_TRIES,
    RolloutAnswer,
    TaskAppClient,
    TaskAppError,
    TaskAppRollout,
    session_of,
    task_app_healthy,
    traced_rollout,
)
from proofgym.http._timeouts import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    http_protocol,
    uvicorn_limits,
)

# Server-side names that load Starlette: imported on first use.
if TYPE_CHECKING:
    from proofgym.http._guard import Refusal, Refusals, RequestGuard
    from proofgym.http._json import SafeJSONResponse, json_bytes

_ON_FIRST_USE = {"Refusal": "proofgym.http._guard", "Refusals": "proofgym.http._guard",
                 "RequestGuard": "proofgym.http._guard", "SafeJSONResponse": "proofgym.http._json",
                 "json_bytes": "proofgym.http._json"}


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        import importlib

        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    raise AttributeError(f"module 'proofgym.http' has no attribute {name!r}")


__all__ = [
    # outbound clients
    "MAX_RESPONSE_BYTES",
    "MAX_RETRY_AFTER_S",
    "NO_RETRIES",
    "ChatAnswer",
    "ChatAttempt",
    "ChatClient",
    "RetryPolicy",
    "chat_completions_url",
    "RL_ROLLOUT_TRIES",
    "RolloutAnswer",
    "TaskAppClient",
    "TaskAppError",
    "TaskAppRollout",
    "session_of",
    "task_app_healthy",
    "traced_rollout",
    # server side
    "API_KEY_ENV_VARS",
    "BackgroundServer",
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_MAX_CONNECTIONS",
    "ErrorDetail",
    "ErrorResponse",
    "MAX_PRESENTED_KEYS",
    "Refusal",
    "Refusals",
    "RequestGuard",
    "SECURITY_SCHEMES",
    "SERVER_LOGGERS",
    "SafeJSONResponse",
    "ServeError",
    "api_key_from_env",
    "error_responses",
    "http_protocol",
    "is_loopback",
    "json_bytes",
    "key_matches",
    "presented_key",
    "presented_keys",
    "publish",
    "redacted_logs",
    "require_key",
    "serving_key",
    "uvicorn_limits",
]
