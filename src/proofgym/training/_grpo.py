"""A compact GRPO loop: sample groups, score them with a reward function, take clipped policy-gradient steps.

The maths is the policy-gradient core's (:mod:`proofgym.training._policy_gradient`: :func:`group_advantages`,
:func:`clipped_loss`, :func:`selected_logprobs`); :class:`CompactGRPO` wires it to a Hugging Face causal LM, a
:class:`~proofgym.rewards.RewardFunction` and a prompt curriculum. Rewards go through the reward function exactly
as a trainer's would (parser -> runtime -> verifier -> shaper); ``None`` rewards (invalid verifications) carry no
signal and are left out of their group's statistics and of the loss.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from proofgym.training._curriculum import BranchCurriculum
from proofgym.training._generate import generate
from proofgym.training._policy_gradient import clipped_loss, group_advantages, selected_logprobs
from proofgym.training._precision import Precision, autocast, check_precision

@dataclass(frozen=True)
class CompactGRPOConfig:
    """Hyper-parameters of :class:`CompactGRPO` (defaults: the ones that learned the demo on CPU).

    ``prompts_per_step`` groups of ``group_size`` samples are trained on per step, with
    ``updates_per_generation`` gradient steps on each generation (1: on-policy, the ratio is 1; 2
    reuses each generation once more under the clipped ratio, for half the sampling cost per update).
    ``beta`` weighs the KL penalty to a frozen copy of the starting model: it keeps the tokens the
    reward barely distinguishes (restated facts) where the warm-up put them.
    ``dynamic_sampling`` drops groups whose rewards have no spread and draws more prompts (at most
    ``max_sampling_rounds`` generations per step, of ``prompts_per_step * max_sampling_rounds`` prompts in all)
    until ``prompts_per_step`` groups with signal are found; each generation draws as many prompts as the last
    step's share of groups without signal says it needs (one larger generation costs less than several).
    With ``scale_partial_batches`` a step that found fewer groups with signal scales its loss by the share it
    found: the loss is summed over the step's quota of groups, not averaged over the groups
    found, so that four groups move the weights about a quarter as far as sixteen (with a token mean,
    a handful of boundary cases would otherwise make a full-size Adam step late in training, when most
    groups agree, and move the decision boundary back and forth). The learning rate warms up linearly
    over ``warmup_steps``, then, when ``decay_steps`` is set, falls linearly to ``min_lr_ratio`` times
    its peak at step ``decay_steps`` and stays there (the schedule counts the steps that trained; a
    step with no group to train on does not move it).
    ``explore_temperature`` multiplies the temperature of a prompt whose last group was answered wrong
    by every sample (1: off): such a group has no spread, so GRPO cannot learn from it, and a confident
    policy keeps answering it wrong; sampled hotter, a right answer appears and carries the gradient
    (the loss is that of the hotter policy for those samples).
    ``top_k`` samples each token from the ``top_k`` likeliest (None: the whole vocabulary). 50 is what
    transformers' ``generate()`` fills in when top-k is left unset, what the demo always sampled with; the loss
    scores the samples under the whole distribution, as trainers that sample with vLLM's top-k do. On the demo's
    vocabulary of 380 tokens it matters at the explore temperature: at 2 the tail of ~330 unlikely tokens would
    carry more mass than the top ones, and the explored samples would mostly break the format instead of trying
    the other decision (sampled from the whole vocabulary, seeds 0 and 1 ran the full 300 steps; with top-k 50 they
    stopped at 225 and 150).
    ``precision`` is that of generation and of the update's matrix products: ``fp32``, ``bf16``
    (autocast; weights, optimiser state and losses stay fp32) or ``auto`` (bf16 where the device
    computes it natively, see :mod:`proofgym.training._precision`).
    """

    prompts_per_step: int = 16
    group_size: int = 8
    learning_rate: float = 3e-4
    warmup_steps: int = 10
    decay_steps: int = 0
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    clip_eps: float = 0.2
    beta: float = 0.05
    temperature: float = 1.0
    explore_temperature: float = 1.0
    top_k: int | None = 50
    max_new_tokens: int = 24
    updates_per_generation: int = 2
    dynamic_sampling: bool = True
    max_sampling_rounds: int = 3
    scale_partial_batches: bool = True
    precision: Precision = "fp32"

    def __post_init__(self) -> None:
        check_precision(self.precision, "CompactGRPOConfig.precision")
        positive = ("prompts_per_step", "group_size", "max_new_tokens", "updates_per_generation",
                    "max_sampling_rounds")
        if self.top_k is not None and (not isinstance(self.top_k, int) or isinstance(self.top_k, bool)
                                       or self.top_k < 1):
            raise ValueError(f"CompactGRPOConfig.top_k must be None or a positive integer, got {self.top_k!r}")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"CompactGRPOConfig.{name} must be a positive integer, got {value!r}")
        if self.group_size < 2:
            raise ValueError(f"CompactGRPOConfig.group_size must be at least 2 (advantages compare samples), "
                             f"got {self.group_size}")
        for name in ("warmup_steps", "decay_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"CompactGRPOConfig.{name} must be an integer >= 0, got {value!r}")
        if self.decay_steps and self.decay_steps <= self.warmup_steps:
            raise ValueError(f"CompactGRPOConfig.decay_steps ({self.decay_steps}) must be 0 or more than warmup_steps "
                             f"({self.warmup_steps})")
        if not (isinstance(self.min_lr_ratio, (int, float)) and 0 <= self.min_lr_ratio <= 1):
            raise ValueError(f"CompactGRPOConfig.min_lr_ratio must be a number in [0, 1], got {self.min_lr_ratio!r}")
        for name in ("learning_rate", "temperature", "explore_temperature"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"CompactGRPOConfig.{name} must be a finite number > 0, got {value!r}")
        for name in ("weight_decay", "max_grad_norm", "clip_eps", "beta"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"CompactGRPOConfig.{name} must be a finite number >= 0, got {value!r}")

    def lr_factor(self, step: int) -> float:
        """The learning rate of update ``step`` (from 0) as a fraction of ``learning_rate``."""
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        if not self.decay_steps:
            return 1.0
        progress = min(1.0, (step - self.warmup_steps) / (self.decay_steps - self.warmup_steps))
        return 1.0 - (1.0 - self.min_lr_ratio) * progress


@dataclass(frozen=True)
class Rollout:
    """One sampled completion: the dataset row it answers, the text, its scored item (reward, outcome,
    breakdown, verdict), its advantage, and ``tokens``, the completion tokens it counts in the loss.

    ``advantage`` is ``None`` when the completion took no part in the update: its group was not
    trained on (no spread, or over the step's quota) or its reward abstained (``None``).
    """

    row: Mapping[str, Any]
    completion: str
    item: Any
    group: int
    advantage: float | None
    tokens: int = 0
    truncated: bool = False


@dataclass
class CompactGRPOStep:
    """What one GRPO step did: its metrics (as logged) and every rollout it sampled."""

    step: int
    metrics: dict[str, Any]
    rollouts: list[Rollout] = field(default_factory=list)


class CompactGRPO:
    """GRPO on a causal LM against a reward function, one :meth:`step` at a time.

    ``rows`` are dataset rows (``prompt``, ``gold``, ``source_facts``, optional ``branch``), drawn
    through a :class:`BranchCurriculum` that favours the branches the policy still gets wrong.
    ``reward_fn`` is a :class:`~proofgym.rewards.RewardFunction`; its scored items give each
    completion's reward, outcome and correctness. With ``beta > 0`` a frozen copy of the model as it
    is now is the KL reference. Seeded through torch's global generator and ``seed``: the same seed
    gives bit-identical steps.
    """

    def __init__(self, model: Any, tokenizer: Any, reward_fn: Any, rows: Sequence[Mapping[str, Any]], *,
                 config: CompactGRPOConfig | None = None, seed: int = 0, curriculum: BranchCurriculum | None = None,
                 ) -> None:
        import torch

        self.model, self.tokenizer, self.reward_fn = model, tokenizer, reward_fn
        self.config = config or CompactGRPOConfig()
        _check_rows(rows)
        self.curriculum = curriculum or BranchCurriculum(rows, seed=seed)
        self.reference = None
        if self.config.beta > 0:
            self.reference = copy.deepcopy(model).eval()
            for parameter in self.reference.parameters():
                parameter.requires_grad_(False)
        self.optimizer = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad], lr=self.config.learning_rate,
            weight_decay=self.config.weight_decay,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self.config.lr_factor)
        self.steps_done = 0
        self.updates_skipped: float = 0  # steps with nothing to learn from, or whose loss or gradient was not finite
        self._flat_share = 0.0  # of the last step's groups: how many had no spread

    def _round_size(self, needed: int, left: int) -> int:
        """How many prompts to draw in the next sampling round: with dynamic sampling, enough to find the
        ``needed`` groups with a spread if the share without one is the last step's (at most ``left``, what is
        left of the step's budget of ``prompts_per_step * max_sampling_rounds``). One generation of 48 prompts
        costs less than three of 16 (0.84 s against 1.0 s on the demo's old model): a decoding step's fixed cost
        is paid once."""
        if not self.config.dynamic_sampling:
            return needed
        return max(1, min(left, math.ceil(needed / max(1.0 - self._flat_share, 1e-9))))

    def step(self) -> CompactGRPOStep:
        """Sample, score, and update once; returns the step's metrics and rollouts."""
        cfg = self.config
        started = time.perf_counter()
        timings = {"generate_s": 0.0, "score_s": 0.0}
        rollouts: list[Rollout] = []
        kept: list[tuple[list[list[int]], list[list[int]], list[float], list[float]]] = []
        groups_seen = zero_spread = rounds = explored = 0
        observed: list[tuple[Mapping[str, Any], int, int]] = []
        budget = cfg.prompts_per_step * (cfg.max_sampling_rounds if cfg.dynamic_sampling else 1)
        drawn = 0
        while drawn < budget and len(kept) < cfg.prompts_per_step and rounds < budget // cfg.prompts_per_step:
            rounds += 1
            rows = self.curriculum.sample(self._round_size(cfg.prompts_per_step - len(kept), budget - drawn))
            drawn += len(rows)
            temperatures = [cfg.temperature * (cfg.explore_temperature if self.curriculum.last_error(row) == 1.0
                                               else 1.0) for row in rows]
            explored += sum(t != cfg.temperature for t in temperatures)
            t0 = time.perf_counter()
            with autocast(cfg.precision, self.model):
                gen = generate(self.model, self.tokenizer, [r["prompt"] for r in rows],
                               num_samples=cfg.group_size, temperature=temperatures,
                               max_new_tokens=cfg.max_new_tokens, top_k=cfg.top_k)
            t1 = time.perf_counter()
            expanded = [row for row in rows for _ in range(cfg.group_size)]
            items = self.reward_fn.score([r["prompt"] for r in expanded], gen.texts, expanded)
            timings["generate_s"] += t1 - t0
            timings["score_s"] += time.perf_counter() - t1
            rewards = [item.reward for item in items]
            advantages = group_advantages(rewards, cfg.group_size)
            prompt_tokens = _unpad(gen.prompt_ids, gen.prompt_mask)
            completion_tokens = _unpad(gen.completion_ids, gen.completion_mask)
            for g in range(len(rows)):
                span = range(g * cfg.group_size, (g + 1) * cfg.group_size)
                spread = any(advantages[i] != 0.0 for i in span)
                groups_seen += 1
                zero_spread += not spread
                observed.append((rows[g], sum(_is_correct(items[i]) for i in span), len(span)))
                train = (spread or not cfg.dynamic_sampling) and len(kept) < cfg.prompts_per_step
                if train:
                    kept.append(([prompt_tokens[i] for i in span], [completion_tokens[i] for i in span],
                                 [advantages[i] if rewards[i] is not None else math.nan for i in span],
                                 [temperatures[g]] * len(span)))
                for i in span:
                    counted = train and rewards[i] is not None
                    rollouts.append(Rollout(row=expanded[i], completion=gen.texts[i], item=items[i],
                                            group=groups_seen - 1, advantage=advantages[i] if counted else None,
                                            tokens=len(completion_tokens[i]), truncated=gen.truncated[i]))
        t2 = time.perf_counter()
        losses = self._update(kept)
        self.updates_skipped += losses["update_skipped"]
        train_s = time.perf_counter() - t2
        self._flat_share = zero_spread / groups_seen
        self.curriculum.update(_branch_results(rollouts, self.curriculum.branch_of))
        self.curriculum.observe(observed)
        self.steps_done += 1
        metrics = {
            **_rollout_metrics(rollouts),
            "zero_spread": zero_spread / groups_seen,
            "groups_trained": len(kept),
            "replay_pool": self.curriculum.replay_pool_size,
            "sampling_rounds": rounds,
            "explored_groups": explored,
            **losses,
            "updates_skipped": self.updates_skipped,
            "lr": self.optimizer.param_groups[0]["lr"],
            **timings,
            "train_s": train_s,
            "step_s": time.perf_counter() - started,
        }
        return CompactGRPOStep(step=self.steps_done, metrics=metrics, rollouts=rollouts)

    def _update(self, kept: list[tuple[list[list[int]], list[list[int]], list[float], list[float]]],
                ) -> dict[str, float]:
        """One policy update on the ``kept`` groups: the mean loss, KL, clip fraction and gradient norm of its
        passes, and ``update_skipped`` (the passes left out). A step with no scored completion (no group kept,
        or every reward abstained) takes no optimizer step at all: Adam's momentum would move the weights on a
        zero gradient. A pass whose loss or gradient is not finite is not applied either; its figures count 0."""
        import torch

        cfg = self.config
        nothing = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0, "grad_norm": 0.0,
                   "update_skipped": float(cfg.updates_per_generation)}
        if not any(not math.isnan(a) for group in kept for a in group[2]):
            return nothing
        prompts = [p for group in kept for p in group[0]]
        completions = [c for group in kept for c in group[1]]
        advantages = [a for group in kept for a in group[2]]
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        batch = _batch(prompts, completions, pad, next(self.model.parameters()).device)
        temperature = torch.tensor([t for group in kept for t in group[3]], device=batch["mask"].device)
        # A None reward (nan here) abstains: its tokens leave the loss entirely.
        scored = torch.tensor([not math.isnan(a) for a in advantages], device=batch["mask"].device)
        mask = batch["mask"] * scored.unsqueeze(-1).to(batch["mask"].dtype)
        adv = torch.tensor([0.0 if math.isnan(a) else a for a in advantages], device=mask.device)
        ref_logp = None
        if self.reference is not None:
            with torch.no_grad(), autocast(cfg.precision, self.reference):
                ref_logp = completion_logprobs(self.reference, batch, temperature)
        scale = min(1.0, len(kept) / cfg.prompts_per_step) if cfg.scale_partial_batches else 1.0
        self.model.train()
        totals = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0, "grad_norm": 0.0, "update_skipped": 0.0}
        old_logp = None
        for _ in range(cfg.updates_per_generation):
            with autocast(cfg.precision, self.model):
                logp = completion_logprobs(self.model, batch, temperature)
            if old_logp is None:  # the weights have not moved yet: this is the policy that sampled
                old_logp = logp.detach()
            terms = clipped_loss(logp, old_logp, adv, mask, clip_eps=cfg.clip_eps, ref_logp=ref_logp,
                                 kl_coef=cfg.beta)
            self.optimizer.zero_grad(set_to_none=True)
            (terms.loss * scale).backward()
            params = [p for p in self.model.parameters() if p.grad is not None]
            norm = torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm if cfg.max_grad_norm > 0 else math.inf)
            if not (math.isfinite(float(terms.loss.detach())) and math.isfinite(float(norm))):
                self.optimizer.zero_grad(set_to_none=True)
                totals["update_skipped"] += 1
                continue
            self.optimizer.step()
            totals["loss"] += float(terms.loss.detach())
            totals["kl"] += float(terms.kl)
            totals["clip_fraction"] += float(terms.clip_fraction)
            totals["grad_norm"] += float(norm)
        self.scheduler.step()
        applied = cfg.updates_per_generation - totals["update_skipped"]
        return {k: v if k == "update_skipped" else (v / applied if applied else 0.0) for k, v in totals.items()}


def shared_prompt_logprobs(model: Any, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]], *,
                           pad_id: int, temperature: float = 1.0, entropy: bool = False) -> Any:
    """``[B, T]`` log-probabilities of each completion's tokens after its prompt (token lists; ``T`` the longest
    completion, shorter ones padded with ``pad_id``, whose values are then meaningless), under ``model`` with its
    logits divided by ``temperature``; with ``entropy``, also the ``[B, T]`` entropies of those next-token
    distributions (detached). Each distinct prompt runs once for all its completions (see
    :func:`completion_logprobs`); the gradient flows as through one pass per row."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"need one prompt per completion and at least one, got {len(prompts)} and "
                         f"{len(completions)}")
    if any(not p for p in prompts):
        raise ValueError("every prompt needs at least one token")
    device = next(model.parameters()).device
    batch = _batch([list(p) for p in prompts], [list(c) for c in completions], pad_id, device)
    return completion_logprobs(model, batch, temperature, entropy=entropy)


def completion_logprobs(model: Any, batch: Mapping[str, Any], temperature: Any = 1.0, *,
                        entropy: bool = False) -> Any:
    """``[B, T]`` log-probabilities of the completion tokens of ``batch`` (see :func:`_batch`) under ``model``
    sampled at ``temperature`` (the logits are divided by it, so the loss is that of the sampling policy): a
    number, or a ``[B]`` tensor with one temperature per row.

    Rows that answer the same prompt share its forward pass: each distinct prompt runs once, and its keys and
    values are handed to every completion of it (a causal model's prompt positions never see the completion, so
    this is the same computation as one pass per row, with the gradient of the shared prompt summed over its
    rows). A GRPO batch of 16 prompts x 8 samples so runs 16 prompts instead of 128.
    """
    import torch

    prefix, prefix_attention = batch["prefix_ids"], batch["prefix_attention"]
    pair_prefix, pair_completion, row_pair = batch["pair_prefix"], batch["pair_completion_ids"], batch["row_pair"]
    prefix_positions = (prefix_attention.cumsum(-1) - 1).clamp(min=0)
    head = model(input_ids=prefix, attention_mask=prefix_attention, position_ids=prefix_positions,
                 use_cache=True, logits_to_keep=1)
    first = head.logits[pair_prefix, -1:, :]  # predicts each distinct row's first completion token
    if pair_completion.shape[1] > 1:
        cache = head.cache
        cache.batch_select_indices(pair_prefix)  # every row gets its prompt's keys and values (autograd-tracked)
        inputs = pair_completion[:, :-1]
        # Right padding of a completion comes after its tokens, which a causal model never lets them see.
        attention = torch.cat([prefix_attention[pair_prefix], torch.ones_like(inputs)], dim=-1)
        start = prefix_attention.sum(-1)[pair_prefix].unsqueeze(-1)
        positions = start + torch.arange(inputs.shape[1], device=inputs.device).unsqueeze(0)
        rest = model(input_ids=inputs, attention_mask=attention, position_ids=positions, cache=cache,
                     use_cache=False).logits
        logits = torch.cat([first, rest], dim=1)
    else:
        logits = first
    # Every row takes its distinct row's logits (a repeat's gradient adds up in them, as over written-out rows).
    return selected_logprobs(logits[row_pair], batch["completion_ids"], temperature, entropy=entropy)


def _batch(prompts: list[list[int]], completions: list[list[int]], pad: int, device: Any) -> dict[str, Any]:
    """The model's input for the rows ``(prompts[i], completions[i])``, each distinct prompt and each distinct
    (prompt, completion) pair once: the distinct prompts left-padded with ``pad`` (``prefix_ids`` /
    ``prefix_attention``), the distinct pairs' completions right-padded (``pair_completion_ids``) with their
    prompt's index (``pair_prefix``), each row's pair (``row_pair``), and the rows' own completions right-padded
    (``completion_ids``, ``mask``). A GRPO group's samples often repeat one another: late in the demo's training 8
    samples hold two or three distinct answers."""
    import torch

    distinct: dict[tuple[int, ...], int] = {}
    pairs: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    row_pair = [pairs.setdefault((tuple(p), tuple(c)), len(pairs)) for p, c in zip(prompts, completions)]
    pair_prefix = [distinct.setdefault(p, len(distinct)) for p, _ in pairs]
    p_width = max(len(p) for p in distinct)
    prefix_ids = [[pad] * (p_width - len(p)) + list(p) for p in distinct]
    prefix_attention = [[0] * (p_width - len(p)) + [1] * len(p) for p in distinct]
    pair_completions, pair_mask = padded_completions([c for _, c in pairs], pad, device)

    def as_tensor(rows: list[Any]) -> Any:
        return torch.tensor(rows, dtype=torch.long, device=device)

    rows = as_tensor(row_pair)
    return {"prefix_ids": as_tensor(prefix_ids), "prefix_attention": as_tensor(prefix_attention),
            "pair_prefix": as_tensor(pair_prefix), "pair_completion_ids": pair_completions, "row_pair": rows,
            "completion_ids": pair_completions[rows], "mask": pair_mask.long()[rows]}


def padded_completions(completions: Sequence[Sequence[int]], pad_id: int, device: Any = None) -> tuple[Any, Any]:
    """``[B, T]`` completion ids right-padded with ``pad_id`` (``T`` the longest, at least 1) and their boolean
    mask: the layout :func:`shared_prompt_logprobs` returns log-probabilities in."""
    import torch

    width = max(1, max((len(c) for c in completions), default=0))
    ids = torch.full((len(completions), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(completions), width), dtype=torch.bool)
    for row, completion in enumerate(completions):
        ids[row, :len(completion)] = torch.tensor(list(completion), dtype=torch.long)
        mask[row, :len(completion)] = True
    return ids.to(device), mask.to(device)


def _unpad(ids: Any, mask: Any) -> list[list[int]]:
    return [[t for t, m in zip(row, row_mask) if m] for row, row_mask in zip(ids.tolist(), mask.tolist())]


def _is_correct(item: Any) -> bool:
    return bool(item.components.get("correct", 0.0) == 1.0)


def _branch_results(rollouts: Sequence[Rollout], branch_of: Any) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = {}
    for r in rollouts:
        entry = counts.setdefault(branch_of(r.row), [0, 0])
        entry[0] += _is_correct(r.item)
        entry[1] += 1
    return {b: (c, n) for b, (c, n) in counts.items()}


def _rollout_metrics(rollouts: Sequence[Rollout]) -> dict[str, float]:
    n = len(rollouts)
    rewards = [r.item.reward for r in rollouts if r.item.reward is not None]
    return {
        "reward": sum(rewards) / len(rewards) if rewards else math.nan,
        "certified": sum(r.item.components.get("certified", 0.0) == 1.0 for r in rollouts) / n,
        "correct": sum(_is_correct(r.item) for r in rollouts) / n,
        "format_ok": sum(r.item.outcome != "format_error" for r in rollouts) / n,
        "invalid": sum(r.item.outcome == "invalid" for r in rollouts) / n,
        "completion_tokens": sum(r.tokens for r in rollouts) / n,
        "samples": n,
    }


def _check_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        raise ValueError("GRPO needs at least one training row")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or "prompt" not in row:
            raise ValueError(f"training row {i} must be a mapping with a 'prompt' key, got {row!r:.120}")

