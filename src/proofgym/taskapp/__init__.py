"""The task app: serve an environment over HTTP (``GET /health``, ``/info``, ``/task_info``, ``POST /rollout``).

Imports FastAPI and uvicorn: import this package only where an app is built or served. The pieces it shares with
the other servers (the API key, the request guard, safe JSON, redacted logs, uvicorn's limits) are
:mod:`proofgym.http`'s.
"""

from proofgym.http import ServeError
from proofgym.taskapp._app import DEFAULT_POLICIES, create_app
from proofgym.taskapp._models import (
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
from proofgym.taskapp._server import serve

__all__ = [
    "DEFAULT_POLICIES",
    "EnvSpec",
    "PipelineMetadata",
    "PolicyConfig",
    "PolicySpec",
    "RecordConfig",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutStep",
    "RolloutTrajectory",
    "SafetyConfig",
    "ServeError",
    "create_app",
    "serve",
]
