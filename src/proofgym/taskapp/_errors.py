"""The error a request that parsed but cannot run raises: a 422 naming the fields at fault, and what a 422 may
show of what the client sent."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from proofgym.core import REDACTED, is_secret_name, redact_secrets, redact_text


class RequestError(ValueError):
    """A well-formed request the app refuses.

    ``loc`` is the field's path in the body (as in a 422's ``detail[].loc``) and ``message`` says
    what was expected; ``details()`` gives the entries of the 422's ``detail`` list, shaped like
    FastAPI's own (one per problem when built from a pydantic error).
    """

    def __init__(self, loc: tuple[str | int, ...], message: str, value: Any = None) -> None:
        super().__init__(f"{'.'.join(str(part) for part in loc)}: {message}")
        self.loc = loc
        self.message = message
        self.value = value
        self._details = [{"type": "value_error", "loc": ["body", *loc], "msg": message, "input": value}]

    @classmethod
    def from_validation_error(cls, prefix: tuple[str | int, ...], exc: ValidationError) -> RequestError:
        """One error carrying every problem of ``exc``, each located under ``prefix``."""
        return cls.from_problems(prefix, exc.errors(include_url=False, include_context=False), str(exc))

    @classmethod
    def from_problems(cls, prefix: tuple[str | int, ...], problems: Iterable[Mapping[str, Any]],
                      message: str = "invalid value") -> RequestError:
        """One error carrying every problem of ``problems`` (dicts shaped like pydantic's errors: ``loc``,
        ``msg``, ``input``, ``type``), each located under ``prefix``; ``message`` when there are none."""
        problems = list(problems)
        first: Mapping[str, Any] = problems[0] if problems else {"loc": (), "msg": message}
        error = cls((*prefix, *first["loc"]), first["msg"], first.get("input"))
        error._details = [{"type": problem.get("type", "value_error"), "loc": ["body", *prefix, *problem["loc"]],
                           "msg": problem["msg"], "input": problem.get("input")} for problem in problems] or \
            error._details
        return error

    def details(self) -> list[dict[str, Any]]:
        """The entries of a 422 response's ``detail`` list (through :func:`shown_errors`)."""
        return shown_errors(self._details)


def shown_errors(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validation errors (pydantic's, FastAPI's, :class:`RequestError`'s) as a 422 shows them: each as it is, but
    with no credential the client sent echoed back. The ``input`` of a field whose path names a credential
    (``policy.config.api_key``, ``...extra_body.authorization``) is ``***``; any other input, and the ``ctx``,
    have the credentials in them taken out (:func:`~proofgym.core.redact_secrets`: a nested secret-named key, a
    URL's password or credential parameter); the message goes through :func:`~proofgym.core.redact_text`."""
    shown = []
    for error in errors:
        entry = dict(error)
        if "input" in entry:
            secret = any(isinstance(part, str) and is_secret_name(part) for part in entry.get("loc", ()))
            entry["input"] = REDACTED if secret and entry["input"] is not None else redact_secrets(entry["input"])
        if isinstance(entry.get("msg"), str):
            entry["msg"] = redact_text(entry["msg"])
        if isinstance(entry.get("ctx"), Mapping):
            # A validator's exception (ctx["error"]) is shown as its message: redacted as text.
            entry["ctx"] = {key: redact_text(str(value)) if isinstance(value, Exception) else redact_secrets(value)
                            for key, value in entry["ctx"].items()}
        shown.append(entry)
    return shown
