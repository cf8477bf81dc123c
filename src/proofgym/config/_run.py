"""The run config (``kind: run``): one file that describes a reward path (parser, verifier, runtime, reward) and,
in its ``training:`` section, what ``proofgym train`` trains against it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, field_validator, model_validator

from proofgym.core import ConfigError, config_problems, problem_line
from proofgym.config._files import read_config_file
from proofgym.config._kinds import RUN_CONFIG, normalize_config
from proofgym.config._train import TrainingSection
from proofgym.parsers import build_parser, validate_parser_options
from proofgym.rewards import DefaultRewardShaper, ErrorBudget, RewardFunction, ShaperConfig
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.verifiers import (
    Verifier,
    VerifierOptionsError,
    build_verifier,
    validate_verifier_options,
    verifier_kind,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ParserSection(BaseModel):
    """Which parser reads completions (``kind``, a registered parser kind) and its options: the other keys,
    validated strictly by that kind's options model, where the kind is defined. Each option is readable as an
    attribute (``config.parser.decisions``), with the kind's default when the file leaves it out."""

    model_config = ConfigDict(extra="allow")

    kind: str = "json_block"
    _options: BaseModel | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _check_options(self) -> ParserSection:
        given = dict(self.model_extra or {})
        self._options = validate_parser_options(self.kind, given)
        # Every option as an attribute, its default included: what the kind will build from.
        extra = self.__pydantic_extra__ if self.__pydantic_extra__ is not None else {}
        extra.update({name: getattr(self._options, name) for name in type(self._options).model_fields})
        return self

    @property
    def options(self) -> BaseModel:
        """The kind's validated options."""
        if self._options is None:
            self._options = validate_parser_options(self.kind, dict(self.model_extra or {}))
        return self._options

    def build(self) -> Any:
        return build_parser(self.kind, self.options)


class VerifierSection(BaseModel):
    """``kind`` picks a registered verifier; the other keys are that kind's options."""

    model_config = ConfigDict(extra="allow")

    kind: str

    @model_validator(mode="after")
    def _check_verifier_options(self) -> VerifierSection:
        validate_verifier_options(self.kind, self.options)
        return self

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def build(self) -> Verifier:
        return build_verifier(self.kind, self.options)

    def _relative_to(self, folder: Path) -> None:
        """Read the paths the kind takes relative to the config file as relative to ``folder`` (its
        :attr:`~proofgym.verifiers.VerifierKind.relative_to`; a kind without one is left as it is)."""
        resolve = verifier_kind(self.kind).relative_to
        if resolve is not None and self.__pydantic_extra__ is not None:
            self.__pydantic_extra__.update(resolve(dict(self.__pydantic_extra__), folder))


class RunConfig(_Strict):
    """A validated run config (a file declares ``kind: run``). Build the reward function with
    :meth:`reward_function`. The ``error_budget:`` section is :class:`~proofgym.rewards.ErrorBudget` itself, the
    ``reward:`` section :class:`~proofgym.rewards.ShaperConfig`, ``runtime:``
    :class:`~proofgym.runtime.RuntimeConfig`."""

    name: str = "run"
    parser: ParserSection = ParserSection()
    verifier: VerifierSection
    runtime: RuntimeConfig = RuntimeConfig()
    reward: ShaperConfig = ShaperConfig()
    error_budget: ErrorBudget = ErrorBudget()
    training: TrainingSection | None = None
    _source: Path | None = PrivateAttr(None)

    @property
    def source(self) -> Path | None:
        """The file this config was loaded from, if any."""
        return self._source

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    def reward_function(self) -> RewardFunction:
        """Wire parser -> runtime(verifier) -> shaper into a reward function.

        A verifier that cannot be built (an unknown domain, a rulebook file that is missing or invalid, a
        function that cannot be imported) is a :class:`ConfigError` naming this config's file and the
        ``verifier`` key at fault, one line per problem.
        """
        source = self._source or "<config>"
        try:
            verifier = self.verifier.build()
        except VerifierOptionsError as exc:
            problems = config_problems([{"loc": ("verifier",), "msg": str(exc), "type": "value_error",
                                         "ctx": {"error": exc}}])
            raise ConfigError("\n".join(problem_line(source, problem) for problem in problems),
                              problems=problems) from None
        return RewardFunction(
            parser=self.parser.build(),
            runtime=VerificationRuntime(verifier, self.runtime),
            shaper=DefaultRewardShaper(self.reward),
            error_budget=self.error_budget,
        )


def parse_run_config(data: dict[str, Any], *, source: str | Path = "<config>") -> RunConfig:
    """Validate already-parsed config data strictly (``true`` is not a number, ``"3"`` not an integer, in
    every section); :class:`ConfigError` has one line per problem, naming the source and the key path, or one line
    naming the command that reads ``data`` when it is another kind of file (an eval or RL config). A ``kind`` key
    must say ``run``; a file without one, or with the old ``train:`` section, loads with a deprecation line
    (:func:`~proofgym.config.normalize_config`)."""
    data = normalize_config(data, source=source, kind=RUN_CONFIG)
    try:
        config = RunConfig.model_validate(data, strict=True)
    except ValidationError as exc:
        problems = config_problems(exc.errors())
        raise ConfigError("\n".join(problem_line(source, problem) for problem in problems),
                          problems=problems) from None
    config._source = Path(source) if source != "<config>" else None
    if config._source is not None:
        config.verifier._relative_to(config._source.parent)
    return config


def load_run_config(path: str | Path) -> RunConfig:
    """Load and validate a YAML or TOML run config (``kind: run``)."""
    return parse_run_config(read_config_file(path), source=path)
