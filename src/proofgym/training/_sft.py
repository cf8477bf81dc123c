"""A short supervised warm-up: teach the answer format, with the loss on the completion tokens only."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from proofgym.training._generate import encode_prompts
from proofgym.training._precision import Precision, autocast, check_precision


@dataclass(frozen=True)
class SFTConfig:
    """``steps`` AdamW steps on batches of ``batch_size`` examples drawn with replacement, the forward pass at
    ``precision`` (see :class:`~proofgym.training.CompactGRPOConfig`)."""

    steps: int = 150
    batch_size: int = 64
    learning_rate: float = 1e-3
    warmup_steps: int = 10
    max_grad_norm: float = 1.0
    precision: Precision = "fp32"

    def __post_init__(self) -> None:
        check_precision(self.precision, "SFTConfig.precision")
        for name in ("steps", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"SFTConfig.{name} must be a positive integer, got {value!r}")
        if not isinstance(self.warmup_steps, int) or self.warmup_steps < 0:
            raise ValueError(f"SFTConfig.warmup_steps must be an integer >= 0, got {self.warmup_steps!r}")
        for name in ("learning_rate", "max_grad_norm"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"SFTConfig.{name} must be a finite number > 0, got {value!r}")


def sft_warmup(
    model: Any,
    tokenizer: Any,
    examples: Callable[[random.Random], tuple[Any, str]] | Sequence[tuple[Any, str]],
    *,
    config: SFTConfig | None = None,
    seed: int = 0,
    on_step: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Fine-tune ``model`` on ``(prompt, completion)`` pairs; returns the loss of every step.

    ``examples`` is a list of pairs (drawn uniformly) or a function ``rng -> (prompt, completion)``
    that makes a fresh one per draw. Each completion is followed by the end-of-sequence token; the
    cross-entropy counts the completion and that token only, never the prompt or the padding.
    ``on_step(step, loss)`` is called after every step.
    """
    import torch

    config = config or SFTConfig()
    if not callable(examples):
        pool = list(examples)
        if not pool:
            raise ValueError("sft_warmup needs at least one example")
        examples = lambda rng: rng.choice(pool)  # noqa: E731
    rng = random.Random(seed)
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.learning_rate)
    warmup = config.warmup_steps
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup) if warmup else 1.0)
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("the tokenizer has no end-of-sequence token to teach")
    model.train()
    losses = []
    for step in range(1, config.steps + 1):
        pairs = [examples(rng) for _ in range(config.batch_size)]
        batch = _batch(tokenizer, pairs, eos, device)
        with autocast(config.precision, model):
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                           position_ids=batch["position_ids"]).logits[:, :-1, :].float()
        targets = batch["labels"][:, 1:]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                                 ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
        if on_step is not None:
            on_step(step, losses[-1])
    return losses


def _batch(tokenizer: Any, pairs: list[tuple[Any, str]], eos: int, device: Any) -> dict[str, Any]:
    import torch

    prompt_ids, prompt_mask = encode_prompts(tokenizer, [p for p, _ in pairs])
    completions = [tokenizer(c, add_special_tokens=False)["input_ids"] + [eos] for _, c in pairs]
    width = max(len(c) for c in completions)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    completion_ids = torch.tensor([c + [pad] * (width - len(c)) for c in completions], dtype=torch.long)
    completion_mask = torch.tensor([[1] * len(c) + [0] * (width - len(c)) for c in completions], dtype=torch.long)
    input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
    attention = torch.cat([prompt_mask, completion_mask], dim=1)
    labels = torch.cat([torch.full_like(prompt_ids, -100),
                        completion_ids.masked_fill(completion_mask == 0, -100)], dim=1)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    return {"input_ids": input_ids.to(device), "attention_mask": attention.to(device),
            "position_ids": positions.to(device), "labels": labels.to(device)}

