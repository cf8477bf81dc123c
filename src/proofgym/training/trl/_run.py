"""``proofgym train``: GRPO through TRL on a run config's ``training:`` section, evaluated before and after.

One run: load the model (a hub id, a local directory or ``proofgym:tiny``), build the training and
held-out rows, optionally warm up on the answer format, score the held-out rows greedily, train
with TRL's GRPOTrainer against the run config's reward path, save the model, score the held-out
rows again, and write ``metrics.csv`` (one row per step), ``reward_curve.png`` and ``summary.json``
into the output directory (checkpoints under ``checkpoint-N`` when ``save_every`` is set, the final
model under ``final``).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from proofgym.config import ConfigError, RunConfig, TrainingSection
from proofgym.formats import DocumentError, load_json
from proofgym.training.trl._adapter import build_grpo_trainer, prepare_tokenizer, trl_reward_function

# TRL log keys -> the per-step columns of metrics.csv.
STEP_COLUMNS = {
    "reward": "reward",
    "reward_std": "reward_std",
    "proofgym/certified_share": "certified",
    "proofgym/correct_share": "correct",
    "proofgym/format_ok_share": "format_ok",
    "proofgym/invalid_share": "invalid",
    "frac_reward_zero_std": "zero_spread_groups",
    "proofgym/sampling_rounds": "sampling_rounds",
    "proofgym/groups_trained": "groups_trained",
    "kl": "kl",
    "loss": "loss",
    "entropy": "entropy",
    "completions/mean_length": "completion_tokens",
    "learning_rate": "learning_rate",
    "step_time": "step_time_s",
}


@dataclass(frozen=True)
class TrainResult:
    """Where a run wrote its outputs, and its held-out scores before and after training."""

    output_dir: Path
    steps: int
    metrics_csv: Path
    reward_curve: Path
    summary: Path
    final_model: Path
    heldout_before: Any = None
    heldout_after: Any = None
    last_step: Mapping[str, Any] | None = None
    wall_s: float = 0.0
    heldout_during: tuple[tuple[int, Any], ...] = ()
    stopped_early: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "output_dir": str(self.output_dir),
            "steps": self.steps,
            "metrics_csv": str(self.metrics_csv),
            "reward_curve": str(self.reward_curve),
            "final_model": str(self.final_model),
            "heldout_before": None if self.heldout_before is None else self.heldout_before.to_dict(),
            "heldout_after": None if self.heldout_after is None else self.heldout_after.to_dict(),
            "last_step": dict(self.last_step or {}),
            "wall_s": self.wall_s,
            "heldout_during": [{"step": step, **report.to_dict()} for step, report in self.heldout_during],
            "stopped_early": self.stopped_early,
        }


def run_training(run: RunConfig, *, steps: int | None = None, output_dir: str | Path | None = None,
                 on_step: Callable[[dict[str, Any]], None] | None = None,
                 on_status: Callable[[str], None] | None = None) -> TrainResult:
    """Train as ``run.training`` says (``steps`` / ``output_dir`` override it); see the module docstring.

    ``on_step(row)`` gets each step's metrics row (the columns of ``metrics.csv``) and
    ``on_status(message)`` each phase; when ``on_step`` is given, TRL's own log printing is off.
    Raises :class:`~proofgym.config.ConfigError` for a config that cannot be trained.
    """
    train = _train_section(run, steps)
    run = run.model_copy(update={"training": train})
    _check_domains(train)

    import torch
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from proofgym.training import MetricsLog, evaluate_heldout

    status = on_status or (lambda message: None)
    out = Path(output_dir if output_dir is not None else train.output_dir).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if train.cpu_threads is not None:
        torch.set_num_threads(train.cpu_threads)
    random.seed(train.seed)
    torch.manual_seed(train.seed)

    status(f"loading model {train.model}")
    model, tokenizer = load_model(train)
    rows, heldout = training_rows(run, train, tokenizer)
    reward = trl_reward_function(run)
    try:
        if train.warmup is not None:
            status(f"format warm-up: {train.warmup.steps} supervised steps")
            warm_up(run, train, model, tokenizer, rows)
        before = after = None

        def evaluate(policy: Any) -> Any:
            return evaluate_heldout(policy, tokenizer, heldout, reward.reward_fn, batch_size=train.heldout.batch_size,
                                    max_new_tokens=train.grpo.max_completion_length)

        if heldout:
            status(f"held-out evaluation before training ({len(heldout)} rows)")
            before = evaluate(model)
        log = MetricsLog()
        last: dict[str, Any] = {}

        class _Recorder(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None,
                       **kwargs: Any) -> None:
                if not logs or "reward" not in logs:
                    return  # the end-of-training summary, or an evaluation log
                row = log.log(state.global_step, **{column: _number(logs.get(key))
                                                    for key, column in STEP_COLUMNS.items()})
                last.clear()
                last.update(row)
                if on_step is not None:
                    on_step(dict(row))

        status(f"GRPO: {train.grpo.steps} steps of {train.grpo.batch_size} prompts x {train.grpo.group_size} "
               "completions")
        callbacks: list[Any] = [_Recorder()]
        average = None
        if train.average_decay is not None:
            from proofgym.training.trl._trainer import WeightAverageCallback

            average = WeightAverageCallback(train.average_decay)
            callbacks.append(average)
        during = None
        if heldout and train.heldout.every:
            from proofgym.training.trl._trainer import HeldoutCallback

            # After the average's callback, so that an evaluation sees the average with this step in it.
            during = HeldoutCallback(evaluate, every=train.heldout.every, stop_at=train.heldout.stop_at,
                                     average=average, on_status=status)
            callbacks.append(during)
        trainer = build_grpo_trainer(run, model, rows, tokenizer=tokenizer, output_dir=str(out),
                                     reward_fn=reward, callbacks=callbacks, curriculum=curriculum(train, rows),
                                     config_overrides={"disable_tqdm": on_step is not None})
        if on_step is not None:
            trainer.remove_callback(PrinterCallback)
            trainer.remove_callback(ProgressCallback)
        trainer.train()
        final = out / "final"
        trainer.save_model(str(final))
        tokenizer.save_pretrained(str(final))
        if heldout:
            status("held-out evaluation after training")
            after = evaluate(trainer.model)
    finally:
        reward.close()
    metrics_csv = log.write_csv(out / "metrics.csv")
    curve = log.plot(out / "reward_curve.png", metrics=("reward", "certified", "correct", "format_ok"),
                     title=f"{run.name}: GRPO on {train.model}")
    result = TrainResult(output_dir=out, steps=len(log.rows), metrics_csv=metrics_csv, reward_curve=curve,
                         summary=out / "summary.json", final_model=final, heldout_before=before,
                         heldout_after=after, last_step=dict(last), wall_s=time.perf_counter() - started,
                         heldout_during=tuple(during.evaluations) if during is not None else (),
                         stopped_early=during is not None and during.stopped_early)
    result.summary.write_text(json.dumps({"config": run.name, "model": train.model, **result.to_dict()},
                                         indent=2, default=str), encoding="utf-8")
    return result


def load_model(train: TrainingSection) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``train.model``: the tiny offline model, or a causal LM as ``proofgym serve-model``
    loads it (a hub id, read from the local cache first; a local directory; ``smollm2`` or a ``.gguf`` file), in
    bf16 on a GPU that supports it, else fp32. A model that cannot be loaded is a
    :class:`~proofgym.config.ConfigError` naming ``train.model``."""
    import torch

    cuda = torch.cuda.is_available()
    if train.is_tiny:
        from proofgym.policies import TinyModelConfig, build_tiny_model

        shape = TinyModelConfig(**train.tiny_model.model_dump()) if train.tiny_model is not None else None
        model, tokenizer = build_tiny_model(train.model_cache_dir, seed=train.seed, config=shape)
        return (model.to("cuda") if cuda else model), prepare_tokenizer(tokenizer)
    from proofgym.model_server import load_model as load_causal_lm

    dtype = torch.bfloat16 if (cuda and torch.cuda.is_bf16_supported() and train.precision in ("auto", "bf16")) \
        else torch.float32
    try:
        loaded = load_causal_lm(train.model, device="cuda" if cuda else "cpu", dtype=dtype)
    except ValueError as exc:  # the serve backend's ModelLoadError, one line naming the model
        raise ConfigError(f"training.model: {exc}") from None
    return loaded.model, prepare_tokenizer(loaded.tokenizer)


def training_rows(run: RunConfig, train: TrainingSection, tokenizer: Any) -> tuple[list[dict[str, Any]],
                                                                               list[dict[str, Any]]]:
    """``(training rows, held-out rows)``; training rows whose facts are a held-out row's are dropped."""
    data = train.dataset
    chat = _chat(data.prompt_format, tokenizer)
    held = train.heldout
    heldout: list[dict[str, Any]] = []
    # n and seed are typed None until TrainingSection's validator fills them in (a loaded config has both).
    n, seed = cast(int, held.n), cast(int, held.seed)
    if n > 0 or held.file is not None:
        if held.file is not None:
            heldout = read_rows(held.file)
        else:
            heldout = domain_rows(held.domain or data.domain, seed, n, data.prompt_format, chat,
                                  heldout=True)
    if data.file is not None:
        rows = read_rows(data.file)
    elif data.prompt_format == "compact":
        from proofgym.training import contrast_rows, demo_rows

        # As the demo draws them: records whose facts are a held-out row's are skipped, and more drawn.
        held_records = [row for row in heldout if isinstance(row.get("source_facts"), dict)]
        rows = demo_rows(data.seed, data.n, exclude=held_records)
        if data.contrast:
            rows += contrast_rows(rows, seed=data.seed, exclude=held_records)
    else:
        rows = domain_rows(data.domain, data.seed, data.n, data.prompt_format, chat)
    if heldout:
        for i, row in enumerate(heldout):
            if not isinstance(row.get("gold"), str):
                raise ConfigError(f"heldout row {i}: needs a string 'gold' decision to be scored")
        held_facts = {_facts_key(row.get("source_facts")) for row in heldout} - {None}
        rows = [row for row in rows if _facts_key(row.get("source_facts")) not in held_facts]
    if not rows:
        raise ConfigError("training.dataset: no training rows left (every row is also a held-out row)")
    return rows, heldout


def domain_rows(name: str | None, seed: int, n: int, prompt_format: str, chat: bool, *,
                heldout: bool = False) -> list[dict[str, Any]]:
    """``n`` rows of domain ``name`` (a shipped domain, or a domain folder by path) for ``seed``, prompts in
    ``prompt_format``.

    ``heldout``: compact rows are drawn as a held-out set (see :func:`proofgym.training.demo_rows`); a domain
    folder's held-out rows are its held-out split's first ``n`` records (its training rows are drawn from its
    train split)."""
    from proofgym.domains import build_example, resolve_domain

    try:
        domain = resolve_domain(str(name))
    except KeyError as exc:
        raise ConfigError(f"training.dataset.domain: {exc.args[0]}") from None
    except ValueError as exc:
        raise ConfigError(f"training.dataset.domain: {exc}") from None
    if prompt_format == "compact":
        from proofgym.training import DEMO_DOMAIN_NAME, demo_rows

        if domain.name != DEMO_DOMAIN_NAME:
            raise ConfigError(f"training.dataset.prompt_format: compact exists for domain {DEMO_DOMAIN_NAME!r} only")
        return demo_rows(seed, n, heldout=heldout)
    split_records = getattr(domain, "split_records", None)
    records = split_records("heldout")[:n] if heldout and split_records is not None else domain.generate(seed, n)
    rows = []
    for record in records:
        row = build_example(domain, record, chat=chat and prompt_format != "record")
        if prompt_format == "record":
            row["prompt"] = domain.render(record)
        rows.append(row)
    return rows


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Rows from a JSONL file; each needs ``prompt`` (a string or chat messages). Errors name file:line."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"{path}: dataset file not found")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = load_json(line.rstrip("\r\n"))  # a key given twice, deep nesting, huge integers refused
            except DocumentError as exc:
                raise ConfigError(f"{path}:{number}: {exc.in_jsonl_line()}") from None
            if not isinstance(row, dict):
                raise ConfigError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            prompt = row.get("prompt")
            if not (isinstance(prompt, str) and prompt.strip()) and not _is_messages(prompt):
                raise ConfigError(f"{path}:{number}: 'prompt' must be a non-empty string or a list of chat "
                                  "messages ({role, content})")
            if row.get("source_facts") is not None and not isinstance(row["source_facts"], dict):
                raise ConfigError(f"{path}:{number}: 'source_facts' must be an object of fact name -> value")
            rows.append(row)
    if not rows:
        raise ConfigError(f"{path}: the dataset file has no rows")
    return rows


def curriculum(train: TrainingSection, rows: list[dict[str, Any]]) -> Any:
    """The ``BranchCurriculum`` of ``train.curriculum`` over ``rows``, or ``None`` when none is configured.

    Raises :class:`~proofgym.config.ConfigError` when a row lacks the curriculum's key or a gold decision."""
    settings = train.curriculum
    if settings is None:
        return None
    from proofgym.training import BranchCurriculum

    for i, row in enumerate(rows):
        if settings.key not in row or not isinstance(row.get("gold"), str):
            what = f"no {settings.key!r} column" if settings.key not in row else "no string 'gold' decision"
            raise ConfigError(f"training.curriculum: training row {i} has {what} (the columns are {sorted(row)})")
    return BranchCurriculum(rows, seed=train.seed, key=settings.key, mix=settings.mix, decay=settings.decay,
                            min_error=settings.min_error, replay=settings.replay,
                            replay_weighting=settings.replay_weighting)


def warm_up(run: RunConfig, train: TrainingSection, model: Any, tokenizer: Any,
            rows: list[dict[str, Any]]) -> list[float]:
    """The format warm-up of ``training.warmup`` (see :class:`~proofgym.config.WarmupSection`); the losses."""
    from proofgym.training import SFTConfig, sft_warmup

    assert train.warmup is not None
    parser: Any = run.parser  # its options (decisions, facts_key, ...) are attributes of the parser kind's own
    if parser.kind != "json_block" or not parser.decisions:
        raise ConfigError("training.warmup: needs parser.kind json_block with parser.decisions listed, to write "
                          "the format's targets")
    pool = [row for row in rows if isinstance(row.get("source_facts"), dict)]
    if not pool:
        raise ConfigError("training.warmup: the training rows carry no source_facts to restate")
    decisions = list(parser.decisions)

    def example(rng: random.Random) -> tuple[Any, str]:
        row = rng.choice(pool)
        # Facts first, so that the decision is written after the facts it must follow from.
        body = json.dumps({parser.facts_key: row["source_facts"], parser.answer_key: rng.choice(decisions)})
        return row["prompt"], f"<{parser.tag}>{body}</{parser.tag}>"

    settings = train.warmup
    config = SFTConfig(steps=settings.steps, batch_size=settings.batch_size, learning_rate=settings.learning_rate,
                       warmup_steps=min(10, settings.steps))
    return sft_warmup(model, tokenizer, example, config=config, seed=train.seed)


def _train_section(run: RunConfig, steps: int | None) -> TrainingSection:
    if run.training is None:
        where = run.source or run.name
        raise ConfigError(f"{where}: the run config has no training: section (model, dataset, grpo, ...)")
    train = run.training
    if steps is not None:
        if steps < 1:
            raise ConfigError(f"steps must be at least 1, got {steps}")
        train = train.model_copy(update={"grpo": train.grpo.model_copy(update={"steps": steps})})
    return train


def _check_domains(train: TrainingSection) -> None:
    """Fail before the model loads when a dataset names a domain that is not shipped, or a domain folder that
    cannot be loaded."""
    from proofgym.domains import domain_names, is_domain_path, resolve_domain

    for where, name in (("training.dataset.domain", train.dataset.domain),
                        ("training.heldout.domain", train.heldout.domain)):
        if name is not None and is_domain_path(name):
            try:
                resolve_domain(name)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        elif name is not None and name not in domain_names():
            raise ConfigError(f"{where}: unknown domain {name!r}; known domains: {', '.join(domain_names())}")


def _chat(prompt_format: str, tokenizer: Any) -> bool:
    if prompt_format == "auto":
        return bool(getattr(tokenizer, "chat_template", None))
    return prompt_format == "chat"


def _facts_key(facts: Any) -> str | None:
    return json.dumps(facts, sort_keys=True, default=str) if isinstance(facts, dict) else None


def _is_messages(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
