"""serve-reward: an HTTP reward server for trainers, speaking OpenRLHF's remote reward-model protocol
(``POST /get_reward``), with concurrent one-sample requests verified together as micro-batches.

Importing this package is light: fastapi and uvicorn are imported inside the functions that build or run the app.
The pieces it shares with the other servers (the API key, the request guard, safe JSON, redacted logs, uvicorn's
limits) are :mod:`proofgym.http`'s.
"""

from proofgym.reward_server._app import (
    RewardRequest,
    RewardResponse,
    create_reward_app,
    parse_label,
    reward_api_key,
    serve_reward,
    split_response,
)

__all__ = [
    "RewardRequest",
    "RewardResponse",
    "create_reward_app",
    "parse_label",
    "reward_api_key",
    "serve_reward",
    "split_response",
]
