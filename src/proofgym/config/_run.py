"""The run config: one file that describes a reward path (parser, verifier, runtime, reward)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from proofgym.config._errors import ConfigError, config_problems, problem_line
from proofgym.config._files import read_config_file
from proofgym.config._train import TrainConfig
from proofgym.parsers import JSONBlockParser, ParseLimits, RegexFactParser
from proofgym.rewards import DefaultRewardShaper, ErrorBudget, RewardFunction, ShaperConfig
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.verifiers import Verifier, VerifierOptionsError, build_verifier, validate_verifier_options


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LimitsConfig(_Strict):
    """Bounds on what a parser will read."""

    max_completion_chars: int = Field(20_000, ge=1)
    max_json_chars: int = Field(8_000, ge=1)
    max_json_depth: int = Field(6, ge=1)
    max_facts: int = Field(64, ge=0)
    max_string_chars: int = Field(512, ge=1)


class ParserConfig(_Strict):
    """Which parser reads completions, and its output contract."""

    kind: Literal["json_block", "regex", "verilog"] = "json_block"
    answer_key: str = "classification"
    facts_key: str = "facts"
    tag: str = "decision"
    reasoning_tag: str = "reasoning"
    decisions: list[str] | None = None
    require_facts: bool = False
    limits: LimitsConfig = LimitsConfig()
    problems: str = Field("builtin", min_length=1,
                          description="verilog: 'builtin' or a VerilogEval folder, to look problems up in")
    problem_id: str | None = Field(None, description="verilog: the one problem answered (default: the prompt's "
                                                      "<!-- problem: ID --> marker)")

    def build(self) -> Any:
        limits = ParseLimits(**self.limits.model_dump())
        if self.kind == "verilog":
            # Imported here: the Verilog stack is only loaded by configs that use it.
            from proofgym.verilog import VerilogParser, builtin_problems, load_verilogeval

            problems = (builtin_problems() if self.problems == "builtin"
                        else {p.id: p for p in load_verilogeval(self.problems)})
            return VerilogParser(problems, problem_id=self.problem_id)
        if self.kind == "regex":
            return RegexFactParser(decisions=self.decisions, limits=limits)
        return JSONBlockParser(
            answer_key=self.answer_key,
            facts_key=self.facts_key,
            tag=self.tag,
            reasoning_tag=self.reasoning_tag,
            decisions=self.decisions,
            require_facts=self.require_facts,
            limits=limits,
        )


class VerifierConfig(BaseModel):
    """``kind`` picks a registered verifier; the other keys are that kind's options."""

    model_config = ConfigDict(extra="allow")

    kind: str

    @model_validator(mode="after")
    def _check_options(self) -> VerifierConfig:
        validate_verifier_options(self.kind, self.options)
        return self

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def build(self) -> Verifier:
        return build_verifier(self.kind, self.options)


class ErrorBudgetConfig(_Strict):
    """How many invalid verifications a batch may have before proofgym complains (or aborts)."""

    max_invalid_share: float = Field(0.2, ge=0.0, le=1.0)
    action: Literal["warn", "abort"] = "warn"


class RunConfig(_Strict):
    """A validated run config. Build the reward function with :meth:`reward_function`."""

    name: str = "run"
    parser: ParserConfig = ParserConfig()
    verifier: VerifierConfig
    runtime: RuntimeConfig = RuntimeConfig()
    reward: ShaperConfig = ShaperConfig()
    error_budget: ErrorBudgetConfig = ErrorBudgetConfig()
    train: TrainConfig | None = None
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
            error_budget=ErrorBudget(self.error_budget.max_invalid_share, self.error_budget.action),
        )


def parse_run_config(data: dict[str, Any], *, source: str | Path = "<config>") -> RunConfig:
    """Validate already-parsed config data strictly (``true`` is not a number, ``"3"`` not an integer, in
    every section); :class:`ConfigError` has one line per problem, naming the source and the key path."""
    try:
        config = RunConfig.model_validate(data, strict=True)
    except ValidationError as exc:
        problems = config_problems(exc.errors())
        raise ConfigError("\n".join(problem_line(source, problem) for problem in problems),
                          problems=problems) from None
    config._source = Path(source) if source != "<config>" else None
    return config


def load_run_config(path: str | Path) -> RunConfig:
    """Load and validate a YAML or TOML run config."""
    return parse_run_config(read_config_file(path), source=path)
