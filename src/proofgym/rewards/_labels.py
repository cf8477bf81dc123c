"""A reference sent as text by a trainer (an OpenRLHF label to the reward server, a veRL ground truth)."""

from __future__ import annotations

import json
from typing import Any

from proofgym.core import json_limit_problem


def label_text(text: str, where: str) -> Any:
    """What ``text`` stands for: the value its JSON encodes when it looks like a JSON object (``{...}``),
    else the gold decision, as ``{"gold": text}``. ``ValueError`` names ``where`` when it is broken JSON or
    goes past the limits JSON from outside must meet (:func:`~proofgym.core.json_limit_problem`: nested
    more than 64 levels deep, an integer of more than 1000 digits), which the parser would fail on."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return {"gold": text}
    problem = json_limit_problem(stripped)
    if problem is not None:
        raise ValueError(f"{where}: its JSON has {problem.message}")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: looks like JSON but is not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # past a limit of the parser's that the check above missed
        raise ValueError(f"{where}: looks like JSON but cannot be read ({exc})") from None
