"""The one HTTP layer: the outbound clients proofgym calls other services with (an OpenAI-compatible chat client for
policies and judges, the task-app client for eval and RL), and the server-side pieces every proofgym server is built
from.

Importing this package loads no HTTP library (httpx is imported on first use): the judges and policies import it at
their own import time.
"""

# outbound clients
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

# server side

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
]
