"""Run configs: load and validate YAML / TOML / JSON files that describe a reward path; the kinds of file the
commands read (``kind: run | eval | rl``, :func:`config_kind`) and their one vocabulary (:func:`normalize_config`);
the models a config names, read from the local Hugging Face cache first (:func:`hub_model_options`)."""

from proofgym.core import ConfigError, config_problems, problem_line
from proofgym.parsers import LimitsConfig  # the parser section's limits: defined with the parser kinds
from proofgym.config._files import find_secret_key, parse_config_text, read_config_file
from proofgym.config._hub import OFFLINE_MODELS, HubModelUnavailable, PretrainedOptions, hub_model_options
from proofgym.config._kinds import (
    CONFIG_KINDS,
    DECLARED_KINDS,
    EVAL_CONFIG,
    RL_CONFIG,
    RUBRIC_SET,
    RULEBOOK,
    RUN_CONFIG,
    ConfigKind,
    config_kind,
    normalize_config,
    require_config_kind,
    require_file_kind,
)
from proofgym.config._run import (
    ParserSection,
    RunConfig,
    VerifierSection,
    load_run_config,
    parse_run_config,
)
from proofgym.config._train import (
    TINY_MODEL,
    CurriculumSection,
    DatasetSection,
    GRPOSection,
    HeldoutSection,
    LoraSection,
    TinyModelSection,
    TrainingSection,
    WarmupSection,
)

__all__ = [
    "ConfigError",
    "config_problems",
    "problem_line",
    "CurriculumSection",
    "DatasetSection",
    "GRPOSection",
    "HeldoutSection",
    "LoraSection",
    "TINY_MODEL",
    "TinyModelSection",
    "TrainingSection",
    "WarmupSection",
    "LimitsConfig",
    "ParserSection",
    "RunConfig",
    "VerifierSection",
    "load_run_config",
    "parse_run_config",
    "find_secret_key",
    "parse_config_text",
    "read_config_file",
    "CONFIG_KINDS",
    "DECLARED_KINDS",
    "EVAL_CONFIG",
    "RL_CONFIG",
    "RUBRIC_SET",
    "RULEBOOK",
    "RUN_CONFIG",
    "ConfigKind",
    "config_kind",
    "normalize_config",
    "require_config_kind",
    "require_file_kind",
    "OFFLINE_MODELS",
    "HubModelUnavailable",
    "PretrainedOptions",
    "hub_model_options",
]
