"""The task app: serve an environment over HTTP (``GET /health``, ``/info``, ``/task_info``, ``POST /rollout``).

Imports FastAPI and uvicorn: import this package only where an app is built or served.
"""

from proofgym.serve._app import DEFAULT_POLICIES, create_app
from proofgym.serve._background import BackgroundServer
from proofgym.serve._auth import API_KEY_ENV_VARS, api_key_from_env, is_loopback, key_matches, presented_key
from proofgym.serve._guard import RequestGuard
from proofgym.serve._json import SafeJSONResponse
from proofgym.serve._models import (
    EnvSpec,
    PipelineMetadata,
    PolicyConfig,
    PolicySpec,
    RecordConfig,
    RolloutMetrics,
    RolloutRequest,
    RolloutResponse,
    RolloutStep,
    RolloutTrajectory,
    SafetyConfig,
)
from proofgym.serve._openapi import error_responses, publish, require_key
from proofgym.serve._redacted_logs import redacted_logs
from proofgym.serve._server import ServeError, serve
from proofgym.serve._timeouts import uvicorn_limits

__all__ = [
    "API_KEY_ENV_VARS",
    "BackgroundServer",
    "DEFAULT_POLICIES",
    "EnvSpec",
    "PipelineMetadata",
    "PolicyConfig",
    "PolicySpec",
    "RecordConfig",
    "RequestGuard",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutStep",
    "RolloutTrajectory",
    "SafeJSONResponse",
    "SafetyConfig",
    "ServeError",
    "api_key_from_env",
    "create_app",
    "error_responses",
    "is_loopback",
    "key_matches",
    "presented_key",
    "publish",
    "redacted_logs",
    "require_key",
    "serve",
    "uvicorn_limits",
]

# serve-model: its app and runner import no torch; its engine does, and is loaded on first use.
from typing import Any  # noqa: E402

from proofgym.serve._model_server import create_model_app, serve_model  # noqa: E402


_LAZY = {"GenerationBackend": "proofgym.serve._model_backend", "LoadedModel": "proofgym.serve._model_backend",
         "SamplingParams": "proofgym.serve._model_backend", "load_model": "proofgym.serve._model_backend"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'proofgym.serve' has no attribute {name!r}")


__all__ += ["GenerationBackend", "LoadedModel", "SamplingParams", "create_model_app", "load_model", "serve_model"]
