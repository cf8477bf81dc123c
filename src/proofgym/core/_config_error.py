"""The error every config problem is reported with, and how a validation problem is written: one line each."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from proofgym.core._validation import describe_validation_error


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


def config_problems(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Pydantic errors (``ValidationError.errors()``) as the problems of a config, one dict per problem
    (``loc``, ``msg``, ``input``, ``type``). An error raised by a validator that checked a nested part of
    the config itself and carries ``problems`` (a verifier's options) becomes those problems, under its key;
    the errors of each member of a union (``id: str | int`` given ``true``) become one problem at the key."""
    problems: list[dict[str, Any]] = []
    for error in errors:
        nested = getattr((error.get("ctx") or {}).get("error"), "problems", None)
        if nested:
            problems += [{**problem, "loc": (*error["loc"], *problem["loc"])} for problem in config_problems(nested)]
            continue
        problem = {"loc": tuple(error["loc"]), "msg": error["msg"].removeprefix("Value error, "),
                   "input": error.get("input"), "type": error["type"]}
        if problem["loc"] and _is_union_member(problem["loc"][-1]):
            problem["loc"] = problem["loc"][:-1]
            last = problems[-1] if problems else None
            if last is not None and last["loc"] == problem["loc"] and last["input"] is problem["input"]:
                _, _, wanted = problem["msg"].partition("Input should be ")
                if wanted and last["msg"].startswith("Input should be "):
                    last["msg"] += f" or {wanted}"
                    last["type"] = "union_type"
                continue
        problems.append(problem)
    return problems


def _is_union_member(part: Any) -> bool:
    """Whether a location part names a member of a union (``str``, ``literal['auto']``, ``LoraSettings``) that
    pydantic reports under, rather than a key of the config (keys are snake_case words)."""
    return isinstance(part, str) and (part in ("str", "int", "float", "bool", "none", "bytes")
                                      or any(char in part for char in "[]'(") or part[:1].isupper())


def problem_line(source: Any, problem: Mapping[str, Any]) -> str:
    """``source: key.path[0]: what was expected[, got what was given]``: one problem on one line."""
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem["loc"]).lstrip(".")
    text = " ".join(describe_validation_error({**problem, "loc": (where,) if where else ()}).split())
    if problem["type"].endswith("_type") or problem["type"] == "literal_error":
        text += f", got {_shown(problem.get('input'))}"
    return f"{source}: {text}"


def _shown(value: Any) -> str:
    """A given value as a message shows it: JSON spelling for scalars (short), the kind for containers."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value) if len(repr(value)) <= 40 else f"a number of {len(repr(value))} characters"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:39] + "…")
    containers: dict[type, str] = {dict: "a mapping", list: "a list"}
    return containers.get(type(value), type(value).__name__)


class OptionsError(ValueError):
    """The options of a registered kind (a verifier's, a parser's) cannot be used: invalid, or (when building) naming
    something that cannot be loaded.

    ``problems`` holds one pydantic-shaped dict per problem (``loc`` within the kind's options, ``msg``, ``input``,
    ``type``), so that a run config can name ``<section>.<key>`` and its file.
    """

    def __init__(self, message: str, problems: Iterable[Mapping[str, Any]]) -> None:
        super().__init__(message)
        self.problems = tuple({**problem, "loc": tuple(problem["loc"])} for problem in problems)

    @classmethod
    def at_kind(cls, message: str, kind: Any) -> OptionsError:
        """The problem is the ``kind`` itself (unknown, or its target cannot be loaded)."""
        return cls(message, [{"loc": ("kind",), "msg": message, "input": kind, "type": "value_error"}])


def require_model_class(value: Any, what: str) -> None:
    """``TypeError`` unless ``value`` is a pydantic model class (the options model of a registered kind)."""
    from pydantic import BaseModel

    if not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise TypeError(f"{what} must be a pydantic model class, got {value!r}")


def validate_options(what: str, model: Any, options: Mapping[str, Any], error: type[OptionsError] = OptionsError,
                     ) -> Any:
    """``options`` validated strictly by the pydantic ``model`` (``true`` is not a number, ``"3"`` not an integer);
    ``error`` (an :class:`OptionsError`) names ``what`` and each bad key."""
    from pydantic import ValidationError

    try:
        return model.model_validate(dict(options), strict=True)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False)
        problems = "; ".join(map(describe_validation_error, errors))
        raise error(f"invalid options for {what}: {problems}", errors) from None
