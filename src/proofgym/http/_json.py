"""The JSON the apps send, encoded so that encoding cannot fail, whatever the value holds.

An error body echoes what the client sent (pydantic's ``input``), and a rollout's answer carries what the
policy and the environment wrote: a NaN, a lone surrogate or an object that is not JSON data there made
the encoder raise *while answering*, turning a 422 into a 500, or a stored rollout into a failed request
that a client retries (and stores again). Every body goes through :func:`~proofgym.core.bounded_json`
first (strings cleaned, non-finite numbers as ``"nan"`` / ``"inf"``, depth and size bounded), so the
encoder only ever sees data it accepts.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

from proofgym.core import bounded_json


def json_bytes(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, after :func:`~proofgym.core.bounded_json` (so this never raises)."""
    return json.dumps(bounded_json(value), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class SafeJSONResponse(JSONResponse):
    """A ``JSONResponse`` whose body is :func:`json_bytes` of its content: any content can be sent."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)
