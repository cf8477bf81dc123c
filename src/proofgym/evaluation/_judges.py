"""The judges of an eval: ``[evaluation.judge]`` and ``[[evaluation.judges]]``, each scoring every finished trajectory.

An entry is either the reference's form, Python code the user owns::

    [evaluation.judge]
    path = "judges/mine.py"        # or module = "pkg.mod" / "pkg.mod:attr"
    name = "mine"                  # the judge's name in the report
    model = "m"                    # passed to a factory that takes it, as are timeout_s, backend_url and options
    timeout_s = 45

or ours, a rubric and the LLM that judges its non-programmatic criteria::

    [evaluation.judge]
    rubric = "rubrics/verilog.yaml"    # or an inline [evaluation.judge.rubric], in either rubric form
    judge_url = "http://127.0.0.1:8001/v1"
    model = "judge-model"
    api_key_env = "JUDGE_API_KEY"
    panel = ["model-a", "model-b"]     # optional: a Panel of LLM judges (tables {judge_url, model, api_key_env} too)

The code names its judge with ``callable`` / ``function`` (the reference's keys), the ``:attr`` of ``module``, or an
attribute called ``name``; otherwise the module's ``judge``, else its one public :class:`~proofgym.judges.Judge`.
That object is a Judge (``name`` + async ``judge(items)``) or a factory returning one. It judges against the entry's
rubric, or without one against a one-criterion outcome rubric (``score``, 0 to 1). Relative paths are relative to the
working directory.

The score of a trajectory is one number: the blended reward's value when the rubric set's weights blend in a judged
level (``event`` or ``outcome`` weight above 0), else the outcome rubric's total (else the event total); ``None``
when a component abstained. A judge whose code cannot be loaded is reported as not run (the reference's files name
judge modules of the reference's repository); every other problem stops the eval before it starts.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from proofgym.config import ConfigError
from proofgym.core import ErrorKind
from proofgym.evaluation._errors import EvalError
from proofgym.judges import (
    RUBRIC_SETS,
    Judge,
    JudgeItem,
    JudgeVerdict,
    RubricScorer,
    RubricSet,
    TrajectoryScore,
    load_rubric_set,
    rubric_set_from_data,
)
from proofgym.traces import SessionTrace

#: The rubric a code judge without one scores: the whole trajectory, 0 to 1.
DEFAULT_RUBRIC: dict[str, Any] = {"outcome": {"id": "judge", "criteria": [
    {"id": "score", "description": "How well the trajectory achieves its task, from 0 (not at all) to 1 (fully)."}]}}
ScoreKind = Literal["blended", "outcome", "event"]


class PanelMember(BaseModel):
    """One LLM judge of a panel given as a table: its own server (else the entry's), model and key variable."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    judge_url: str | None = Field(None, min_length=1)
    base_url: str | None = Field(None, min_length=1)
    api_key_env: str | None = Field(None, min_length=1)
    name: str | None = Field(None, min_length=1)


class EvaluationJudgeSection(BaseModel):
    """One ``[evaluation.judge]`` / ``[[evaluation.judges]]`` entry (see the module docstring). Unknown keys are
    refused."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = Field(None, min_length=1, max_length=128)
    path: str | None = Field(None, min_length=1)
    module: str | None = Field(None, min_length=1)
    callable_: str | None = Field(None, alias="callable", min_length=1)
    function: str | None = Field(None, min_length=1)
    rubric: str | dict[str, Any] | None = None
    judge_url: str | None = Field(None, min_length=1)
    base_url: str | None = Field(None, min_length=1)
    backend_url: str | None = Field(None, min_length=1)
    model: str | None = Field(None, min_length=1)
    panel: list[PanelMember] | None = Field(None, min_length=1)
    aggregate: Literal["mean", "median", "majority"] = "mean"
    min_valid: int = Field(1, ge=1)
    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    api_key_env: str | None = Field(None, min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)

    _rubrics: RubricSet | None = PrivateAttr(None)

    @field_validator("panel", mode="before")
    @classmethod
    def _model_names(cls, value: Any) -> Any:
        """A panel member given as a string is the model of that name, on the entry's server."""
        if isinstance(value, list):
            return [{"model": member} if isinstance(member, str) else member for member in value]
        return value

    @model_validator(mode="after")
    def _one_judge(self) -> EvaluationJudgeSection:
        if self.path is not None and self.module is not None:
            raise ValueError("give path or module, not both")
        if self.judge_url is not None and self.base_url is not None:
            raise ValueError("give judge_url or base_url, not both")
        if self.callable_ is not None and self.function is not None:
            raise ValueError("give callable or function, not both")
        code = self.path is not None or self.module is not None
        if code and (self.url is not None or self.panel is not None):
            raise ValueError("a judge is Python code (path / module) or an LLM (judge_url / panel), not both")
        if not code and (self.callable_ or self.function or self.options or self.backend_url):
            raise ValueError("callable, function, options and backend_url are for a judge given as path / module")
        if self.url is not None and self.model is None and self.panel is None:
            raise ValueError("judge_url needs the judge's model")
        if self.panel is None and (self.aggregate != "mean" or self.min_valid != 1):
            raise ValueError("aggregate and min_valid are for a panel")
        if self.panel is not None:
            if self.min_valid > len(self.panel):
                raise ValueError(f"min_valid is {self.min_valid} but the panel has {len(self.panel)} judges")
            for member in self.panel:
                if member.judge_url and member.base_url:
                    raise ValueError("a panel member gives judge_url or base_url, not both")
                if member.judge_url is None and member.base_url is None and self.url is None:
                    raise ValueError(f"panel member {member.model!r} has no server: set judge_url")
        return self

    @property
    def url(self) -> str | None:
        """The LLM judge's server (``judge_url``, or its alias ``base_url``)."""
        return self.judge_url or self.base_url

    @property
    def is_code(self) -> bool:
        return self.path is not None or self.module is not None

    @property
    def rubrics(self) -> RubricSet:
        """The rubric set this judge scores with (read by :func:`check_judges`)."""
        if self._rubrics is None:
            raise RuntimeError("the judge's rubric is not read yet: check_judges() reads it")
        return self._rubrics


def expected_judge_keys() -> list[str]:
    """The keys an ``[evaluation.judge]`` entry may have, as a file spells them."""
    return sorted(f.alias or name for name, f in EvaluationJudgeSection.model_fields.items())


def check_judges(entries: Sequence[tuple[str, EvaluationJudgeSection]], source: Any) -> None:
    """Read each entry's rubric and check what the entries need of each other; :class:`ConfigError` naming
    ``source`` and the entry (``evaluation.judge`` / ``evaluation.judges[i]``) for each problem."""
    problems: list[str] = []
    names: dict[str, str] = {}
    for where, entry in entries:
        name = judge_name(where, entry)
        if where.startswith("evaluation.judges[") and entry.name is None:
            problems.append(f"{source}: {where}.name: required key missing (each of [[evaluation.judges]] is named)")
        elif name in names:
            problems.append(f"{source}: {where}.name: {name!r} is also the name of {names[name]}")
        names.setdefault(name, where)
        try:
            rubrics = _read_rubrics(entry, source, where)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        llm = rubrics.needs_llm()
        if llm and not entry.is_code and entry.url is None and entry.panel is None:
            problems.append(f"{source}: {where}: criteria {', '.join(llm)} need an LLM judge: set judge_url and model "
                            "(or panel, or path / module for a Python judge)")
        entry._rubrics = rubrics
    if problems:
        raise ConfigError("\n".join(problems))


def judge_name(where: str, entry: EvaluationJudgeSection) -> str:
    """The name a judge is reported under: its ``name``, else ``judge`` (``[evaluation.judge]``) or ``judge<i+1>``."""
    if entry.name is not None:
        return entry.name
    if where == "evaluation.judge":
        return "judge"
    return f"judge{int(where.removeprefix('evaluation.judges[').rstrip(']')) + 1}"


def _read_rubrics(entry: EvaluationJudgeSection, source: Any, where: str) -> RubricSet:
    if entry.rubric is None:
        if not entry.is_code and entry.url is None and entry.panel is None:
            raise ConfigError(f"{source}: {where}: nothing to judge with: set rubric (a file or an inline "
                              f"[{where}.rubric]), or path / module for a Python judge")
        return rubric_set_from_data(DEFAULT_RUBRIC, source="the default judge rubric")
    if isinstance(entry.rubric, str):
        path = Path(entry.rubric).expanduser()
        if not path.exists() and entry.rubric in RUBRIC_SETS:
            return RUBRIC_SETS.get(entry.rubric)
        if not path.is_file():
            raise ConfigError(f"{source}: {where}.rubric: no rubric file at {str(path)!r}")
        return load_rubric_set(path)
    return rubric_set_from_data(entry.rubric, source=f"{source}: {where}.rubric")


# -- building ---------------------------------------------------------------------------------------------------------

@dataclass
class EvalJudge:
    """A judge of an eval, ready to score: ``scorer`` (``None`` when the judge could not be built: ``problem`` says
    why), what its one number per trajectory is (``score_kind``), and what to close when the eval ends."""

    name: str
    scorer: RubricScorer | None
    score_kind: ScoreKind
    problem: str | None = None
    timeout_s: float | None = None
    closers: list[Any] = field(default_factory=list)

    async def score(self, traces: Sequence[SessionTrace], *, concurrency: int = 4) -> list[TrajectoryScore]:
        """One score per trace, each trajectory judged on its own (so ``timeout_s`` bounds one trajectory)."""
        assert self.scorer is not None
        slots = asyncio.Semaphore(concurrency)

        async def one(trace: SessionTrace) -> TrajectoryScore:
            async with slots:
                [score] = await self.scorer.score([trace])  # type: ignore[union-attr]
            return score

        return list(await asyncio.gather(*(one(trace) for trace in traces)))

    def value(self, score: TrajectoryScore) -> float | None:
        """The trajectory's one number (see the module docstring); ``None`` when it abstained."""
        reward = score.reward
        if reward.abstained:
            return None
        if self.score_kind == "blended":
            return reward.value
        return reward.outcome_total if self.score_kind == "outcome" else reward.event_total

    async def aclose(self) -> None:
        for closer in self.closers:
            close = getattr(closer, "aclose", None) or getattr(closer, "close", None)
            if close is None:
                continue
            try:
                result = close()
                if inspect.isawaitable(result):
                    await result
            except Exception:  # noqa: BLE001 - a judge that fails to close does not undo the eval
                pass


def invalid_verdicts(score: TrajectoryScore) -> int:
    """How many of the judges' verdicts on this trajectory were invalid (each decision's and the outcome's)."""
    levels = [*score.events, *([] if score.outcome is None else [score.outcome])]
    return sum(1 for level in levels for verdict in level.verdicts if not verdict.valid)


def score_kind(rubrics: RubricSet) -> ScoreKind:
    """What a judge's one number per trajectory is, for this rubric set."""
    if rubrics.weights.event > 0 or rubrics.weights.outcome > 0:
        return "blended"
    return "outcome" if rubrics.outcome is not None else "event"


def build_judges(entries: Sequence[tuple[str, EvaluationJudgeSection]]) -> list[EvalJudge]:
    """Every entry's judge (entries checked by :func:`check_judges`). A Python judge that cannot be loaded is an
    :class:`EvalJudge` with its ``problem``; an LLM judge that cannot be built raises :class:`EvalError`."""
    return [_build(where, entry) for where, entry in entries]


def _build(where: str, entry: EvaluationJudgeSection) -> EvalJudge:
    if entry._rubrics is None:  # an entry not read through parse_eval_config
        check_judges([(where, entry)], "<config>")
    name, rubrics = judge_name(where, entry), entry.rubrics
    kind = score_kind(rubrics)
    judge: Any = None
    closers: list[Any] = []
    if entry.is_code:
        try:
            judge = _load_code_judge(entry)
        except _LoadError as exc:
            return EvalJudge(name, None, kind, problem=f"{where}: {exc}")
        closers.append(judge)
        if entry.timeout_s is not None:
            judge = _TimeLimited(judge, entry.timeout_s)
    elif entry.panel is not None:
        judge = _panel(where, entry, closers)
    elif entry.url is not None:
        judge = _llm_judge(where, entry.url, entry.model, entry.api_key_env, entry.timeout_s, None)  # type: ignore[arg-type]
        closers.append(judge)
    try:
        scorer = RubricScorer(rubrics, judge=judge)
    except ValueError as exc:
        raise EvalError(f"{where}: {exc}") from None
    return EvalJudge(name, scorer, kind, timeout_s=entry.timeout_s, closers=closers)


def _panel(where: str, entry: EvaluationJudgeSection, closers: list[Any]) -> Any:
    try:
        from proofgym.judges import Panel
    except ImportError:
        raise EvalError(f"{where}.panel: this proofgym has no Panel judge (proofgym.judges.Panel)") from None
    members = []
    for index, member in enumerate(entry.panel or ()):
        spot = f"{where}.panel[{index}]"
        judge = _llm_judge(spot, member.judge_url or member.base_url or entry.url, member.model,
                           member.api_key_env or entry.api_key_env, entry.timeout_s, member.name)
        closers.append(judge)
        members.append(judge)
    try:
        return Panel(members, aggregate=entry.aggregate, min_valid=entry.min_valid, name=entry.name)
    except ValueError as exc:
        raise EvalError(f"{where}.panel: {exc}") from None


def _llm_judge(where: str, url: str | None, model: str, api_key_env: str | None, timeout_s: float | None,
               name: str | None) -> Any:
    if url is None:
        raise EvalError(f"{where}: the LLM judge of model {model!r} needs judge_url")
    key = None
    if api_key_env is not None:
        key = os.environ.get(api_key_env, "").strip()
        if not key:
            raise EvalError(f"{where}.api_key_env: the environment variable {api_key_env!r} is not set")
    from proofgym.judges import LLMJudge

    options: dict[str, Any] = {"api_key": key, "name": name}
    if timeout_s is not None:
        options["timeout_s"] = timeout_s
    try:
        return LLMJudge(url, model, **options)
    except (ValueError, TypeError) as exc:
        raise EvalError(f"{where}: cannot build the LLM judge: {exc}") from None


# -- Python judges ----------------------------------------------------------------------------------------------------

class _LoadError(Exception):
    """The user's judge code cannot be loaded or gives no judge."""


def _load_code_judge(entry: EvaluationJudgeSection) -> Any:
    module, attribute = _import(entry)
    explicit = entry.callable_ or entry.function or attribute
    if explicit:
        obj, what = _attribute(module, explicit, entry), repr(explicit)
    elif entry.name is not None and hasattr(module, entry.name):
        obj, what = getattr(module, entry.name), f"{entry.name!r}"
    elif hasattr(module, "judge"):
        obj, what = module.judge, "'judge'"
    else:
        found = [key for key, value in vars(module).items() if not key.startswith("_") and _is_judge(value)]
        if len(found) != 1:
            held = f"more than one Judge object ({', '.join(found)})" if found else \
                "no 'judge' and no Judge object (a `name` and an async `judge(items)`)"
            raise _LoadError(f"{_where(entry)} has {held}: name its judge or factory with callable = \"...\"")
        obj, what = getattr(module, found[0]), repr(found[0])
    if _is_judge(obj):
        return obj
    if not callable(obj):
        raise _LoadError(f"{what} of {_where(entry)} is not a Judge nor a factory returning one")
    try:
        made = obj(**_factory_arguments(obj, entry))
    except Exception as exc:  # noqa: BLE001 - the user's factory: its failure leaves this judge out
        raise _LoadError(f"calling {what} of {_where(entry)} failed: {type(exc).__name__}: {exc}") from None
    if not _is_judge(made):
        raise _LoadError(f"{what} of {_where(entry)} returned {type(made).__name__}, not a Judge (a `name` and an "
                         "async `judge(items)` returning JudgeVerdicts)")
    return made


def _where(entry: EvaluationJudgeSection) -> str:
    return f"path {entry.path!r}" if entry.path is not None else f"module {entry.module!r}"


def _import(entry: EvaluationJudgeSection) -> tuple[Any, str | None]:
    if entry.module is not None:
        target, _, attribute = entry.module.partition(":")
        try:
            return importlib.import_module(target), attribute or None
        except Exception as exc:  # noqa: BLE001 - any failure of the user's import leaves this judge out
            raise _LoadError(f"cannot import module {target!r}: {type(exc).__name__}: {exc}") from None
    path = Path(entry.path).expanduser()  # type: ignore[arg-type]
    if not path.is_file():
        raise _LoadError(f"cannot load the judge: no file at {str(path)!r}")
    name = f"_proofgym_eval_judge_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _LoadError(f"cannot load {str(path)!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module: its failure leaves this judge out
        sys.modules.pop(name, None)
        raise _LoadError(f"loading {str(path)!r} failed: {type(exc).__name__}: {exc}") from None
    return module, None


def _attribute(module: Any, dotted: str, entry: EvaluationJudgeSection) -> Any:
    value = module
    for part in dotted.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise _LoadError(f"{_where(entry)} has no attribute {dotted!r}") from None
    return value


def _is_judge(value: Any) -> bool:
    return not isinstance(value, type) and isinstance(value, Judge) and callable(value.judge)


def _factory_arguments(factory: Any, entry: EvaluationJudgeSection) -> dict[str, Any]:
    """``model``, ``timeout_s``, ``backend_url`` (those given) and ``options``: those the factory accepts."""
    given = {key: value for key, value in (("model", entry.model), ("timeout_s", entry.timeout_s),
                                           ("backend_url", entry.backend_url)) if value is not None}
    given.update(entry.options)
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return given
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return given
    accepted = {p.name for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                         inspect.Parameter.KEYWORD_ONLY)}
    return {key: value for key, value in given.items() if key in accepted}


class _TimeLimited:
    """A Python judge bounded to ``timeout_s`` per call: a call that takes longer abstains (``timeout``)."""

    def __init__(self, judge: Judge, timeout_s: float) -> None:
        self._judge, self.timeout_s = judge, timeout_s
        self.name = judge.name

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        try:
            return list(await asyncio.wait_for(self._judge.judge(items), self.timeout_s))
        except asyncio.TimeoutError:
            return [JudgeVerdict.failed(self.name, item.rubric, ErrorKind.TIMEOUT.value,
                                        f"the judge took longer than timeout_s = {self.timeout_s:g} s")
                    for item in items]


def judge_entries(section: Any) -> list[tuple[str, EvaluationJudgeSection]]:
    """``(where, entry)`` of ``[evaluation.judge]`` then each of ``[[evaluation.judges]]``."""
    entries = [] if section.judge is None else [("evaluation.judge", section.judge)]
    return entries + [(f"evaluation.judges[{i}]", entry) for i, entry in enumerate(section.judges)]

