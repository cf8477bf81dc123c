"""A reference sent as text by a trainer (an OpenRLHF label, a veRL ground truth)."""

from __future__ import annotations

import json
from typing import Any


def label_text(text: str, where: str) -> Any:
    """What ``text`` stands for: the value its JSON encodes when it looks like a JSON object (``{...}``),
    else the gold decision, as ``{"gold": text}``. ``ValueError`` names ``where`` when it is broken JSON."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return {"gold": text}
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: looks like JSON but is not valid JSON ({exc.msg})") from None
