"""The RL config (``kind = "rl"``, ``configs/rl/``): the reference's sections and keys, read strictly.

``[algorithm] [services] [model] [lora] [rollout] [evaluation] [training] [rubric] [judge]`` are honoured;
``[compute]``'s Ray keys (``ray_address``, ``num_cpus``, ``num_gpus``, ``memory``, ``resources``, ``runtime_env``,
``workers``, ``policy_host``, ``policy_port``, ``task_app_ports``) are honoured too, and so is ``[policy_server]``
(rollouts on another OpenAI-compatible server, updated through vLLM's LoRA endpoints). ``[vllm]`` starts
``vllm serve`` as that server where a GPU and vLLM are there (its keys become ``vllm serve`` flags); elsewhere it is
recorded, as are ``[topology] [reference]`` and a few keys of the hosted trainer
(``training.weight_sync.targets``, ``judge.options.weights``, ...) say how a GPU cluster is laid out: they are
recorded and reported once (:meth:`RLConfig.machine_notes`), never refused. Any other unknown key is an error naming
it. A file without ``kind`` (the reference's) loads with one deprecation line
(:func:`~proofgym.config.normalize_config`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from proofgym.config import (
    RL_CONFIG,
    ConfigError,
    config_kind,
    config_problems,
    normalize_config,
    problem_line,
    read_config_file,
)
from proofgym.evaluation import ComputeSection

#: Sections that describe the machine the reference's hosted trainer runs on.
MACHINE_SECTIONS: tuple[str, ...] = ("compute", "topology", "vllm", "reference")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class _Open(BaseModel):
    """A machine-layout section: any key, kept as written."""

    model_config = ConfigDict(extra="allow")


class RLComputeSection(ComputeSection):
    """``[compute]``: with ``ray_address`` (or ``proofgym train --ray ADDRESS``) the rollouts run on that Ray
    cluster: ``workers`` actors at most (default: the rollout concurrency, capped by what the cluster holds), each
    reserving ``num_cpus`` CPUs (and ``num_gpus``, ``memory``, custom ``resources`` when given) and serving the
    environment in a task app of its own, on a port of ``task_app_ports`` when given; ``[compute.runtime_env]`` is
    shipped to every node. The policy is served on ``policy_host`` (and ``policy_port`` when given) for them
    (default loopback: every node on this machine; a machine's address otherwise, where the policy server answers
    without a key). The hosted trainer's GPU-layout keys (``gpu_type``, ...)
    are recorded, as in the other machine sections."""

    model_config = ConfigDict(extra="allow")

    policy_host: str = Field("127.0.0.1", min_length=1, max_length=255, pattern=r"^[A-Za-z0-9.:\-\[\]]+$")
    policy_port: int | None = Field(None, ge=1, le=65535, description="the policy server's port (default: a free "
                                                                      "one)")
    task_app_ports: str | None = Field(None, description="'FIRST-LAST': each actor's task app takes the first free "
                                                         "port of the range on its node (default: a free one)")

    @field_validator("task_app_ports")
    @classmethod
    def _port_range(cls, value: str | None) -> str | None:
        if value is not None:
            first, _, last = value.partition("-")
            if not (first.strip().isdigit() and last.strip().isdigit()
                    and 1 <= int(first) <= int(last) <= 65535):
                raise ValueError(f"expected a port range 'FIRST-LAST' such as '20000-20031', got {value!r}")
        return value

    @property
    def on_ray(self) -> bool:
        return self.ray_address is not None

    @property
    def task_app_port_range(self) -> range | None:
        if self.task_app_ports is None:
            return None
        first, _, last = self.task_app_ports.partition("-")
        return range(int(first), int(last) + 1)


class AlgorithmSection(_Strict):
    type: Literal["online"] = "online"
    method: Literal["policy_gradient"] = "policy_gradient"
    variety: Literal["gspo", "grpo"] = "grpo"


class ServicesSection(_Strict):
    """``task_url``: an http(s) URL of a running task app, or ``local:ENV`` to start ``proofgym serve ENV`` here.
    ``judge_url``: an OpenAI-compatible endpoint for the rubrics' LLM criteria (``None``: those criteria are
    skipped with a note)."""

    task_url: str
    judge_url: str | None = None

    @field_validator("task_url")
    @classmethod
    def _task_url(cls, value: str) -> str:
        if value.startswith("local:"):
            if not value[len("local:"):].strip():
                raise ValueError("expected local:ENV with an environment name, such as local:verilog")
            return value
        if not value.startswith(("http://", "https://")):
            raise ValueError("expected an http(s) URL of a task app, or local:ENV (such as local:verilog)")
        return value

    @property
    def local_env(self) -> str | None:
        return self.task_url[len("local:"):].strip() if self.task_url.startswith("local:") else None


class ModelSection(_Strict):
    """``base`` (or ``source``): ``proofgym:tiny``, a hub id or a local directory. ``trainer_mode``: ``lora``
    (peft) or ``full``; ``proofgym:tiny`` trains fully whatever is asked (it has no LoRA targets worth it)."""

    base: str | None = Field(None, min_length=1)
    source: str | None = Field(None, min_length=1)
    trainer_mode: Literal["lora", "full"] = "lora"
    label: str | None = None

    @model_validator(mode="after")
    def _one_model(self) -> ModelSection:
        if (self.base is None) == (self.source is None):
            raise ValueError("give exactly one of model.base and model.source")
        return self

    @property
    def name(self) -> str:
        return self.base or self.source  # type: ignore[return-value]


class PolicyServerSection(_Strict):
    """Where the rollouts are sampled when not by the trainer's own in-process server: ``url``, a running
    OpenAI-compatible server with vLLM's LoRA adapter endpoints (``proofgym serve-model --enable-lora``, ``vllm
    serve --enable-lora``), or ``launch``, a server the trainer starts and stops (``serve-model``: on the base model
    it exports to ``<output_dir>/policy_base``; ``vllm``: ``vllm serve`` on ``serving_gpu``, default the last GPU).
    ``weight_sync``: ``lora`` (adapters loaded by name after each update: ``model.trainer_mode = "lora"``) or
    ``nccl`` (vLLM's full-weight transfer, GPU only). ``adapter_dir``: where the adapters are saved (default
    ``<output_dir>/adapters``; the server must read it)."""

    url: str | None = None
    launch: Literal["serve-model", "vllm"] | None = None
    port: int | None = Field(None, ge=1, le=65535)
    adapter_dir: str | None = Field(None, min_length=1)
    weight_sync: Literal["lora", "nccl"] = "lora"
    startup_timeout_s: float = Field(600.0, gt=0)
    serving_gpu: int | None = Field(None, ge=0)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"expected the http(s) URL of an OpenAI-compatible server (ending in /v1), got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_server(self) -> PolicyServerSection:
        if (self.url is None) == (self.launch is None):
            raise ValueError("give exactly one of url (a running server) and launch (serve-model or vllm)")
        if self.url is not None and self.port is not None:
            raise ValueError("port is the launched server's: with url, the port is in the url")
        return self


class RLLoraSection(_Strict):
    r: int = Field(16, ge=1, le=4096)
    alpha: float = Field(32, gt=0)
    dropout: float = Field(0.05, ge=0, lt=1)
    target_modules: list[str] = Field(default_factory=lambda: ["all-linear"], min_length=1)


class StepRewardsSection(_Strict):
    """``[rollout.env_config.step_rewards]``: decision-level credit (``decision_stepwise``)."""

    enabled: bool = False
    mode: Literal["decision_stepwise", "off"] = "decision_stepwise"
    strategy: Literal["consistent", "per_achievement"] = "consistent"
    indicator_lambda: float = Field(1.0, ge=0)
    step_beta: float = Field(0.0, ge=0)
    weights: dict[str, float] = Field(default_factory=dict)
    k_limits: dict[str, int] = Field(default_factory=dict)


class RolloutSection(_Strict):
    env_name: str = Field(..., min_length=1)
    policy_name: str | None = None
    max_turns: int = Field(10, ge=1, le=1000)
    episodes_per_batch: int = Field(4, ge=1, le=100_000)
    max_concurrent_rollouts: int = Field(8, ge=1, le=4096)
    batches_per_step: int = Field(1, ge=1, le=1000)
    ops: list[str] = Field(default_factory=lambda: ["agent", "env"])
    rubric_rewards_only: bool = False
    env_config: dict[str, Any] = Field(default_factory=dict)
    policy_config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("ops")
    @classmethod
    def _ops(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - {"agent", "env"})
        if unknown:
            raise ValueError(f"unknown ops {unknown}: expected 'agent' and 'env'")
        return value

    @property
    def step_rewards(self) -> StepRewardsSection:
        return StepRewardsSection.model_validate(self.env_config.get("step_rewards") or {}, strict=True)

    def env_options(self) -> dict[str, Any]:
        """The environment's own config (``step_rewards`` is the trainer's)."""
        return {key: value for key, value in self.env_config.items() if key != "step_rewards"}


class RLEvaluationSection(_Strict):
    """``instances``, ``every_n_iters``, ``seeds`` (the reference's), and ours, the stop rule: the run stops once
    ``stop_streak`` held-out evaluations in a row (default 2: one lucky evaluation of a few seeds is not enough)
    read ``stop_at`` or more and, with ``confirm_seeds`` (a larger set of fresh seeds), a confirmation evaluation
    on them reads ``stop_at`` or more too."""

    instances: int = Field(16, ge=1, le=100_000)
    every_n_iters: int = Field(10, ge=1)
    seeds: list[int] = Field(default_factory=lambda: list(range(16)))
    stop_at: float | None = Field(None, gt=0, le=1)
    stop_streak: int = Field(2, ge=1, le=1000)
    confirm_seeds: list[int] | None = None

    @field_validator("seeds", "confirm_seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> list[int] | None:
        from proofgym.evaluation import parse_seeds

        return None if value is None else parse_seeds(value)


class WeightSyncSection(_Strict):
    enable: bool = True
    targets: list[str] = Field(default_factory=lambda: ["policy"])
    mode: str = "direct"
    direct: bool = True
    verify_every_k: int = Field(0, ge=0)


class RLTrainingSection(_Strict):
    """The reference's ``[training]`` keys, and ours: ``seed``, ``train_seeds`` (the seeds rollouts draw from,
    never an evaluation seed; default: 10000 onwards), ``clip_eps``, ``max_error_share`` (the error budget),
    ``warmup_steps`` / ``warmup_lr`` (the format
    warm-up of ``proofgym:tiny``), ``updates_per_batch`` (optimiser steps per batch of rollouts, each clipped
    against the sampling log-probabilities), ``kl_coef`` (a KL penalty to the policy RL starts from, GRPO's
    beta), ``overlap_rollouts`` (collect the next batch while this one trains: rollouts are then one update older,
    within the staleness bound of :mod:`proofgym.training.rl._policy`), ``lr_warmup_iterations`` (the learning
    rate rises linearly to ``learning_rate`` over the first iterations: a fresh Adam's first steps move every weight
    by about the learning rate), ``cpu_threads`` (torch's CPU threads for the update and for the served policy's
    decoding, each; default: torch's own choice), ``checkpoint_every``, ``output_dir``,
    ``max_grad_norm``, ``request_timeout_s``."""

    num_epochs: int = Field(1, ge=1)
    iterations_per_epoch: int = Field(10, ge=1)
    gradient_accumulation_steps: int = Field(1, ge=1)
    updates_per_batch: int = Field(1, ge=1, le=64)
    kl_coef: float = Field(0.0, ge=0, le=10)
    overlap_rollouts: bool = False
    cpu_threads: int | None = Field(None, ge=1, le=1024)
    lr_warmup_iterations: int = Field(0, ge=0, le=100_000)
    max_accumulated_minibatch: int = Field(1, ge=1)
    max_turns: int | None = Field(None, ge=1, le=1000)
    batch_size: int = Field(4, ge=1)
    group_size: int = Field(4, ge=2, le=1024)
    learning_rate: float = Field(5e-5, gt=0, le=1)
    log_interval: int = Field(1, ge=1)
    weight_sync_interval: int = Field(1, ge=1)
    event_rewards_kind: Literal["unique", "absolute"] = "unique"
    async_semaphore_max: int | None = Field(None, ge=1, le=4096)
    step_rewards_enabled: bool = False
    step_rewards_mode: Literal["decision_stepwise", "off"] = "decision_stepwise"
    step_rewards_indicator_lambda: float = Field(1.0, ge=0)
    step_rewards_beta: float = Field(0.0, ge=0)
    step_rewards_strategy: Literal["consistent", "per_achievement"] = "consistent"
    weight_sync: WeightSyncSection = Field(default_factory=WeightSyncSection)
    seed: int = Field(0, ge=0)
    train_seeds: list[int] | None = None
    clip_eps: float = Field(0.2, gt=0, le=10)
    max_grad_norm: float = Field(1.0, gt=0)
    max_error_share: float = Field(0.5, ge=0, le=1)
    warmup_steps: int = Field(0, ge=0)
    warmup_lr: float = Field(1e-3, gt=0, le=1)
    checkpoint_every: int = Field(10, ge=1)
    output_dir: str = "runs/rl"
    request_timeout_s: float = Field(300.0, gt=0)

    @property
    def iterations(self) -> int:
        return self.num_epochs * self.iterations_per_epoch


class CriterionEntry(_Strict):
    """A rubric criterion as the reference writes it (``id`` or ``key``)."""

    id: str | None = None
    key: str | None = None
    weight: float = Field(1.0, ge=0)
    description: str = ""
    scale: str | dict[str, Any] = "bounded"
    aggregation: str | None = None
    required: bool = False
    function: str | None = None

    @model_validator(mode="after")
    def _named(self) -> CriterionEntry:
        if (self.id or self.key) is None:
            raise ValueError("a criterion needs an id (or key)")
        return self


class RubricLevelSection(_Strict):
    rubric_id: str | None = None
    goal_text: str | None = None
    aggregation: Literal["weighted_sum", "sum"] = "weighted_sum"
    criteria: list[CriterionEntry] = Field(default_factory=list)


class BlendWeightsSection(_Strict):
    env: float = Field(1.0, ge=0)
    event: float = Field(0.0, ge=0)
    outcome: float = Field(0.0, ge=0)


class RubricSection(_Strict):
    """``[rubric]``: ``enabled``, the blend ``weights``, ``event`` / ``outcome`` criteria (default: the
    environment's own rubrics), and the LLM judge's ``model``, ``api_base``, ``api_key_env``; ``set``: a
    registered rubric set's name (ours)."""

    enabled: bool = False
    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    set: str | None = None
    weights: BlendWeightsSection | None = None
    event: RubricLevelSection | None = None
    outcome: RubricLevelSection | None = None


class JudgeOptionsSection(_Strict):
    event: bool = True
    outcome: bool = True
    provider: str | None = None
    model: str | None = None
    rubric_id: str | None = None
    timeout_s: float = Field(45.0, gt=0)
    weights: dict[str, float] = Field(default_factory=dict)
    rubric_overrides: dict[str, RubricLevelSection] = Field(default_factory=dict)

    @field_validator("rubric_overrides")
    @classmethod
    def _levels(cls, value: dict[str, RubricLevelSection]) -> dict[str, RubricLevelSection]:
        unknown = sorted(set(value) - {"event", "outcome"})
        if unknown:
            raise ValueError(f"unknown levels {unknown}: expected event and outcome")
        return value


class JudgeSection(_Strict):
    enabled: bool = True
    type: str | None = None
    timeout_s: float = Field(45.0, gt=0)
    reward_blend: BlendWeightsSection | None = None
    options: JudgeOptionsSection = Field(default_factory=JudgeOptionsSection)


class RLConfig(_Strict):
    """A whole ``rl.toml``."""

    algorithm: AlgorithmSection = Field(default_factory=AlgorithmSection)
    services: ServicesSection
    model: ModelSection
    lora: RLLoraSection = Field(default_factory=RLLoraSection)
    rollout: RolloutSection
    evaluation: RLEvaluationSection = Field(default_factory=RLEvaluationSection)
    training: RLTrainingSection = Field(default_factory=RLTrainingSection)
    rubric: RubricSection = Field(default_factory=RubricSection)
    judge: JudgeSection | None = None
    compute: RLComputeSection | None = None
    topology: _Open | None = None
    vllm: _Open | None = None
    reference: _Open | None = None
    policy_server: PolicyServerSection | None = None

    @model_validator(mode="after")
    def _consistent(self) -> RLConfig:
        train = set(self.training.train_seeds or ())
        overlap = sorted(train & set(self.evaluation.seeds))
        if overlap:
            raise ValueError(f"training.train_seeds and evaluation.seeds share seeds {overlap[:10]}: held-out "
                             "seeds must stay out of training")
        confirm = set(self.evaluation.confirm_seeds or ())
        for name, seeds in (("evaluation.seeds", self.evaluation.seeds), ("training.train_seeds", train)):
            overlap = sorted(confirm & set(seeds))
            if overlap:
                raise ValueError(f"evaluation.confirm_seeds and {name} share seeds {overlap[:10]}: the "
                                 "confirmation is on fresh seeds")
        if self.compute is not None and self.compute.on_ray and self.services.local_env is None:
            raise ValueError("compute.ray_address: each Ray rollout actor serves the environment itself, so "
                             "services.task_url must be local:ENV, not the URL of a running task app")
        if self.rubric.weights is not None and self.judge is not None and self.judge.reward_blend is not None:
            raise ValueError("give the blend weights once: rubric.weights or judge.reward_blend")
        return self

    def on_ray(self, address: str) -> RLConfig:
        """This config with its rollouts on the Ray cluster at ``address`` (``proofgym train --ray``); a
        ``ConfigError`` names the problem."""
        data = {"kind": RL_CONFIG.tag, **self.model_dump(exclude_unset=True)}
        data.setdefault("compute", {})["ray_address"] = address
        return parse_rl_config(data, source="--ray")

    @property
    def blend_weights(self) -> BlendWeightsSection:
        """``[rubric.weights]`` or ``[judge.reward_blend]``; without either (or with rubrics off) the env alone."""
        weights = self.rubric.weights or (self.judge.reward_blend if self.judge is not None else None)
        if weights is None or not self.judging_enabled:
            return BlendWeightsSection(env=1.0, event=0.0, outcome=0.0)
        return weights

    @property
    def judging_enabled(self) -> bool:
        return self.rubric.enabled or (self.judge is not None and self.judge.enabled)

    @property
    def max_turns(self) -> int:
        return min(n for n in (self.rollout.max_turns, self.training.max_turns) if n is not None)

    @property
    def step_rewards_enabled(self) -> bool:
        return self.training.step_rewards_enabled or self.rollout.step_rewards.enabled

    @property
    def concurrency(self) -> int:
        limits = [self.rollout.max_concurrent_rollouts, self.training.async_semaphore_max]
        return min(n for n in limits if n is not None)

    def rubric_levels(self) -> dict[str, RubricLevelSection]:
        """The rubric levels the file spells out: ``[rubric.event]`` / ``[rubric.outcome]`` with criteria, or
        ``[judge.options.rubric_overrides]``."""
        levels: dict[str, RubricLevelSection] = {}
        if self.judge is not None:
            levels.update(self.judge.options.rubric_overrides)
        for name in ("event", "outcome"):
            level = getattr(self.rubric, name)
            if level is not None and level.criteria:
                levels[name] = level
        return levels

    def machine_notes(self) -> list[str]:
        """One line naming the keys that describe a GPU cluster and have no effect here (empty if none)."""
        keys = []
        for section in MACHINE_SECTIONS:
            value = getattr(self, section)
            if value is not None:
                recorded = [f"{section}.{key}" for key in sorted(value.model_extra or {})]
                keys += recorded or ([] if isinstance(value, RLComputeSection) else [section])
        sync = self.training.weight_sync
        keys += [f"training.weight_sync.{key}" for key in ("targets", "mode", "direct", "verify_every_k")
                 if key in sync.model_fields_set]
        if self.judge is not None:
            options = self.judge.options
            keys += [f"judge.options.{key}" for key in ("weights", "provider", "rubric_id")
                     if key in options.model_fields_set]
            if "type" in self.judge.model_fields_set:
                keys.append("judge.type")
        for key in ("max_accumulated_minibatch", "log_interval"):
            if key in self.training.model_fields_set:
                keys.append(f"training.{key}")
        if not keys:
            return []
        return [f"recorded, no effect on this machine: {', '.join(keys)} (one process trains and serves the "
                "policy here)"]


def parse_rl_config(data: dict[str, Any], *, source: str | Path = "<config>") -> RLConfig:
    """Validate RL config data; ``ConfigError`` has one line per problem, naming the source and the key, or one line
    naming the command that reads ``data`` when it is another kind of file (an eval or run config). A ``kind`` key
    must say ``rl``; a file without one loads with a deprecation line (:func:`~proofgym.config.normalize_config`)."""
    data = normalize_config(data, source=source, kind=RL_CONFIG)
    try:
        return RLConfig.model_validate(data)
    except ValidationError as exc:
        problems = config_problems(exc.errors())
        raise ConfigError("\n".join(problem_line(source, problem) for problem in problems),
                          problems=problems) from None


def load_rl_config(path: str | Path) -> RLConfig:
    """Read and validate an RL config file (``kind = "rl"``; TOML, or YAML / JSON)."""
    return parse_rl_config(read_config_file(path), source=Path(path))


def is_rl_config(path: str | Path) -> bool:
    """Whether ``path`` is an RL config: it declares ``kind = "rl"``, or (an old file without a kind) is recognised
    as one by :func:`~proofgym.config.config_kind`, or is a ``.toml`` file of no clear kind without a run config's old
    ``train`` section, whose problems the RL reader reports (a run config goes to the TRL trainer)."""
    path = Path(path)
    if not path.is_file():
        return False
    toml = path.suffix.lower() == ".toml"
    try:
        data = read_config_file(path)
    except ConfigError:
        return toml  # let the RL reader report the problem
    kind = config_kind(data)
    return kind is RL_CONFIG if kind is not None else toml and "train" not in data
