"""Judging as configured: which rubric set, which LLM judge, and what to do with LLM criteria when there is none.

:class:`JudgingConfig` is JSON-native (a task app sends it to each of its worker processes); :func:`build_scorer`
turns it into a :class:`~proofgym.judges.RubricScorer`.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import ConfigError, redact_url
from proofgym.judges._registry import resolve_rubric_set
from proofgym.judges._rubric import RubricSet
from proofgym.judges._score import RubricScorer


class JudgingConfig(BaseModel):
    """``rubric``: a registered rubric set's name or a rubric file (default: the environment's own rubrics).
    ``judge_url`` + ``model``: an OpenAI-compatible endpoint for the LLM criteria; the key is read from the
    environment variable ``api_key_env`` (never written in a config). Without a judge, LLM criteria are dropped
    when ``skip_llm_criteria`` is set, else refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rubric: str | None = Field(default=None, min_length=1)
    judge_url: str | None = Field(default=None, min_length=1)
    model: str | None = Field(default=None, min_length=1)
    api_key_env: str | None = Field(default=None, min_length=1)
    skip_llm_criteria: bool = False
    max_criteria: int = Field(default=8, ge=1, le=64)
    timeout_s: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=16, ge=1, le=1024)


def build_judge(config: JudgingConfig) -> Any:
    """The LLM judge ``config`` names (``None`` without ``judge_url``); :class:`ConfigError` for a URL without a
    model or an API key variable that is not set."""
    if config.judge_url is None:
        if config.model is not None:
            raise ConfigError("judging: a judge model needs judge_url, the endpoint to ask it on")
        return None
    if config.model is None:
        raise ConfigError(f"judging: judge_url {redact_url(config.judge_url)!r} needs a model")
    api_key = None
    if config.api_key_env is not None:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise ConfigError(f"judging: the environment variable {config.api_key_env!r} (the judge's API key) "
                              "is not set")
    from proofgym.judges._llm import LLMJudge
    from proofgym.runtime import RuntimeConfig

    runtime = RuntimeConfig(max_concurrency=config.max_concurrency, timeout_s=config.timeout_s * 2 + 5)
    return LLMJudge(config.judge_url, config.model, api_key=api_key, max_criteria=config.max_criteria,
                    timeout_s=config.timeout_s, runtime=runtime)


def build_scorer(config: JudgingConfig, *, default_rubrics: RubricSet | None = None) -> RubricScorer:
    """The scorer ``config`` describes; ``default_rubrics`` (an environment's) when it names no rubric.
    :class:`ConfigError` when there is no rubric set, or LLM criteria with no judge and no leave to skip them."""
    rubrics = resolve_rubric_set(config.rubric) if config.rubric is not None else default_rubrics
    if rubrics is None:
        raise ConfigError("judging: no rubric set: name one (a registered name or a rubric file), or serve an "
                          "environment that declares rubrics")
    judge = build_judge(config)
    if judge is None and rubrics.needs_llm() and not config.skip_llm_criteria:
        raise ConfigError(f"judging: criteria {rubrics.needs_llm()} need an LLM judge: give judge_url and model, "
                          "or skip them (skip_llm_criteria / --skip-llm-criteria)")
    return RubricScorer(rubrics, judge=judge, missing_judge="skip")
