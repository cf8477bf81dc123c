"""The policy-gradient core: the maths every proofgym training loop shares.

- :func:`group_advantages`: rewards normalised within their group (GRPO), ``None`` rewards left out.
- :func:`clipped_loss`: the clipped importance-ratio objective, with one ratio per token (GRPO, DAPO's token mean)
  or one per sequence (GSPO: the exp of the sequence's mean log-ratio), and an optional KL penalty.
- :func:`kl_k3`: the k3 estimate of KL(policy || reference) per token.
- :func:`selected_logprobs`: the log-probabilities of given tokens from a model's logits.
- :func:`microbatches`: a batch cut into length-bucketed microbatches whose losses, each divided by the whole
  batch's count (``clipped_loss(..., total=...)``), add up to the whole batch's loss.

Used by the compact single-turn loop (:class:`~proofgym.training.CompactGRPO`) and the multi-step task-app loop
(:class:`~proofgym.training.rl.RLTrainer`). Pure functions on tensors and lists: no model, no optimiser. torch is
imported inside the functions that need it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, TypeVar

T = TypeVar("T")

#: A group whose rewards have a (population) standard deviation below this carries no signal (the compact loop's).
MIN_STD = 1e-6

RatioLevel = Literal["token", "sequence"]


def group_advantages(rewards: Sequence[float | None], group_size: int | None = None, *, min_std: float = MIN_STD,
                     std_offset: float = 0.0) -> list[float]:
    """Group-normalised advantages: ``(r - mean) / (std + std_offset)`` within each group.

    Groups are consecutive slices of ``group_size`` rewards (``None``: all of ``rewards`` are one group). The mean
    and the population standard deviation of a group are taken over its non-``None`` rewards only; a ``None``
    reward (an abstention) gets advantage 0. A group with fewer than two scored rewards, or whose standard
    deviation is below ``min_std``, has no spread and gets 0 everywhere: it carries no signal about which
    completion was better. The compact loop uses the defaults (``min_std`` 1e-6, no offset); the multi-step loop
    ``min_std=1e-8, std_offset=1e-6``.
    """
    if group_size is None:
        group_size = max(len(rewards), 1)
    if not isinstance(group_size, int) or isinstance(group_size, bool) or group_size < 1:
        raise ValueError(f"group_size must be a positive integer, got {group_size!r}")
    if len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    advantages: list[float] = []
    for start in range(0, len(rewards), group_size):
        group = rewards[start:start + group_size]
        scored = [float(r) for r in group if r is not None]
        if any(not math.isfinite(r) for r in scored):
            raise ValueError(f"rewards must be finite or None, got {list(group)}")
        mean = sum(scored) / len(scored) if scored else 0.0
        std = math.sqrt(sum((r - mean) ** 2 for r in scored) / len(scored)) if scored else 0.0
        if len(scored) < 2 or std < min_std:
            advantages.extend([0.0] * len(group))
        else:
            advantages.extend(0.0 if r is None else (float(r) - mean) / (std + std_offset) for r in group)
    return advantages


def kl_k3(logp: Any, ref_logp: Any) -> Any:
    """Per-token k3 estimate of KL(policy || reference), ``exp(d) - d - 1`` with ``d = ref_logp - logp``: never
    below 0, as KL is not. Computed with ``expm1`` (exact near ``d = 0``, where ``exp(d) - 1`` loses every digit)
    and clamped at 0, since ``expm1(d) - d`` can still round to a value of the order of ``-1e-10`` on some
    processors when the policy equals its reference; the clamp costs no gradient (k3's own is ~0 there).
    """
    import torch

    delta = ref_logp - logp
    return torch.clamp(torch.expm1(delta) - delta, min=0.0)


class LossTerms(NamedTuple):
    """The loss (a scalar tensor to back-propagate) and, detached (0-d tensors), the mean per-token KL to the
    reference (0 without one) and the share of tokens (token ratios) or sequences (sequence ratios) whose ratio
    was clipped."""

    loss: Any
    kl: Any
    clip_fraction: Any


def clipped_loss(logp: Any, old_logp: Any, advantages: Any, mask: Any, *, clip_eps: float,
                 ratio_level: RatioLevel = "token", ref_logp: Any = None, kl_coef: float = 0.0,
                 total: float | None = None) -> LossTerms:
    """The clipped policy-gradient objective ``-min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)``.

    ``logp`` and ``old_logp`` are ``[B, T]`` log-probabilities of the sampled tokens under the policy being
    trained and the policy that sampled them, ``advantages`` is ``[B]``, ``mask`` ``[B, T]`` is 1 (or True) on the
    tokens that count; values outside the mask are never read.

    - ``ratio_level="token"`` (GRPO, DAPO's token mean): one ratio per token, ``exp(logp - old_logp)``; the loss
      is the sum over the masked tokens divided by ``total`` (default: their count).
    - ``ratio_level="sequence"`` (GSPO): one ratio per row, the exp of its mean token log-ratio; the loss is the
      sum over rows divided by ``total`` (default: the mean over rows).

    With ``ref_logp`` (the reference's log-probabilities of the same tokens) the mean k3 KL is measured, and with
    ``kl_coef > 0`` each masked token adds ``kl_coef`` times its k3 (in a sequence's loss: the mean of its tokens').
    ``total`` lets microbatches add up to a batch: give each the whole batch's token (or row) count.
    """
    import torch

    if clip_eps < 0 or kl_coef < 0:
        raise ValueError(f"clip_eps and kl_coef must be >= 0, got {clip_eps} and {kl_coef}")
    if kl_coef > 0 and ref_logp is None:
        raise ValueError("kl_coef > 0 needs the reference log-probabilities")
    if ratio_level not in ("token", "sequence"):
        raise ValueError(f"ratio_level must be 'token' or 'sequence', got {ratio_level!r}")
    maskf = mask.to(logp.dtype)
    tokens = maskf.sum().clamp(min=1)
    adv = advantages.to(logp.dtype).unsqueeze(-1)
    kl = torch.zeros_like(logp)
    kl_mean = torch.zeros((), dtype=logp.dtype, device=logp.device)
    if ref_logp is not None:
        k3 = kl_k3(logp * maskf, ref_logp * maskf)
        kl_mean = ((k3 * maskf).sum() / tokens).detach()
        if kl_coef > 0:
            kl = kl_coef * k3 * maskf
    delta = (logp - old_logp) * maskf
    if ratio_level == "sequence":
        lengths = maskf.sum(-1, keepdim=True).clamp(min=1)
        ratio = torch.exp(delta.sum(-1, keepdim=True) / lengths)
        clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
        per_row = -torch.min(ratio * adv, clipped * adv).squeeze(-1) + kl.sum(-1) / maskf.sum(-1).clamp(min=1)
        loss = per_row.sum() / total if total else per_row.mean()
        clip_fraction = ((ratio - clipped).abs() > 0).to(logp.dtype).mean().detach()
        return LossTerms(loss, kl_mean, clip_fraction)
    ratio = torch.exp(delta)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    per_token = -torch.min(ratio * adv, clipped * adv) * maskf + kl
    loss = per_token.sum() / (total if total else tokens)
    clip_fraction = ((((ratio - clipped).abs() > 0).to(logp.dtype) * maskf).sum() / tokens).detach()
    return LossTerms(loss, kl_mean, clip_fraction)


def selected_logprobs(logits: Any, targets: Any, temperature: Any = None, *, entropy: bool = False) -> Any:
    """``[B, T]`` log-probabilities of ``targets`` (``[B, T]`` token ids) under ``logits`` (``[B, T, V]``), taken
    in fp32. With ``temperature`` (a number, or a ``[B]`` tensor with one per row) the logits are divided by it
    first, so the log-probabilities are those of the policy that sampled at that temperature. With ``entropy``,
    also the ``[B, T]`` entropies of those distributions (detached): ``(logprobs, entropies)``."""
    import torch

    logits = logits.float()
    if temperature is not None:
        if isinstance(temperature, torch.Tensor):
            temperature = temperature.to(logits.dtype).reshape(-1, 1, 1)
        logits = logits / temperature
    logprobs = torch.log_softmax(logits, dim=-1)
    chosen = logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    if not entropy:
        return chosen
    with torch.no_grad():
        return chosen, -(logprobs.exp() * logprobs).sum(-1)


#: Padded tokens (rows x width) per microbatch, by default.
MICROBATCH_TOKENS = 8192


def microbatches(items: Sequence[T], length: Callable[[T], int], *, parts: int = 1,
                 tokens: int | None = None) -> list[list[T]]:
    """``items`` split into at least ``parts`` microbatches of similar lengths (sorted by ``length``, then cut where
    a chunk's padded size ``rows x longest`` would pass ``tokens``, default :data:`MICROBATCH_TOKENS`), so padding
    costs little."""
    tokens = tokens or MICROBATCH_TOKENS
    ordered = sorted(items, key=length)
    share = -(-len(ordered) // max(parts, 1)) if ordered else 1
    chunks: list[list[T]] = []
    for item in ordered:
        width = length(item)
        if not chunks or len(chunks[-1]) >= share or (len(chunks[-1]) + 1) * width > tokens:
            chunks.append([])
        chunks[-1].append(item)
    return chunks
