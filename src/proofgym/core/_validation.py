"""One wording for validation errors, whichever model reported them."""

from __future__ import annotations

from typing import Any, Mapping


def describe_validation_error(error: Mapping[str, Any]) -> str:
    """``'a.b.c: what'`` for one pydantic error dict (``ValidationError.errors()`` item)."""
    where = ".".join(str(part) for part in error["loc"]) or "<top level>"
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key"
    if error["type"] == "missing":
        return f"{where}: required key missing"
    return f"{where}: {error['msg']}"
