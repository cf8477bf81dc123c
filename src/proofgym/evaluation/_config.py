"""The eval config (``kind = "eval"``): a TOML file with ``[evaluation]``, ``[evaluation.env_config]``,
``[evaluation.policy_config]`` and the judges, ``[evaluation.judge]`` / ``[[evaluation.judges]]``; ``[compute]`` for a
Ray cluster. A file of the old spelling (``[eval]``, no ``kind``) still loads, with one deprecation line."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from proofgym.config import (
    EVAL_CONFIG,
    ConfigError,
    config_problems,
    normalize_config,
    problem_line,
    read_config_file,
)
from proofgym.evaluation._judges import EvaluationJudgeSection, check_judges, expected_judge_keys, judge_entries
from proofgym.runtime import RayPlacement

_MAX_SEEDS = 1_000_000
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")
# Policy names that are not inference providers: a provider naming one of them picks it.
_POLICY_PROVIDERS = ("hf", "local", "scripted", "oracle")


class PolicyConfigSection(BaseModel):
    """``[evaluation.policy_config]``: the reference's keys, and any key the chosen policy accepts
    (``actions`` of a scripted policy, ``api_key_env``, ``timeout_s``, ...), which the policy validates.

    ``provider`` picks the policy when ``[evaluation] policy_name`` is absent (an inference provider such
    as ``openai``, ``vllm`` or ``groq`` means the OpenAI-compatible client); ``max_llm_calls`` caps
    the model calls of a rollout (one per turn). Neither is passed to the policy. ``use_vision`` and
    ``image_only_mode`` (the reference's Crafter files) show the model the observation's frame, beside its text or
    instead of it: the ``openai`` policy takes them; any other refuses them when true (it shows its model text
    only). The observations carry a frame only when the environment renders one (crafter: ``use_vision = true``
    in ``[evaluation.env_config]``): an environment that runs here and takes that key gets it set to true when
    ``[evaluation.env_config]`` leaves it out; ``warnings`` says so, and warns where it is false or the task app
    decides.
    """

    model_config = ConfigDict(extra="allow")

    provider: str | None = Field(None, min_length=1)
    model: str | None = Field(None, min_length=1)
    inference_url: str | None = Field(None, min_length=1)
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_llm_calls: int | None = Field(None, ge=1)
    use_vision: bool | None = None
    image_only_mode: bool | None = None


#: Keys of ``[evaluation.policy_config]`` that are not the policy's own.
_NOT_POLICY_KEYS = {"provider", "max_llm_calls"}


class EvaluationSection(BaseModel):
    """``[evaluation]``. Ours besides the reference's keys: ``traces`` (the trace store, a path or URL;
    default ``traces/proofgym.db``), ``max_time_s`` (per rollout) and ``api_key_env`` (the variable
    holding the task app's key; default ``ENVIRONMENT_API_KEY``, then ``PROOFGYM_API_KEY``,
    ``ENV_API_KEY``). With a ``task_app_url`` the rollouts run there and ``return_trace`` /
    ``trace_format`` say what comes back: full traces (the default) are stored here too.
    ``max_turns`` caps the turns either way.

    ``judge`` / ``judges`` are the judges that score every finished trajectory (see
    :mod:`proofgym.evaluation._judges`); their keys are checked strictly.

    So that the reference's eval files run as written, a key this section does not know is kept aside and
    reported by :meth:`warnings` (one line naming them all), never refused. A ``policy_name`` that is no proofgym
    policy (the reference's app-side name, such as ``verilog-designer``) next to an inference provider or URL means
    the policy the provider implies.
    """

    model_config = ConfigDict(extra="allow")

    app_id: str | None = Field(None, min_length=1)
    task_app_url: str | None = None
    model: str | None = Field(None, min_length=1)
    seeds: list[int]
    max_turns: int | None = Field(None, ge=1, le=100_000)
    concurrency: int = Field(4, ge=1, le=1024)
    env_name: str | None = Field(None, min_length=1)
    policy_name: str | None = Field(None, min_length=1)
    trace_format: Literal["compact", "full"] = "full"
    return_trace: bool = True
    traces: str | None = Field(None, min_length=1)
    max_time_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    api_key_env: str | None = Field(None, min_length=1)
    env_config: dict[str, Any] = Field(default_factory=dict)
    policy_config: PolicyConfigSection = Field(default_factory=PolicyConfigSection)
    judge: EvaluationJudgeSection | None = None
    judges: list[EvaluationJudgeSection] = Field(default_factory=list)
    _frames_turned_on: bool = PrivateAttr(False)

    @field_validator("seeds", mode="before")
    @classmethod
    def _seed_list(cls, value: Any) -> Any:
        return parse_seeds(value)

    @field_validator("task_app_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError("expected an http:// or https:// URL with a host")
        return value

    @model_validator(mode="after")
    def _runnable(self) -> EvaluationSection:
        if self.task_app_url is None and self.env_name is None:
            raise ValueError("env_name is required when there is no task_app_url (the environment runs here)")
        if self.policy_name is None and self.policy_config.provider is None and \
                self.policy_config.inference_url is None:
            raise ValueError("policy_name is required (or policy_config.provider / policy_config.inference_url "
                             "for a model server)")
        return self

    @model_validator(mode="after")
    def _frames_rendered(self) -> EvaluationSection:
        """Frames asked for by the policy (``use_vision`` / ``image_only_mode``) turn on the environment's
        ``use_vision`` when it runs here, takes that key, and ``[evaluation.env_config]`` does not set it (an explicit
        false is kept, and :meth:`warnings` says so)."""
        asked = self.policy_config.use_vision or self.policy_config.image_only_mode
        if not asked or self.task_app_url is not None or self.env_name is None or "use_vision" in self.env_config:
            return self
        from proofgym.envs import env_names, make  # the environments' own configs say whether they take the key

        if self.env_name not in env_names():
            return self
        try:
            make(self.env_name, **self.env_config, use_vision=True).close()
        except Exception:  # noqa: BLE001 - it does not take the key (or its config is bad: reported at the start)
            return self
        self.env_config = {**self.env_config, "use_vision": True}
        self._frames_turned_on = True
        return self

    @property
    def resolved_policy_name(self) -> str:
        """``policy_name``, else the policy the provider implies (an OpenAI-compatible server by default).

        A ``policy_name`` that names no proofgym policy yields to the provider's when ``policy_config`` has a
        ``provider`` or an ``inference_url`` (the reference names its task app's policy there)."""
        if self.policy_name is not None and not self._policy_name_is_foreign():
            return self.policy_name
        provider = (self.policy_config.provider or "openai").lower()
        return provider if provider in _POLICY_PROVIDERS else "openai"

    @property
    def ignored_keys(self) -> list[str]:
        """The keys of ``[evaluation]`` this section does not read, sorted."""
        return sorted(self.model_extra or {})

    def judge_entries(self) -> list[tuple[str, EvaluationJudgeSection]]:
        """``(where, entry)`` of every judge: ``("evaluation.judge", ...)`` then ``("evaluation.judges[i]", ...)``."""
        return judge_entries(self)

    def warnings(self) -> list[str]:
        """One line per thing in the file that is not honoured: the unknown keys (all on one line), a
        ``policy_name`` replaced by the provider's policy, and frames asked for that the environment is not told
        to render."""
        lines = []
        unknown = self.ignored_keys
        if unknown:
            lines.append(f"evaluation: ignoring unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                         f"(proofgym eval reads {', '.join(_known_keys())})")
        if self.policy_name is not None and self._policy_name_is_foreign():
            lines.append(f"evaluation.policy_name: {self.policy_name!r} is not a proofgym policy; using "
                         f"{self.resolved_policy_name!r}, the policy of policy_config."
                         f"{'provider' if self.policy_config.provider else 'inference_url'}")
        shown = [key for key in ("use_vision", "image_only_mode") if getattr(self.policy_config, key)]
        if shown and self._frames_turned_on:
            lines.append(f"evaluation.env_config: use_vision = true (set for policy_config.{shown[0]}: the environment "
                         "renders the frame the model is shown)")
        elif shown and self.env_config.get("use_vision") is not True:
            where = "[evaluation.env_config]" + (" or the task app's env config" if self.task_app_url else "")
            verb = "show" if len(shown) > 1 else "shows"
            lines.append(f"evaluation.policy_config: {' and '.join(shown)} {verb} the model the observation's frame, "
                         "and an observation carries one only when the environment renders it (crafter: use_vision = "
                         f"true in {where})")
        return lines

    def _policy_name_is_foreign(self) -> bool:
        if self.policy_config.provider is None and self.policy_config.inference_url is None:
            return False
        from proofgym.policies import policy_names  # a registry lookup, loading no policy

        return self.policy_name not in policy_names()

    @property
    def turn_limit(self) -> int | None:
        """``max_turns`` capped by ``policy_config.max_llm_calls``."""
        limits = [n for n in (self.max_turns, self.policy_config.max_llm_calls) if n is not None]
        return min(limits, default=None)

    def policy_options(self) -> dict[str, Any]:
        """The config given to the policy: ``policy_config`` without ``provider`` and ``max_llm_calls``, with
        ``[evaluation] model`` as the default model."""
        options = self.policy_config.model_dump(exclude_none=True, exclude=_NOT_POLICY_KEYS)
        if self.model is not None:
            options.setdefault("model", self.model)
        return options


class ComputeSection(RayPlacement):
    """``[compute]``: where the rollouts run. With ``ray_address`` (or ``proofgym eval --ray ADDRESS``) they run
    as Ray actors spread over that cluster (``auto``, ``host:port`` or ``ray://host:port``), each reserving
    ``num_cpus`` CPUs (and ``num_gpus``, ``memory``, custom ``resources`` when given); ``workers`` actors at most
    (default: ``[evaluation] concurrency``, capped by what the cluster holds). ``[compute.runtime_env]`` is what
    Ray ships to every node (:class:`~proofgym.runtime.RayRuntimeEnv`)."""

    model_config = ConfigDict(extra="forbid")

    ray_address: str | None = Field(None, min_length=1)
    workers: int | None = Field(None, ge=1, le=1024)

    @field_validator("ray_address")
    @classmethod
    def _ray_address(cls, value: str | None) -> str | None:
        from proofgym.runtime import RayConfig  # the one check of a Ray address

        if value is not None:
            try:
                RayConfig(address=value)
            except ValidationError:
                raise ValueError("expected 'auto', 'host:port' or 'ray://host:port'") from None
        return value


class EvalConfig(BaseModel):
    """A whole eval file (``kind = "eval"``): one ``[evaluation]`` table, and ``[compute]`` when the rollouts run on
    a Ray cluster."""

    model_config = ConfigDict(extra="forbid")

    evaluation: EvaluationSection
    compute: ComputeSection | None = None


def _known_keys() -> list[str]:
    return sorted(EvaluationSection.model_fields)


def parse_seeds(value: Any) -> list[int]:
    """Seeds as a list: a list of non-negative integers, an integer, or a string of ranges (``"0-31"``,
    ``"0-7,10,12-15"``, bounds inclusive). Raises ``ValueError`` for anything else or a repeated seed."""
    if isinstance(value, bool):
        raise ValueError("expected a list of seeds or a range such as '0-31'")
    if isinstance(value, int):
        value = [value]
    if isinstance(value, str):
        seeds: list[int] = []
        for part in value.split(","):
            found = _RANGE.match(part)
            if found is None:
                raise ValueError(f"{part.strip()!r} is not a seed or a range such as '0-31'")
            low, high = int(found.group(1)), int(found.group(2) or found.group(1))
            if high < low:
                raise ValueError(f"range {part.strip()!r} ends before it starts")
            if len(seeds) + high - low + 1 > _MAX_SEEDS:
                raise ValueError(f"more than {_MAX_SEEDS} seeds")
            seeds.extend(range(low, high + 1))
        value = seeds
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty list of seeds or a range such as '0-31'")
    for seed in value:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"every seed must be an integer >= 0, got {seed!r}")
    repeated = sorted(seed for seed, count in Counter(value).items() if count > 1)
    if repeated:
        raise ValueError(f"seeds repeat: {repeated[:10]}")
    return list(value)


def parse_eval_config(data: dict[str, Any], *, source: str | Path = "<config>") -> EvalConfig:
    """Validate eval config data strictly (``concurrency = true`` is not a number); ``ConfigError`` has one
    line per problem, naming the source and the key path. Each judge's rubric is read here, so that a bad
    rubric stops the eval before any rollout. Data of another kind of file (a run or RL config) is one line naming
    the command that reads it. A ``kind`` key must say ``eval``; a file without one, or with the old ``[eval]``
    table, loads with a deprecation line (:func:`~proofgym.config.normalize_config`)."""
    data = normalize_config(data, source=source, kind=EVAL_CONFIG)
    try:
        config = EvalConfig.model_validate(data, strict=True)
    except ValidationError as exc:
        problems = [_with_expected_keys(problem) for problem in config_problems(exc.errors())]
        raise ConfigError("\n".join(problem_line(source, problem) for problem in problems),
                          problems=problems) from None
    _check_local_policy(config.evaluation, source)
    check_judges(config.evaluation.judge_entries(), source)
    return config


def _check_local_policy(section: EvaluationSection, source: str | Path) -> None:
    """A ``policy_name`` that names no policy, when the policy is built here (no task app, which knows its own
    policies): refused with the file and the key, before any rollout."""
    if section.task_app_url is not None or section.policy_name is None or section._policy_name_is_foreign():
        return
    from proofgym.policies import policy_names  # a registry lookup, loading no policy

    known = policy_names()
    if section.policy_name not in known:
        problem = {"loc": ("evaluation", "policy_name"),
                   "msg": f"unknown policy {section.policy_name!r}; expected one of "
                   f"{', '.join(known)}", "input": section.policy_name, "type": "value_error"}
        raise ConfigError(problem_line(source, problem), problems=[problem])


def _with_expected_keys(problem: dict[str, Any]) -> dict[str, Any]:
    """An unknown key of a judge entry, with the keys an entry may have."""
    loc = problem["loc"]
    in_judge = loc[:2] == ("evaluation", "judge") or (loc[:2] == ("evaluation", "judges") and len(loc) > 2)
    if problem["type"] != "extra_forbidden" or not in_judge or "panel" in loc:
        return problem
    return {**problem, "type": "value_error",
            "msg": f"unknown key (a judge takes {', '.join(expected_judge_keys())})"}


def load_eval_config(path: str | Path) -> EvalConfig:
    """Read and validate an eval config file (TOML, or YAML); errors name the file and the key.

    A key that looks like a credential is refused, as in every config file.
    """
    return parse_eval_config(read_config_file(path), source=Path(path))
