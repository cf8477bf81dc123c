"""The error every config problem is reported with."""

from __future__ import annotations

from typing import Any, Iterable, Mapping


class ConfigError(ValueError):
    """A config file or value is invalid; the message names the file, the key path and what was expected.

    ``problems`` are the same problems in machine-readable form when the error comes from validating
    a config (one dict per problem, shaped like pydantic's
    ``errors(include_url=False, include_context=False)``: ``loc`` (a tuple of keys and indices under
    the config), ``msg``, ``input`` and ``type``); empty when there are none.
    """

    def __init__(self, message: str, *, problems: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[dict[str, Any], ...] = tuple(
            {**problem, "loc": tuple(problem.get("loc", ()))} for problem in problems)
