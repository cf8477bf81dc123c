"""proofgym's GRPOTrainer (TRL 1.16): a curriculum sampler, dynamic sampling, the warmed-up model as KL reference.

Imported by :func:`~proofgym.training.build_grpo_trainer` only (it imports torch and trl).
:class:`ProofgymGRPOTrainer` is TRL's ``GRPOTrainer`` with five changes:

- **Curriculum sampler.** With a :class:`~proofgym.training.BranchCurriculum`, the prompts of each
  generation are drawn through it (:class:`CurriculumSampler`, in place of TRL's ``RepeatSampler``),
  and after each generation the curriculum is told how many samples of each row were correct (the
  reward function's ``correct`` component): it favours the rule branches the policy still gets
  wrong and replays rows whose samples disagree.
- **Dynamic sampling.** Groups whose rewards have no spread carry no gradient; with
  ``dynamic_sampling`` they are dropped and more prompts are drawn (at most ``max_sampling_rounds``
  generations per step) until the step has its ``batch_size`` groups with signal. With
  ``scale_partial_batches`` a step that found fewer scales its loss by the share it found, as the compact
  loop does (with a token-mean loss, 4 groups would otherwise move the weights as far as 16).
- **KL reference.** TRL rebuilds the reference model from the policy's ``name_or_path`` on disk, so a
  model changed in memory before training (a format warm-up) would be compared with its old self,
  and a model that was never saved fails. Here the reference is a frozen copy of the policy as it is
  when the trainer is built (with LoRA, TRL's disabled adapters stay the reference).
- **Learning-rate schedule.** The compact loop's: linear warm-up from ``1 / warmup_steps`` (TRL's
  first update has learning rate 0), then linear decay to ``min_lr_ratio`` of the peak at the last step.
- **Engine.** With ``engine="proofgym"`` (the default) the compact loop's two shortcuts run where the batch
  allows, both for the same reason: the 8 samples of a group share their prompt. Completions are sampled by
  :func:`~proofgym.training.sample_token_ids` (each prompt computed once for its group, where transformers'
  ``generate()`` runs every copy; no per-step logits processors) when the sampling is plain temperature / top-k
  of a text model in one process without vLLM; and the log-probabilities of the policy and the reference come
  from :func:`~proofgym.training.shared_prompt_logprobs` (each distinct prompt's forward pass once, its keys and
  values handed to its completions) when the batch is text and its logits fit in 256 MiB (TRL's fused LM head
  avoids them for a large vocabulary). Same distributions and log-probabilities; elsewhere TRL's own code runs.

Where TRL offers a public extension point it is used: the reward is a reward function, environments come through
``environment_factory``, held-out evaluation and the weight average are callbacks, the loss scale is
``compute_loss`` and the schedule ``create_scheduler``. Four private TRL methods are still overridden, each because no
public point gives the same behaviour (the reason is written above each): ``_get_train_sampler`` (the curriculum),
``_generate_and_score_completions`` (dynamic sampling, the explore temperature), ``_generate_single_turn`` and
``_get_per_token_logps_and_entropies`` (the engine). Each calls TRL's own method through ``super()`` wherever proofgym
does not change the behaviour. tests/training/trl/test_trl_private_overrides_are_pinned.py records the source of
every TRL method these overrides replace or rely on, so a TRL upgrade that changes one fails there, by name.
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import torch
from torch.utils.data import Sampler
from transformers import TrainerCallback
from trl import GRPOTrainer  # type: ignore[attr-defined]  # trl's __init__ names it for type checkers, unexported

if TYPE_CHECKING:
    from proofgym.training import WeightAverage

# The tensors of a generation batch that the merge of dynamic sampling knows how to pad: key -> (side, fill).
# "pad" fills with the tokenizer's pad token.
_MERGEABLE = {
    "prompt_ids": ("left", "pad"),
    "prompt_mask": ("left", 0),
    "completion_ids": ("right", "pad"),
    "completion_mask": ("right", 0),
    "old_per_token_logps": ("right", 0.0),
    "ref_per_token_logps": ("right", 0.0),
    "sampling_per_token_logps": ("right", 0.0),
}


# Above this many bytes of a batch's fp32 logits the log-probabilities come from TRL's fused LM head, which never
# holds them (a 150k vocabulary, 128 completions of 256 tokens: 20 GB); the tiny model's batch needs 5 MB.
_SHARED_LOGITS_BYTES = 256 << 20


class CurriculumSampler(Sampler[int]):
    """Dataset indices for TRL's dataloader: ``prompts`` rows per generation drawn by ``draw(k)``, each
    repeated ``group_size`` times (consecutively, as GRPO groups them), for ``generations`` generations."""

    def __init__(self, draw: Any, *, prompts: int, group_size: int, generations: int) -> None:
        self.draw, self.prompts, self.group_size, self.generations = draw, prompts, group_size, generations

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.generations):
            for index in self.draw(self.prompts):
                yield from [index] * self.group_size

    def __len__(self) -> int:
        return self.generations * self.prompts * self.group_size


class ProofgymGRPOTrainer(GRPOTrainer):
    """TRL's ``GRPOTrainer`` with a curriculum sampler, dynamic sampling, the in-memory KL reference and
    the compact loop's learning-rate schedule (see the module docstring).

    ``rows`` are the training rows as Python mappings, in dataset order (``curriculum`` holds the same
    row objects); the dataset must carry each row's position in a ``row_index`` column when
    ``curriculum`` or ``dynamic_sampling`` is used. Extra metrics: ``proofgym/sampling_rounds``,
    ``proofgym/groups_trained``, ``proofgym/replay_pool`` and (``scale_partial_batches``) ``proofgym/loss_scale``.

    ``explore_temperature`` (with a curriculum): the prompts whose last group every sample answered wrong are
    sampled in a generation of their own at ``temperature * explore_temperature``, as the compact loop does, so
    that a confidently wrong boundary case can still show a right answer. Each row carries the temperature it was
    sampled at (``sampling_temperature``), and where proofgym's engine computes the log-probabilities (see the
    module docstring) the policy's and the reference's are those of that temperature, as in the compact loop.
    Where TRL's fused LM head computes them, they are the base temperature's (TRL divides the logits by one
    temperature), so the hotter samples enter the loss as off-policy ones: on the demo's task that made the KL
    jump to 0.3-2 and learning worse.
    """

    # TRL's attributes as read here (annotations only): TRL types them as TrainingArguments' (args: a trl.GRPOConfig
    # here, with GRPO's fields) or as their config fields (int | None until TRL's __init__ sets them from it).
    args: Any
    model: Any
    train_dataset: Any
    processing_class: Any
    num_generations: int
    max_completion_length: int
    _last_correct: list[bool]
    _keep_logps_in: dict[str, Any] | None

    def __init__(self, *, model: Any, args: Any, rows: Sequence[Mapping[str, Any]] = (), curriculum: Any = None,
                 dynamic_sampling: bool = False, max_sampling_rounds: int = 3, min_lr_ratio: float = 0.0,
                 scale_partial_batches: bool = False, explore_temperature: float = 1.0,
                 engine: str = "proofgym", **kwargs: Any) -> None:
        if engine not in ("proofgym", "trl"):
            raise ValueError(f"engine must be 'proofgym' or 'trl', got {engine!r}")
        # TRL would build the KL reference from the policy's name_or_path on disk; copy it as it is instead. With beta
        # 0 during TRL's __init__ TRL builds none; the copy is then prepared as TRL prepares its own (pinned: the test
        # records GRPOTrainer.__init__).
        beta = args.beta
        reference = None
        if beta != 0.0 and kwargs.get("peft_config") is None and not isinstance(model, str):
            reference = copy.deepcopy(model)
            args.beta = 0.0
        try:
            super().__init__(model=model, args=args, **kwargs)
        finally:
            args.beta = beta
        if reference is not None:
            self.beta = beta
            self.ref_model = self._prepare_reference(reference)
        if (curriculum is not None or dynamic_sampling) and not rows:
            raise ValueError("a curriculum or dynamic sampling needs the training rows (rows=...)")
        if explore_temperature != 1.0 and curriculum is None:
            raise ValueError("explore_temperature needs a curriculum (it knows which prompts every sample "
                             "answered wrong)")
        if not explore_temperature >= 1.0:
            raise ValueError(f"explore_temperature must be >= 1, got {explore_temperature}")
        if max_sampling_rounds < 1:
            raise ValueError(f"max_sampling_rounds must be >= 1, got {max_sampling_rounds}")
        self.engine = engine
        self.rows = list(rows)
        self.curriculum = curriculum
        self.dynamic_sampling = dynamic_sampling
        self.max_sampling_rounds = max_sampling_rounds
        self.min_lr_ratio = min_lr_ratio
        self.scale_partial_batches = scale_partial_batches
        self.explore_temperature = float(explore_temperature)
        self._loss_scale = 1.0  # of the generation being trained on: the share of its quota of groups found
        self._round_sizes: list[int] = []  # completions per generation round of the step being generated
        self._sampled_at: float | None = None  # the temperature of the generation under way, when not the base
        self._loss_temperatures: Any = None  # the sampling temperature of each row of the loss being computed
        self._index_of = {id(row): i for i, row in enumerate(self.rows)}
        self._rng = random.Random(self.args.seed)

    def _prepare_reference(self, reference: Any) -> Any:
        """The frozen KL reference as TRL prepares its own: eval mode, no dropout, its fused LM head."""
        from trl.trainer.utils import add_fused_lm_head, disable_dropout_in_model

        reference.eval()
        for parameter in reference.parameters():
            parameter.requires_grad_(False)
        if self.args.disable_dropout:
            disable_dropout_in_model(reference)
        add_fused_lm_head(reference, temperature=self.temperature, cast_lm_head_to_fp32=self.args.cast_lm_head_to_fp32)
        return self.accelerator.prepare_model(reference, evaluation_mode=True)

    # -- prompts -----------------------------------------------------------------------------------

    def draw_indices(self, k: int) -> list[int]:
        """``k`` row indices: through the curriculum when there is one, else uniformly at random."""
        if self.curriculum is not None:
            return [self._index_of[id(row)] for row in self.curriculum.sample(k)]
        return [self._rng.randrange(len(self.rows)) for _ in range(k)]

    # Kept override of a private TRL method (pinned by tests/training/trl/test_trl_private_overrides_are_pinned.py).
    # Why: the curriculum chooses which prompts each generation trains on, and the sampler is the only place that
    # choice can be made. transformers' Trainer takes no sampler argument; its public get_train_dataloader() is
    # overridden by TRL (the batch scaled by steps_per_generation, iterable datasets wrapped) and calls this method,
    # so replacing it would mean copying TRL's copy of Trainer's dataloader code. A dataset that draws through the
    # curriculum itself (an IterableDataset) would change how accelerate dispatches and repeats the rows.
    def _get_train_sampler(self, dataset: Any = None) -> Sampler[int]:
        if self.curriculum is None:
            return super()._get_train_sampler(dataset)
        # One draw per dataloader batch; TRL reads a fresh batch only every num_iterations steps.
        return CurriculumSampler(self.draw_indices, prompts=self.args.generation_batch_size // self.num_generations,
                                 group_size=self.num_generations, generations=self.args.max_steps)

    # -- generation --------------------------------------------------------------------------------

    # Kept override of a private TRL method (pinned). Why: dynamic sampling decides, from the advantages of a scored
    # generation, whether to generate more prompts before the step trains, and merges the rounds into one batch; the
    # curriculum is told each round's results. TRL's public points act before scoring (rollout_func, which replaces
    # the generation only) or after the batch is built (callbacks, compute_loss), none between a generation's scoring
    # and the step's batch. Every round is TRL's own _generate_and_score_completions, called through super().
    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if not self.model.training:
            return super()._generate_and_score_completions(inputs)
        if self.curriculum is None and not self.dynamic_sampling:
            return self._generate_round(inputs)
        groups = len(inputs) // self.num_generations
        rounds: list[tuple[list[dict[str, Any]], dict[str, Any], list[bool]]] = []
        with_signal = 0
        logged = {name: len(values) for name, values in self._metrics["train"].items()}
        self._round_sizes = []
        for round_ in range(self.max_sampling_rounds if self.dynamic_sampling else 1):
            if round_:
                inputs = [dict(self.train_dataset[i]) for i in self.draw_indices(groups)
                          for _ in range(self.num_generations)]
            inputs, output = self._generate_explored(inputs)
            rounds.append((inputs, output, list(self._last_correct)))
            with_signal += int(self._spread(output).sum())
            if with_signal >= groups:
                break
        self._observe(rounds)
        self._weigh_round_metrics(logged)
        output = self._merge(rounds, groups) if self.dynamic_sampling else rounds[0][1]
        self._metrics["train"]["proofgym/sampling_rounds"].append(float(len(rounds)))
        trained = len(output["advantages"]) // self.num_generations
        if self.dynamic_sampling and self.scale_partial_batches:
            # Every update of this generation (TRL reuses the batch num_iterations times) is scaled alike.
            self._loss_scale = min(with_signal, groups) / groups
            self._metrics["train"]["proofgym/loss_scale"].append(self._loss_scale)
        self._metrics["train"]["proofgym/groups_trained"].append(float(trained))
        if self.curriculum is not None:
            self._metrics["train"]["proofgym/replay_pool"].append(float(self.curriculum.replay_pool_size))
        return output

    def _generate_explored(self, inputs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """``inputs`` generated and scored, the groups of prompts every sample last answered wrong at the explore
        temperature (in a generation of their own, after the others): the inputs in that order, and the output."""
        n = self.num_generations
        groups = [inputs[g * n:(g + 1) * n] for g in range(len(inputs) // n)]
        hot = [self.explore_temperature != 1.0 and self.curriculum is not None
               and self.curriculum.last_error(self.rows[int(group[0]["row_index"])]) == 1.0 for group in groups]
        if not any(hot):
            return inputs, self._generate_round(inputs)
        parts: list[tuple[list[dict[str, Any]], dict[str, Any], list[bool]]] = []
        for explore in (False, True):
            chosen = [row for group, flag in zip(groups, hot) if flag == explore for row in group]
            if chosen:
                with self._sampling_temperature(self.temperature * (self.explore_temperature if explore else 1.0)):
                    output = self._generate_round(chosen)
                parts.append((chosen, output, list(self._last_correct)))
        self._metrics["train"]["proofgym/explored_groups"].append(float(sum(hot)))
        self._last_correct = [c for _, _, correct in parts for c in correct]
        return [row for chosen, _, _ in parts for row in chosen], self._merge(parts, len(groups), spread_only=False)

    @contextlib.contextmanager
    def _sampling_temperature(self, temperature: float) -> Iterator[None]:
        """A context in which TRL's generation samples at ``temperature``; the generation's rows then carry it as
        ``sampling_temperature``, the temperature of their log-probabilities where proofgym computes them."""
        config, kwargs = getattr(self, "generation_config", None), getattr(self, "generation_kwargs", None)
        before = (getattr(config, "temperature", None), (kwargs or {}).get("temperature"), self._sampled_at)
        try:
            if config is not None:
                config.temperature = temperature
            if kwargs is not None:
                kwargs["temperature"] = temperature
            self._sampled_at = temperature
            yield
        finally:
            if config is not None:
                config.temperature = before[0]
            if kwargs is not None:
                kwargs["temperature"] = before[1]
            self._sampled_at = before[2]

    # Kept override of a private TRL method (pinned). Why: TRL's public alternative, rollout_func (experimental in
    # TRL 1.16), replaces the whole of _generate's first half: TRL then skips its own prompt tokenization and passes
    # no images or multimodal fields on, so the cases this engine leaves to TRL (vLLM, vision inputs, non-plain
    # sampling, several processes) would have to call TRL's private _tokenize_prompts and _generate_single_turn from
    # inside it. Here TRL tokenizes and everything but plain-text sampling is TRL's own code, through super().
    def _generate_single_turn(self, prompt_ids: Any, images: Any, multimodal_fields: Any, num_generations: int,
                              has_tool_images: bool = False) -> tuple[list[list[int]], Any]:
        if not self._decodes_itself(images, multimodal_fields):
            # TRL's method is unannotated.
            generated: tuple[list[list[int]], Any] = super()._generate_single_turn(  # type: ignore[no-untyped-call]
                prompt_ids, images, multimodal_fields, num_generations, has_tool_images)
            return generated
        from trl.extras.profiling import profiling_context

        from proofgym.training import sample_token_ids

        prompts, samples = [list(ids) for ids in prompt_ids], 1
        n = num_generations
        if n > 1 and len(prompts) % n == 0 and all(prompts[i] == prompts[i - i % n] for i in range(len(prompts))):
            prompts, samples = prompts[::n], n  # TRL's sampler repeats each prompt for its group, in a row
        config = self.generation_config
        with profiling_context(self, "proofgym.sample_token_ids"):
            completions = sample_token_ids(
                self.accelerator.unwrap_model(self.model_wrapped), prompts, num_samples=samples,
                temperature=float(config.temperature), max_new_tokens=self.max_completion_length,
                eos_ids=list(self.eos_token_ids), pad_id=self._tokenizer.pad_token_id, top_k=config.top_k or None)
        return completions, None

    def _decodes_itself(self, images: Any, multimodal_fields: Any) -> bool:
        """Whether this generation can run :func:`~proofgym.training.sample_token_ids` and sample what TRL's
        ``generate()`` would: plain temperature / top-k sampling of a text model in one process, without gradient
        checkpointing (which turns the cache off; TRL's generation lifts it for the while)."""
        config = getattr(self, "generation_config", None)
        return (self._engine_applies() and config is not None and not self.use_vllm
                and not getattr(self, "use_transformers_continuous_batching", False)
                and not images and not multimodal_fields and self.args.generation_kwargs is None
                and getattr(config, "top_p", None) in (None, 1.0) and not getattr(config, "min_p", None)
                and getattr(config, "repetition_penalty", None) in (None, 1.0)
                and not getattr(config, "suppress_tokens", None))

    def _engine_applies(self) -> bool:
        """What both of proofgym's shortcuts need: ``engine="proofgym"``, one process with the model whole (no
        DeepSpeed or FSDP), no gradient checkpointing (it turns the cache they run on off) and a pad token."""
        return (self.engine == "proofgym" and self.accelerator.num_processes == 1 and not self.is_deepspeed_enabled
                and not self.is_fsdp_enabled and not self.args.gradient_checkpointing
                and self._tokenizer.pad_token_id is not None)

    def _current_temperature(self) -> float:
        """The temperature of the generation under way (an explored one's, inside :meth:`_sampling_temperature`)."""
        return self._sampled_at if self._sampled_at is not None else self.temperature

    def _generate_round(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """One generation, scored. With several updates per generation TRL runs one more forward pass for the
        sampling policy's log-probabilities; here the first update's own (the weights have not moved yet,
        and dropout is off) are kept for the later updates instead (see :meth:`compute_loss`)."""
        self._round_sizes.append(len(inputs))
        if not self._reuses_first_logps():
            output = super()._generate_and_score_completions(inputs)
        else:
            iterations, self.num_iterations = self.num_iterations, 1
            try:
                output = super()._generate_and_score_completions(inputs)
            finally:
                self.num_iterations = iterations
        self._last_correct = self._correct_of_last_scoring(len(inputs))
        output["sampling_temperature"] = torch.full((len(output["advantages"]),), float(self._current_temperature()),
                                                    device=output["advantages"].device)
        return output

    def _correct_of_last_scoring(self, n: int) -> list[bool]:
        """Whether each of the ``n`` completions just scored was correct: the ``correct`` component of proofgym's TRL
        reward function, which keeps the items of its last call (``last_items``). Read here, after TRL's scoring,
        rather than in an override of TRL's private ``_calculate_rewards``."""
        items = getattr(self.reward_funcs[0], "last_items", None)
        if self.curriculum is not None and (items is None or len(items) != n):
            raise ValueError("a curriculum needs proofgym's TRL reward function as the first reward function "
                             "(it reads each completion's 'correct' component)")
        return [item.components.get("correct", 0.0) == 1.0 for item in items or ()]

    def _reuses_first_logps(self) -> bool:
        args = self.args
        return (self.num_iterations > 1 and args.gradient_accumulation_steps == 1 and args.steps_per_generation == 1
                and not self.use_vllm and args.disable_dropout)

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        if self.model.training and self._reuses_first_logps() and inputs.get("old_per_token_logps") is None:
            self._keep_logps_in = inputs  # the buffered batch, which the next updates read again
        self._loss_temperatures = inputs.get("sampling_temperature")
        try:
            result = super().compute_loss(model, inputs, return_outputs=return_outputs,
                                          num_items_in_batch=num_items_in_batch)
        finally:
            self._keep_logps_in = self._loss_temperatures = None
        if self.model.training and self._loss_scale != 1.0:
            if return_outputs:
                return result[0] * self._loss_scale, result[1]
            return result * self._loss_scale
        return result

    # Kept override of a private TRL method (pinned). Why: the policy's, the old policy's and the reference's
    # log-probabilities are computed inside TRL's _generate_and_score_completions and _compute_loss, both through this
    # method, and TRL offers no public hook for them (compute_loss sees the loss, not the log-probabilities). It also
    # keeps the first update's log-probabilities for the later updates of a generation (see _generate_round).
    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: Any, attention_mask: Any,
                                           logits_to_keep: int, batch_size: int | None = None,
                                           compute_entropy: bool = False, compute_aux_loss: bool = False,
                                           **inputs: Any) -> Any:
        if self._shares_prompts(model, input_ids, logits_to_keep, compute_aux_loss, inputs):
            result = self._shared_prompt_logps(model, input_ids, attention_mask, logits_to_keep, compute_entropy)
        else:
            result = super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **inputs)
        keep = getattr(self, "_keep_logps_in", None)
        if keep is not None:
            keep["old_per_token_logps"] = result[0].detach()
            self._keep_logps_in = None
        return result

    def _weigh_round_metrics(self, logged: Mapping[str, int]) -> None:
        """One entry per metric for this step's generations, the mean of its rounds' entries weighted by their
        completions. TRL appends one entry per generation round (the mean over the round's completions) and logs
        the unweighted mean of a step's entries: an explored round of 8 hot samples would weigh as much as the
        128 of the round beside it."""
        sizes = self._round_sizes
        if len(sizes) < 2:
            return
        for name, values in self._metrics["train"].items():
            start = logged.get(name, 0)
            if len(values) - start != len(sizes):
                continue
            pairs = [(v, n) for v, n in zip(values[start:], sizes, strict=True) if v == v]  # NaN: none in the round
            del values[start:]
            last = name.rsplit("/", 1)[-1]
            if not pairs:
                values.append(float("nan"))
            elif last.startswith(("min", "max")):  # completions/min_length...: the extreme over the rounds
                values.append((min if last.startswith("min") else max)(v for v, _ in pairs))
            else:
                values.append(sum(v * n for v, n in pairs) / sum(n for _, n in pairs))

    def _shares_prompts(self, model: Any, input_ids: Any, logits_to_keep: int, compute_aux_loss: bool,
                        inputs: Mapping[str, Any]) -> bool:
        """Whether :func:`~proofgym.training.shared_prompt_logprobs` can score this batch: text only, no MoE
        auxiliary loss, one process, no gradient checkpointing (it turns the prompt's cache off), and the batch's
        logits within :data:`_SHARED_LOGITS_BYTES`."""
        if not self._engine_applies() or compute_aux_loss or any(v is not None for v in inputs.values()):
            return False
        head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        vocab = getattr(getattr(head, "weight", None), "shape", (None,))[0]
        return vocab is not None and input_ids.shape[0] * logits_to_keep * vocab * 4 <= _SHARED_LOGITS_BYTES

    def _shared_prompt_logps(self, model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int,
                             compute_entropy: bool) -> tuple[Any, Any, None]:
        from trl.extras.profiling import profiling_context

        from proofgym.training import shared_prompt_logprobs

        prompt_ids, prompt_mask = input_ids[:, :-logits_to_keep], attention_mask[:, :-logits_to_keep]
        prompts = [[t for t, m in zip(ids, mask) if m] for ids, mask in zip(prompt_ids.tolist(), prompt_mask.tolist())]
        completions = input_ids[:, -logits_to_keep:].tolist()  # padding included: its values are masked out
        # The temperature each row was sampled at: the loss's rows carry theirs; a generation's reference pass runs
        # while its temperature is set.
        temperature = self._loss_temperatures if self._loss_temperatures is not None else self._current_temperature()
        with profiling_context(self, "proofgym.shared_prompt_logprobs"), self.accelerator.autocast():
            result = shared_prompt_logprobs(model, prompts, completions, pad_id=self._tokenizer.pad_token_id,
                                            temperature=temperature, entropy=compute_entropy)
        logps, entropies = result if compute_entropy else (result, None)
        return logps, entropies, None

    def _spread(self, output: Mapping[str, Any]) -> Any:
        """Per group: whether any completion has a non-zero advantage."""
        return (output["advantages"].view(-1, self.num_generations) != 0).any(dim=1)

    def _observe(self, rounds: list[tuple[list[dict[str, Any]], dict[str, Any], list[bool]]]) -> None:
        """Tell the curriculum how many samples of each drawn row were correct."""
        if self.curriculum is None:
            return
        by_branch: dict[str, list[int]] = {}
        observed = []
        for inputs, _, correct in rounds:
            for g in range(len(inputs) // self.num_generations):
                span = range(g * self.num_generations, (g + 1) * self.num_generations)
                row = self.rows[int(inputs[span.start]["row_index"])]
                right = sum(correct[i] for i in span)
                observed.append((row, right, len(span)))
                entry = by_branch.setdefault(self.curriculum.branch_of(row), [0, 0])
                entry[0] += right
                entry[1] += len(span)
        self.curriculum.update({b: (c, n) for b, (c, n) in by_branch.items()})
        self.curriculum.observe(observed)

    def _merge(self, rounds: list[tuple[list[dict[str, Any]], dict[str, Any], list[bool]]], groups: int,
               spread_only: bool = True) -> dict[str, Any]:
        """The first ``groups`` groups with a reward spread across the rounds (``spread_only=False``: the first
        ``groups`` groups), as one generation batch (every round's groups when none has a spread: the step then
        only moves by the KL term)."""
        picked: list[tuple[dict[str, Any], int]] = []
        for _, output, _ in rounds:
            chosen = self._spread(output) if spread_only else torch.ones(len(output["advantages"]) //
                                                                         self.num_generations, dtype=torch.bool)
            for g in torch.nonzero(chosen).flatten().tolist():
                if len(picked) < groups:
                    picked.append((output, g))
        if not picked:
            return rounds[0][1]
        outputs = [output for output, _ in picked]
        first = outputs[0]
        known = {*_MERGEABLE, "advantages", "num_items_in_batch", "sampling_temperature"}
        unknown = sorted(k for k, v in first.items() if isinstance(v, torch.Tensor) and k not in known)
        if unknown:
            raise ValueError(f"dynamic sampling cannot merge generation batches with {unknown} (multimodal or tool "
                             "rollouts); set training.grpo.dynamic_sampling: false")
        pad_id = self.processing_class.pad_token_id if hasattr(self.processing_class, "pad_token_id") \
            else self._tokenizer.pad_token_id
        n = self.num_generations
        merged: dict[str, Any] = {}
        for key, (side, fill) in _MERGEABLE.items():
            if first.get(key) is None:
                continue
            width = max(output[key].shape[1] for output in outputs)
            value = pad_id if fill == "pad" else fill
            parts = [_pad_to(output[key][g * n:(g + 1) * n], width, side, value) for output, g in picked]
            merged[key] = torch.cat(parts, dim=0)
        merged["advantages"] = torch.cat([output["advantages"][g * n:(g + 1) * n] for output, g in picked])
        if all(output.get("sampling_temperature") is not None for output in outputs):
            merged["sampling_temperature"] = torch.cat([output["sampling_temperature"][g * n:(g + 1) * n]
                                                        for output, g in picked])
        merged["num_items_in_batch"] = merged["completion_mask"].sum()  # no tool_mask: refused above
        for key, value in first.items():
            merged.setdefault(key, value)
        return merged

    # -- schedule ----------------------------------------------------------------------------------

    # transformers' documented override point for a schedule of one's own (public); it sets Trainer's
    # _created_lr_scheduler flag as Trainer.create_scheduler does, so that Trainer rebuilds it on a new train() call.
    def create_scheduler(self, num_training_steps: int, optimizer: Any = None) -> Any:
        if self.lr_scheduler is None:
            from proofgym.training import CompactGRPOConfig

            warmup = self.args.get_warmup_steps(num_training_steps)
            schedule = CompactGRPOConfig(warmup_steps=warmup, min_lr_ratio=self.min_lr_ratio,
                                  decay_steps=num_training_steps if num_training_steps > warmup else 0)
            optimizer = cast(torch.optim.Optimizer, optimizer or self.optimizer)
            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule.lr_factor)
            self._created_lr_scheduler = True
        return self.lr_scheduler


class WeightAverageCallback(TrainerCallback):
    """Keeps proofgym's :class:`~proofgym.training.WeightAverage` of the policy (an exponential
    moving average of its weights, folded in after every step, with a smaller decay for the first
    ``1 / (1 - decay)`` steps) and puts it into the model when training ends: the model saved and
    evaluated is the average.

    Late in GRPO the live policy's decision on a rare boundary case (an income of exactly the threshold)
    moves with every update; the average of the weights settles where the live policy oscillates.

    ``average.model`` holds the weights, not a model to run: copied from TRL's policy, its ``forward`` is TRL's
    patch, a closure over the policy's own bound method, so calling it runs the live weights (score the average by
    loading its weights into the policy, as :class:`HeldoutCallback` does)."""

    def __init__(self, decay: float) -> None:
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"decay must be in [0, 1), got {decay}")
        self.decay = decay
        self.average: WeightAverage | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        from proofgym.training import WeightAverage

        self.average = WeightAverage(model, self.decay)

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        cast("WeightAverage", self.average).update(model)

    def on_train_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        _copy_into(model, cast("WeightAverage", self.average).model.parameters())


class HeldoutCallback(TrainerCallback):
    """Scores the held-out rows every ``every`` steps with ``evaluate(model)``: with the weights of the moving
    average of ``average`` (a :class:`WeightAverageCallback`) when given, the live policy's otherwise. With
    ``stop_at`` it stops training once every rule branch is at ``stop_at`` or above at two evaluations in a row.
    ``evaluations`` holds ``(step, report)`` pairs; the last step is not scored here (the caller scores the final
    weights)."""

    def __init__(self, evaluate: Callable[[Any], Any], *, every: int, stop_at: float | None = None,
                 average: Any = None, on_status: Callable[[str], None] | None = None) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.evaluate, self.every, self.stop_at, self.average = evaluate, every, stop_at, average
        self.on_status = on_status or (lambda message: None)
        self.evaluations: list[tuple[int, Any]] = []
        self.stopped_early = False

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> Any:
        step = state.global_step
        if step % self.every or step >= state.max_steps:
            return control  # the last step's weights are scored after training anyway
        if self.average is not None and self.average.average is not None:
            report = self._evaluate_with(model, self.average.average.model)
        else:
            report = self.evaluate(model)
        self.evaluations.append((step, report))
        accuracies = report.branch_accuracy()
        worst = min(accuracies, key=accuracies.get) if accuracies else None
        self.on_status(f"held-out at step {step}: {report.accuracy:.1%}"
                       + (f", worst branch {worst} {accuracies[worst]:.1%}" if worst is not None else ""))
        if self.stop_at is not None and len(self.evaluations) >= 2 and all(
                _every_branch_at(r, self.stop_at) for _, r in self.evaluations[-2:]):
            self.stopped_early = True
            control.should_training_stop = True
            self.on_status(f"stopping at step {step} of {state.max_steps}: every branch at {self.stop_at:.1%} or "
                           "above at two held-out evaluations in a row")
        return control

    def _evaluate_with(self, model: Any, average: Any) -> Any:
        """``evaluate(model)`` with ``average``'s weights in ``model`` for the while, then its own back. Not
        ``evaluate(average)``: TRL patches the policy's ``forward`` with a closure over the policy's own bound
        method, which a copy keeps, so the copy would run the live weights."""
        live = [parameter.detach().clone() for parameter in model.parameters()]
        try:
            _copy_into(model, average.parameters())
            return self.evaluate(model)
        finally:
            _copy_into(model, live)


def _copy_into(model: Any, values: Any) -> None:
    """``model``'s parameters set to ``values`` (tensors in ``model.parameters()`` order), outside autograd."""
    with torch.no_grad():
        for parameter, value in zip(model.parameters(), values, strict=True):
            parameter.copy_(value)


def _every_branch_at(report: Any, threshold: float) -> bool:
    accuracies = report.branch_accuracy()
    return bool(accuracies) and all(value >= threshold for value in accuracies.values())


def _pad_to(tensor: Any, width: int, side: str, value: Any) -> Any:
    missing = width - tensor.shape[1]
    if missing <= 0:
        return tensor
    fill = torch.full((tensor.shape[0], missing), value, dtype=tensor.dtype, device=tensor.device)
    return torch.cat([fill, tensor] if side == "left" else [tensor, fill], dim=1)
