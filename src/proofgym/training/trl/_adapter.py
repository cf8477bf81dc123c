"""TRL: proofgym's reward path as a GRPOTrainer reward function, and a GRPOTrainer builder.

Written against TRL 1.16. A reward function is called as ``f(prompts=..., completions=...,
completion_ids=..., **dataset_columns, trainer_state=..., log_extra=..., log_metric=...)``; a
``None`` in its result excludes that completion from the reward (TRL turns it into NaN, and a
completion with no reward gets zero advantage). Metrics go through ``log_metric(name, value)``,
which TRL averages over each logging step and logs beside its own ``reward`` and ``kl``.
torch, transformers, trl and peft are imported inside the functions that need them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from proofgym.rewards import RewardFunction, ScoredItem, batch_metrics, last_runtime_metrics

if TYPE_CHECKING:
    from proofgym.config import RunConfig, TrainingSection

# Dataset columns read as the reference; ``reference`` may hold a whole reference (an object or
# its JSON text). Every other column TRL passes is ignored.
REFERENCE_COLUMNS = ("gold", "answer", "source_facts", "facts")
_JSON_COLUMNS = ("source_facts", "facts", "reference")
# TRL's extra keyword arguments; they are not dataset columns.
_TRL_KWARGS = frozenset({"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})


class TRLRewardFunction:
    """A proofgym :class:`~proofgym.rewards.RewardFunction` in TRL's reward-function convention.

    ``fn(prompts, completions, **dataset_columns) -> list[float | None]``: prompts and completions
    are plain strings or chat messages; the reference of each completion comes from its row's
    ``gold`` (or ``answer``) and ``source_facts`` (or ``facts``) columns, or from a ``reference``
    column holding both (an object or JSON text); ``source_facts`` may also be JSON text (useful
    when rows of one dataset have different facts, which Arrow would pad with nulls). Invalid
    verifications are ``None`` (TRL leaves them out). After each call, :attr:`last_metrics` holds
    the batch's metrics (see :func:`batch_metrics`); inside TRL they are also sent to
    ``log_metric``, and each completion's outcome and decision to ``log_extra`` (TRL's completions
    table). ``__name__`` is the name TRL logs the reward under (``rewards/<name>/mean``).
    """

    def __init__(self, reward_fn: RewardFunction, *, name: str = "proofgym", owns_reward_fn: bool = False,
                 metric_prefix: str = "proofgym/") -> None:
        if not name or not name.isidentifier():
            raise ValueError(f"name must be a Python identifier (TRL logs the reward under it), got {name!r}")
        self.reward_fn = reward_fn
        self.__name__ = name
        self.metric_prefix = metric_prefix
        self.last_metrics: dict[str, float] = {}
        self.last_items: list[ScoredItem] = []
        self._owns = owns_reward_fn
        self._lock = threading.Lock()

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (), **kwargs: Any,
                 ) -> list[float | None]:
        refs = references_from_columns(len(completions), kwargs)
        items = self.reward_fn.score(prompts, completions, refs)
        return self._report(items, kwargs)

    def close(self) -> None:
        """Close the reward function's runtime when this adapter built it."""
        if self._owns:
            self.reward_fn.close()

    def _report(self, items: list[ScoredItem], kwargs: Mapping[str, Any]) -> list[float | None]:
        metrics = batch_metrics(items, last_runtime_metrics(self.reward_fn), prefix=self.metric_prefix)
        with self._lock:
            self.last_metrics = metrics
            self.last_items = items
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            for name, value in metrics.items():
                log_metric(name, value)
        log_extra = kwargs.get("log_extra")
        if callable(log_extra):
            log_extra(f"{self.__name__}_outcome", [item.outcome for item in items])
            log_extra(f"{self.__name__}_decision",
                      [item.claim.decision if item.claim is not None else None for item in items])
        return [item.reward for item in items]


class AsyncTRLRewardFunction(TRLRewardFunction):
    """:class:`TRLRewardFunction` with an ``async`` ``__call__``: TRL 1.16 runs async reward functions
    concurrently on its own event loop (``asyncio.gather`` over every async reward function)."""

    # An async override of a sync __call__ by design: TRL tells the two kinds apart and awaits this one.
    async def __call__(self, prompts: Sequence[Any] | None = None,  # type: ignore[override]
                       completions: Sequence[Any] = (), **kwargs: Any) -> list[float | None]:
        refs = references_from_columns(len(completions), kwargs)
        items = await self.reward_fn.ascore(prompts, completions, refs)
        return self._report(items, kwargs)


def trl_reward_function(source: RunConfig | RewardFunction, *, name: str | None = None,
                        asynchronous: bool = False) -> TRLRewardFunction:
    """A TRL reward function from a run config (which it then owns and closes) or a reward function.

    ``name`` defaults to the run config's name made an identifier (``proofgym`` for a bare reward
    function); ``asynchronous`` gives the ``async`` variant.
    """
    cls = AsyncTRLRewardFunction if asynchronous else TRLRewardFunction
    if isinstance(source, RewardFunction):
        return cls(source, name=name or "proofgym")
    if not hasattr(source, "reward_function"):
        raise TypeError(f"expected a RunConfig or a RewardFunction, got {type(source).__name__}")
    return cls(source.reward_function(), name=name or _identifier(source.name), owns_reward_fn=True)


def references_from_columns(n: int, columns: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One reference row per completion from TRL's dataset-column keyword arguments.

    Raises ``ValueError`` naming the column when a column is not a list of ``n`` values, or when a
    JSON column holds text that is not a JSON object.
    """
    present = [key for key in (*REFERENCE_COLUMNS, "reference") if key in columns and key not in _TRL_KWARGS]
    for key in present:
        values = columns[key]
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) != n:
            got = f"{len(values)} values" if isinstance(values, Sequence) else type(values).__name__
            raise ValueError(f"dataset column {key!r} must have one value per completion ({n}), got {got}")
    rows: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {}
        for key in present:
            value = columns[key][i]
            if key in _JSON_COLUMNS and isinstance(value, str):
                value = _json_object(value, f"dataset column {key!r}, row {i}")
            if key == "reference":
                if value is None:
                    continue
                if not isinstance(value, Mapping):
                    raise ValueError(f"dataset column 'reference', row {i}: expected an object with gold / "
                                     f"source_facts, got {type(value).__name__}")
                for inner, inner_value in value.items():
                    row.setdefault(inner, inner_value)
            else:
                row[key] = value
        rows.append(row)
    return rows


def _json_object(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: expected a JSON object, got text that is not JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # an integer past Python's digit limit; nesting past recursion
        raise ValueError(f"{where}: expected a JSON object within the limits of JSON from outside "
                         f"({type(exc).__name__}: {str(exc)[:120]})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _identifier(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_") or "proofgym"
    return cleaned if cleaned.isidentifier() else f"proofgym_{cleaned}"


# -- the trainer ---------------------------------------------------------------------------------------

# GRPOConfig fields build_grpo_trainer sets; test_trl_api_has_not_moved.py checks that TRL still has them.
GRPO_CONFIG_FIELDS = (
    "output_dir", "num_generations", "per_device_train_batch_size", "gradient_accumulation_steps",
    "steps_per_generation", "num_iterations", "learning_rate", "beta", "epsilon", "max_completion_length",
    "temperature", "top_p", "top_k", "max_steps", "warmup_steps", "max_grad_norm", "loss_type", "bf16", "fp16",
    "gradient_checkpointing", "use_cpu", "logging_steps", "save_strategy", "save_steps", "report_to", "seed",
    "use_vllm", "vllm_mode", "vllm_gpu_memory_utilization", "remove_unused_columns", "log_completions",
    "disable_tqdm", "shuffle_dataset", "disable_dropout",
)


def grpo_config_kwargs(train: TrainingSection | None = None, *, output_dir: str | None = None,
                       cuda: bool | None = None, vllm_available: bool | None = None) -> dict[str, Any]:
    """The ``GRPOConfig`` keyword arguments for a ``training:`` section (defaults when ``None``).

    One optimisation step uses ``batch_size x group_size`` completions (TRL's
    ``per_device_train_batch_size`` counts completions); each generation is trained on
    ``updates_per_generation`` times (TRL's ``num_iterations``), each time a step. On CPU it
    overrides TRL's GPU-minded defaults: no bf16, no gradient checkpointing. Raises
    :class:`~proofgym.config.ConfigError` for GPU-only settings (fp16, ``use_vllm: true``) without CUDA.
    """
    from proofgym.config import ConfigError, GRPOSection

    if cuda is None:
        cuda = _cuda_available()
    grpo = train.grpo if train is not None else GRPOSection()
    completions = grpo.batch_size * grpo.group_size
    precision = train.precision if train is not None else "auto"
    if precision == "auto":
        precision = "bf16" if cuda and _bf16_supported() else "fp32"
    if precision == "fp16" and not cuda:
        raise ConfigError("training.precision: fp16 needs a CUDA GPU; use fp32 or bf16 on CPU")
    use_vllm = train.use_vllm if train is not None else False
    if use_vllm == "auto":
        use_vllm = bool(cuda and (vllm_available if vllm_available is not None else _vllm_available()))
    elif use_vllm and not cuda:
        raise ConfigError("training.use_vllm: true needs a CUDA GPU; set it to auto or false")
    save_every = train.save_every if train is not None else 0
    kwargs: dict[str, Any] = {
        "output_dir": output_dir or (train.output_dir if train is not None else "runs/train"),
        "num_generations": grpo.group_size,
        "per_device_train_batch_size": completions,
        "gradient_accumulation_steps": 1,
        "steps_per_generation": 1,
        "num_iterations": grpo.updates_per_generation,
        "learning_rate": grpo.learning_rate,
        "beta": grpo.kl_beta,
        "epsilon": grpo.clip_epsilon,
        "max_completion_length": grpo.max_completion_length,
        "temperature": grpo.temperature,
        "top_p": grpo.top_p,
        "top_k": grpo.top_k,
        "max_steps": grpo.steps,
        "warmup_steps": grpo.warmup_steps,
        "max_grad_norm": grpo.max_grad_norm,
        "loss_type": grpo.loss_type,
        "bf16": precision == "bf16",
        "fp16": precision == "fp16",
        "gradient_checkpointing": bool(train.gradient_checkpointing) if train is not None else False,
        "use_cpu": not cuda,
        "logging_steps": 1,
        "save_strategy": "steps" if save_every else "no",
        "save_steps": save_every or 500,
        "report_to": "none",
        "seed": train.seed if train is not None else 0,
        "use_vllm": use_vllm,
        "remove_unused_columns": False,
        "log_completions": False,
        # As the compact loop (and proofgym's tiny model, which has none): RL without dropout, so that the
        # first update's log-probabilities are the sampling policy's and later updates reuse them.
        "disable_dropout": True,
        "shuffle_dataset": True,
    }
    if use_vllm:
        kwargs["vllm_mode"] = train.vllm_mode if train is not None else "colocate"
        kwargs["vllm_gpu_memory_utilization"] = train.vllm_gpu_memory_utilization if train is not None else 0.3
    return kwargs


def lora_config(train: TrainingSection | None) -> Any:
    """peft's ``LoraConfig`` for ``train.lora``, or ``None`` when LoRA is not configured."""
    if train is None or train.lora is None:
        return None
    from peft import LoraConfig

    lora = train.lora
    # peft annotates lora_alpha as int; it only scales by lora_alpha / r, so the config's float works.
    return LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,  # type: ignore[arg-type]
                      target_modules=lora.target_modules, task_type="CAUSAL_LM")


def build_grpo_trainer(run_config: RunConfig, model: Any, dataset: Any, *, tokenizer: Any = None,
                       output_dir: str | None = None, reward_fn: TRLRewardFunction | RewardFunction | None = None,
                       callbacks: Sequence[Any] = (), asynchronous: bool = False,
                       extra_reward_funcs: Sequence[Any] = (),
                       environment_factory: Any = None, config_overrides: Mapping[str, Any] | None = None,
                       curriculum: Any = None) -> Any:
    """proofgym's ``GRPOTrainer`` (TRL's, see :mod:`proofgym.training.trl._trainer`) for ``run_config``'s
    reward path and ``training:`` section.

    ``model`` is a ``PreTrainedModel`` or a model id / local path; ``dataset`` a ``datasets.Dataset``
    or a list of rows, each with ``prompt`` (text or chat messages) and the reference columns
    (``gold``, ``source_facts``...). LoRA adapters are added through peft when ``train.lora`` is
    set. The proofgym reward function is ``trainer.reward_funcs[0]`` (close it when done);
    ``extra_reward_funcs`` and ``environment_factory`` (see :func:`trl_environment`) are passed on.
    ``config_overrides`` are further ``GRPOConfig`` arguments, applied last. The KL reference is
    ``model`` as passed (TRL would reload it from disk), and the learning rate follows
    ``train.grpo``'s warm-up and ``min_lr_ratio``.

    ``curriculum`` (a :class:`~proofgym.training.BranchCurriculum` over the rows of a list
    ``dataset``, the same objects) draws each step's prompts; ``train.grpo.dynamic_sampling`` drops
    groups without a reward spread and draws more prompts. Both need ``dataset`` as a list of rows.
    """
    import datasets

    from proofgym.config import GRPOSection
    from proofgym.training.trl._trainer import ProofgymGRPOTrainer
    from trl import GRPOConfig  # type: ignore[attr-defined]  # trl's __init__ names it for type checkers only

    train = run_config.training
    grpo = train.grpo if train is not None else GRPOSection()
    kwargs = grpo_config_kwargs(train, output_dir=output_dir)
    unknown = sorted(set(config_overrides or {}) - set(GRPOConfig.__dataclass_fields__))
    if unknown:
        raise ValueError(f"config_overrides: unknown GRPOConfig fields {unknown}")
    kwargs.update(config_overrides or {})
    rows: list[Any] = []
    if isinstance(dataset, (list, tuple)):
        rows = list(dataset)
        dataset = datasets.Dataset.from_list([{**_arrow_safe(row), "row_index": i} for i, row in enumerate(rows)])
    elif curriculum is not None or grpo.dynamic_sampling:
        raise ValueError("a curriculum or dynamic sampling needs the dataset as a list of rows")
    columns = getattr(dataset, "column_names", None)
    if columns is not None and "prompt" not in columns and environment_factory is None:
        raise ValueError(f"dataset: every row needs a 'prompt' column; the columns are {columns}")
    if reward_fn is None:
        reward_fn = trl_reward_function(run_config, asynchronous=asynchronous)
    elif isinstance(reward_fn, RewardFunction):
        reward_fn = trl_reward_function(reward_fn, asynchronous=asynchronous)
    if tokenizer is not None:
        prepare_tokenizer(tokenizer)
    return ProofgymGRPOTrainer(
        model=model,
        reward_funcs=[reward_fn, *extra_reward_funcs],
        args=GRPOConfig(**kwargs),
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=list(callbacks) or None,
        peft_config=lora_config(train),
        environment_factory=environment_factory,
        rows=rows,
        curriculum=curriculum,
        dynamic_sampling=grpo.dynamic_sampling,
        max_sampling_rounds=grpo.max_sampling_rounds,
        scale_partial_batches=grpo.scale_partial_batches,
        explore_temperature=grpo.explore_temperature,
        min_lr_ratio=grpo.min_lr_ratio,
        engine=grpo.engine,
    )


def _arrow_safe(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with ``source_facts`` as JSON text: Arrow would pad differing fact sets with nulls."""
    facts = row.get("source_facts")
    return {**row, "source_facts": json.dumps(facts)} if isinstance(facts, dict) else dict(row)


def prepare_tokenizer(tokenizer: Any) -> Any:
    """Left padding and a pad token, as GRPOTrainer needs for batched generation."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ValueError("the tokenizer has neither a pad token nor an eos token to pad with")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _bf16_supported() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def _vllm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None
