"""Rubrics: what a judge scores, criterion by criterion, and how the criteria add up.

A rubric is ``{version, goal_text, criteria: [{id, description, weight, required, scale, function}], aggregation}``.
A criterion's ``scale`` is ``bounded`` (a number in ``[min, max]``, by default ``[0, 1]``), ``binary`` (0 or 1) or
``choices`` (one of listed numbers); every score is normalised to ``[0, 1]`` before aggregating. A criterion with
``function`` is computed by a programmatic criterion: the function itself (a rubric built in Python passes it by
object), or the name it is registered under (a rubric file names it; plugins register through entry points); the
others need an LLM judge.

Aggregations (over normalised scores ``s_i`` and weights ``w_i``):

- ``weighted_sum``: ``Σ s_i·w_i / Σ w_i`` (in ``[0, 1]``);
- ``sum``: ``Σ s_i·w_i`` (the reference's event rubrics: weights that add to 1 give the same number);
- ``min``: ``min s_i``;
- ``all_required``: 1 when every criterion scores its maximum, else 0.

Whatever the aggregation, a ``required`` criterion scoring 0 caps the total at 0. A total is only computed when every
criterion has a valid score: a criterion whose verdict is invalid makes the total abstain (``None``), never 0.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ModelWrapValidatorHandler,
    field_validator,
    model_validator,
)

from proofgym.config import read_config_file
from proofgym.core import ConfigError, config_problems, problem_line

Aggregation = Literal["weighted_sum", "sum", "min", "all_required"]
AGGREGATIONS: tuple[str, ...] = ("weighted_sum", "sum", "min", "all_required")
LEVELS: tuple[str, ...] = ("event", "outcome")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scale(_Strict):
    """How a criterion is scored: ``binary`` (0 / 1), ``bounded`` (``[min, max]``) or ``choices`` (listed values)."""

    kind: Literal["binary", "bounded", "choices"] = "bounded"
    min: float = 0.0
    max: float = 1.0
    choices: tuple[float, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Scale:
        for name in ("min", "max"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"scale {name} must be a finite number")
        if self.kind == "binary" and (self.min, self.max, self.choices) != (0.0, 1.0, ()):
            raise ValueError("a binary scale takes no min, max or choices (it is 0 or 1)")
        if self.kind == "bounded":
            if self.choices:
                raise ValueError("a bounded scale takes min and max, not choices")
            if not self.min < self.max:
                raise ValueError(f"a bounded scale needs min < max, got min={self.min} max={self.max}")
        if self.kind == "choices":
            if len(self.choices) < 2 or len(set(self.choices)) != len(self.choices):
                raise ValueError("a choices scale needs at least two distinct values")
            if not all(math.isfinite(c) for c in self.choices):
                raise ValueError("scale choices must be finite numbers")
            object.__setattr__(self, "min", min(self.choices))
            object.__setattr__(self, "max", max(self.choices))
        return self

    def problem(self, score: Any) -> str | None:
        """Why ``score`` is not a score on this scale (``None`` when it is)."""
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            return f"expected a number, got {score!r}"
        if self.kind == "binary" and score not in (0, 1):
            return f"expected 0 or 1, got {score!r}"
        if self.kind == "choices" and float(score) not in self.choices:
            return f"expected one of {list(self.choices)}, got {score!r}"
        if not self.min <= score <= self.max:
            return f"expected a number in [{self.min:g}, {self.max:g}], got {score!r}"
        return None

    def normalise(self, score: float) -> float:
        """``score`` mapped to ``[0, 1]`` (``min`` -> 0, ``max`` -> 1)."""
        return (float(score) - self.min) / (self.max - self.min)

    def describe(self) -> str:
        """The scale as a judge prompt states it."""
        if self.kind == "binary":
            return "0 or 1"
        if self.kind == "choices":
            return "one of " + ", ".join(f"{c:g}" for c in self.choices)
        return f"a number from {self.min:g} to {self.max:g}"


def _scale(value: Any) -> Any:
    """``"binary"`` / ``"bounded"`` as a string, or the full mapping; a list of numbers is a choices scale."""
    if isinstance(value, str):
        return {"kind": value}
    if isinstance(value, (list, tuple)):
        return {"kind": "choices", "choices": value}
    return value


#: The attribute :func:`~proofgym.judges.register_criterion` names a function with.
CRITERION_NAME_ATTRIBUTE = "__proofgym_criterion__"


def criterion_name(function: Callable[..., Any]) -> str:
    """The name a criterion function is known by in verdicts and traces: the name it was registered under
    (:func:`~proofgym.judges.register_criterion`), else ``"module:qualname"``."""
    name = getattr(function, CRITERION_NAME_ATTRIBUTE, None)
    if isinstance(name, str) and name:
        return name
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', type(function).__name__)}"


class Criterion(_Strict):
    """One thing a judge scores. ``function`` is a programmatic criterion, the function itself or the name it is
    registered under (kept as the name, :func:`criterion_name`; the function as :attr:`callable`); without it an
    LLM judges."""

    id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:/-]+$")
    description: str = Field(min_length=1, max_length=4000)
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    required: bool = False
    scale: Scale = Scale()
    function: str | None = Field(default=None, min_length=1)

    _callable: Callable[..., Any] | None = PrivateAttr(default=None)
    _coerce_scale = field_validator("scale", mode="before")(lambda cls, v: _scale(v))

    @model_validator(mode="wrap")
    @classmethod
    def _function_object(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        """``function`` given as a function: validated under its name, the function kept beside it."""
        function = data.get("function") if isinstance(data, Mapping) else None
        if function is None or isinstance(function, str) or not callable(function):
            return handler(data)
        criterion = handler({**data, "function": criterion_name(function)})
        criterion._callable = function
        return criterion

    @property
    def programmatic(self) -> bool:
        return self.function is not None

    @property
    def callable(self) -> Callable[..., Any] | None:
        """The criterion function itself when the rubric gave it by object (``None``: look ``function`` up)."""
        return self._callable


class Rubric(_Strict):
    """A goal, its criteria and how they aggregate (see the module docstring)."""

    id: str = Field(default="rubric", min_length=1, max_length=128)
    version: str = Field(default="1", min_length=1, max_length=64)
    goal_text: str = Field(default="", max_length=8000)
    criteria: tuple[Criterion, ...] = Field(min_length=1, max_length=64)
    aggregation: Aggregation = "weighted_sum"

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        seen: set[str] = set()
        for criterion in self.criteria:
            if criterion.id in seen:
                raise ValueError(f"criterion id {criterion.id!r} is given twice")
            seen.add(criterion.id)
        return self

    @property
    def label(self) -> str:
        return f"{self.id}@{self.version}"

    def criterion(self, criterion_id: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(criterion_id)

    def only(self, ids: set[str] | frozenset[str]) -> Rubric:
        """This rubric with only the criteria in ``ids`` (kept in order)."""
        kept = tuple(c for c in self.criteria if c.id in ids)
        if not kept:
            raise ValueError(f"rubric {self.label}: no criterion left of {sorted(ids)}")
        return self.model_copy(update={"criteria": kept})

    def total(self, scores: Mapping[str, float | None]) -> float | None:
        """The aggregate of normalised ``scores`` (``{criterion id: score on its scale}``), or ``None`` (abstain) when
        a criterion has no valid score. A required criterion at its minimum caps the total at 0."""
        normalised: list[tuple[Criterion, float]] = []
        for criterion in self.criteria:
            score = scores.get(criterion.id)
            if score is None or criterion.scale.problem(score) is not None:
                return None
            normalised.append((criterion, criterion.scale.normalise(score)))
        if any(c.required and s <= 0.0 for c, s in normalised):
            return 0.0
        if self.aggregation == "weighted_sum":
            return sum(s * c.weight for c, s in normalised) / sum(c.weight for c, _ in normalised)
        if self.aggregation == "sum":
            return sum(s * c.weight for c, s in normalised)
        if self.aggregation == "min":
            return min(s for _, s in normalised)
        return 1.0 if all(s >= 1.0 for _, s in normalised) else 0.0


class RubricWeights(_Strict):
    """How the reward blends: ``env·env_return + event·Σ event totals + outcome·outcome total``."""

    env: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    event: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    outcome: float = Field(default=0.0, ge=0, allow_inf_nan=False)


class RubricSet(_Strict):
    """The rubrics of one task: an event rubric (each decision), an outcome rubric (the whole trajectory), and the
    blend weights. ``event_window`` is how many earlier steps an event judge sees beside the decision it scores."""

    event: Rubric | None = None
    outcome: Rubric | None = None
    weights: RubricWeights = RubricWeights()
    event_window: int = Field(default=3, ge=0, le=64)

    @model_validator(mode="after")
    def _something(self) -> RubricSet:
        if self.event is None and self.outcome is None:
            raise ValueError("a rubric set needs an event rubric, an outcome rubric, or both")
        return self

    def rubrics(self) -> list[tuple[str, Rubric]]:
        return [(level, rubric) for level, rubric in (("event", self.event), ("outcome", self.outcome))
                if rubric is not None]

    def needs_llm(self) -> list[str]:
        """``level.criterion`` of every criterion an LLM judges."""
        return [f"{level}.{c.id}" for level, rubric in self.rubrics() for c in rubric.criteria if not c.programmatic]

    def programmatic_only(self) -> RubricSet:
        """This set without its LLM criteria (a level left with none is dropped); ``ValueError`` if nothing is left.
        The blend weights stay as they are: a dropped level contributes nothing."""
        update: dict[str, Any] = {}
        for level, rubric in self.rubrics():
            kept = {c.id for c in rubric.criteria if c.programmatic}
            update[level] = rubric.only(kept) if kept else None
        if all(value is None for value in update.values()):
            raise ValueError("every criterion of this rubric set needs an LLM judge")
        return self.model_copy(update=update)


# -- reading ---------------------------------------------------------------------------------------------------------

def rubric_set_from_data(data: Mapping[str, Any], *, source: str) -> RubricSet:
    """A :class:`RubricSet` from plain data, in any of the accepted forms; :class:`ConfigError` naming ``source``
    and the key path for anything invalid.

    Accepted: one rubric (``{criteria: [...], ...}``, an outcome rubric unless ``level = "event"``); a set
    (``{event: {...}, outcome: {...}, weights: {...}, event_window}``); either under a ``rubric`` key; and the
    reference's form ``[rubric] [rubric.weights] [rubric.event] [rubric.outcome]`` with
    ``criteria = [{key, weight, description, aggregation}]`` and ``rubric_id = "name@version"``.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping, got {type(data).__name__}")
    prefix: tuple[Any, ...] = ()
    if "rubric" in data and isinstance(data["rubric"], Mapping):
        prefix, data = ("rubric",), data["rubric"]
    body = dict(data)
    # The reference's [rubric] table has these beside the rubrics; they configure its hosted judge, not the rubric.
    for key in ("enabled", "model", "api_base", "api_key_env"):
        body.pop(key, None)
    if "criteria" in body:
        level = body.pop("level", "outcome")
        if level not in LEVELS:
            raise ConfigError(f"{source}: {'.'.join((*prefix, 'level')) or 'level'}: expected 'event' or 'outcome', "
                              f"got {level!r}")
        body = {level: body}
    for level in LEVELS:
        if isinstance(body.get(level), Mapping):
            body[level] = _rubric_body(body[level], level)
    try:
        return RubricSet.model_validate(body, strict=False)
    except ValidationError as exc:
        problems = [{**p, "loc": (*prefix, *p["loc"])} for p in config_problems(exc.errors(include_url=False))]
        raise ConfigError("\n".join(problem_line(source, p) for p in problems), problems=problems) from None


def _rubric_body(body: Mapping[str, Any], level: str) -> dict[str, Any]:
    """A rubric mapping with the reference's spellings turned into ours (``rubric_id``, criteria ``key`` and a
    per-criterion ``aggregation``, which must agree with the rubric's)."""
    body = dict(body)
    rubric_id = body.pop("rubric_id", None)
    if isinstance(rubric_id, str) and rubric_id:
        name, _, version = rubric_id.partition("@")
        body.setdefault("id", name or level)
        if version:
            body.setdefault("version", version)
    body.setdefault("id", level)
    criteria = body.get("criteria")
    if isinstance(criteria, list):
        converted = []
        for item in criteria:
            if isinstance(item, Mapping):
                item = dict(item)
                if "key" in item and "id" not in item:
                    item["id"] = item.pop("key")
                per_criterion = item.pop("aggregation", None)
                if per_criterion is not None:
                    body.setdefault("aggregation", per_criterion)
            converted.append(item)
        body["criteria"] = converted
    return body


def load_rubric_set(path: str | Path) -> RubricSet:
    """Read a rubric file (``.yaml`` / ``.yml`` / ``.toml`` / ``.json``) in any form :func:`rubric_set_from_data`
    accepts; errors name the file and the key."""
    path = Path(path)
    return rubric_set_from_data(read_config_file(path), source=str(path))
