"""Batched generation for training and evaluation: prompts in, completion tokens, masks and texts out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast


@dataclass
class Generation:
    """Completions for a batch of prompts, row ``i`` answering ``prompts[i // num_samples]``.

    ``prompt_ids`` / ``prompt_mask`` are left-padded; ``completion_ids`` right-padded;
    ``completion_mask`` is 1 on every generated token up to and including the first end-of-sequence
    token (a completion cut at ``max_new_tokens`` keeps all its tokens). ``texts`` are the decoded
    completions without special tokens; ``truncated[i]`` is True when completion ``i`` never ended.
    """

    prompt_ids: Any
    prompt_mask: Any
    completion_ids: Any
    completion_mask: Any
    texts: list[str]
    truncated: list[bool]


def prompt_text(tokenizer: Any, prompt: Any) -> str:
    """A prompt as the text the model continues: a string as is, chat messages through the tokenizer's
    chat template (with the generation prompt), or their contents one per line when it has none."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and all(isinstance(m, Mapping) for m in prompt):
        messages = [dict(m) for m in prompt]
        if getattr(tokenizer, "chat_template", None):
            return cast(str, tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
        return "\n".join(str(m.get("content", "")) for m in messages) + "\n"
    raise TypeError(f"a prompt must be a string or a list of chat messages, got {type(prompt).__name__}")


def encode_prompts(tokenizer: Any, prompts: Sequence[Any], *, device: Any = None) -> tuple[Any, Any]:
    """``(input_ids, attention_mask)`` of ``prompts``, left-padded whatever the tokenizer's default side."""
    texts = [prompt_text(tokenizer, p) for p in prompts]
    # A chat template already holds the model's special tokens; a plain prompt gets the tokenizer's own.
    chat = [not isinstance(p, str) for p in prompts]
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        if any(chat) and not all(chat):
            raise ValueError("a batch must be all plain-text prompts or all chat prompts")
        encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=not any(chat))
    finally:
        tokenizer.padding_side = side
    ids, mask = encoded["input_ids"], encoded["attention_mask"]
    if device is not None:
        ids, mask = ids.to(device), mask.to(device)
    return ids, mask


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    num_samples: int = 1,
    temperature: float | Sequence[float] = 1.0,
    max_new_tokens: int = 32,
    greedy: bool = False,
    top_k: int | None = None,
) -> Generation:
    """Sample ``num_samples`` completions per prompt (or the greedy one, ``greedy=True``).

    Ancestral sampling at ``temperature``, drawn from torch's global random generator, so a seeded
    run is reproducible: from the whole vocabulary, or with ``top_k`` from the ``top_k`` likeliest
    tokens of each step (no top-p). ``temperature`` may also be one value per prompt. The model is
    left in the mode it was in.
    """
    import torch

    if num_samples < 1 or max_new_tokens < 1:
        raise ValueError(f"num_samples and max_new_tokens must be >= 1, got {num_samples} and {max_new_tokens}")
    per_prompt: list[float] | None = None
    if not isinstance(temperature, (int, float)):
        per_prompt = [float(t) for t in temperature]
        if len(per_prompt) != len(prompts):
            raise ValueError(f"got {len(per_prompt)} temperatures for {len(prompts)} prompts")
        if len(set(per_prompt)) == 1:
            temperature, per_prompt = per_prompt[0], None
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
        raise ValueError(f"top_k must be None or a positive integer, got {top_k!r}")
    if not greedy and not all(t > 0 for t in (per_prompt or [cast(float, temperature)])):
        given = temperature if per_prompt is None else per_prompt
        raise ValueError(f"temperature must be > 0 when sampling, got {given}")
    device = next(model.parameters()).device
    ids, mask = encode_prompts(tokenizer, prompts, device=device)
    eos_ids = _eos_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
    temperatures = None
    if not greedy:
        values = per_prompt if per_prompt is not None else [float(cast(float, temperature))] * len(prompts)
        temperatures = torch.tensor(values, device=device).repeat_interleave(num_samples).unsqueeze(-1)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            completion = _decode(model, ids, mask, num_samples=num_samples, temperatures=temperatures,
                                 max_new_tokens=max_new_tokens, eos_ids=eos_ids, pad_id=pad_id, top_k=top_k)
    finally:
        model.train(was_training)
    if num_samples > 1:
        ids, mask = ids.repeat_interleave(num_samples, 0), mask.repeat_interleave(num_samples, 0)
    is_eos = torch.isin(completion, torch.tensor(eos_ids, device=completion.device))
    # 1 up to and including the first end of sequence: cumsum counts the EOS tokens seen before t.
    seen_before = is_eos.long().cumsum(-1) - is_eos.long()
    completion_mask = (seen_before == 0).long()
    truncated = (~is_eos.any(-1)).tolist()
    texts = tokenizer.batch_decode(completion * completion_mask + pad_id * (1 - completion_mask),
                                   skip_special_tokens=True)
    return Generation(ids, mask, completion, completion_mask, texts, truncated)


def sample_token_ids(
    model: Any,
    prompt_ids: Sequence[Sequence[int]],
    *,
    num_samples: int = 1,
    temperature: float = 1.0,
    max_new_tokens: int = 32,
    eos_ids: Sequence[int],
    pad_id: int,
    top_k: int | None = None,
) -> list[list[int]]:
    """``num_samples`` sampled completions of each tokenized prompt, as token lists (row ``i`` answers
    ``prompt_ids[i // num_samples]``), each up to and including its first end-of-sequence token.

    The decoding loop of :func:`generate` (each prompt's keys and values computed once for its samples, no
    per-step processors), at ``temperature`` from the whole vocabulary or the ``top_k`` likeliest tokens, for
    callers that hold token ids (TRL's trainer). Runs under ``torch.no_grad()``; the model's mode is kept.
    """
    import torch

    if num_samples < 1 or max_new_tokens < 1:
        raise ValueError(f"num_samples and max_new_tokens must be >= 1, got {num_samples} and {max_new_tokens}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if not prompt_ids or any(len(ids) == 0 for ids in prompt_ids):
        raise ValueError("every prompt needs at least one token")
    if not eos_ids:
        raise ValueError("eos_ids must name at least one end-of-sequence token")
    device = next(model.parameters()).device
    width = max(len(ids) for ids in prompt_ids)
    ids = torch.full((len(prompt_ids), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((len(prompt_ids), width), dtype=torch.long, device=device)
    for row, tokens in enumerate(prompt_ids):
        ids[row, width - len(tokens):] = torch.tensor(list(tokens), dtype=torch.long, device=device)
        mask[row, width - len(tokens):] = 1
    temperatures = torch.full((len(prompt_ids) * num_samples, 1), float(temperature), device=device)
    with torch.no_grad():
        completion = _decode(model, ids, mask, num_samples=num_samples, temperatures=temperatures,
                             max_new_tokens=max_new_tokens, eos_ids=list(eos_ids), pad_id=pad_id, top_k=top_k)
    ends = set(int(e) for e in eos_ids)
    completions = []
    for tokens in completion.tolist():
        cut = next((t for t, token in enumerate(tokens) if token in ends), None)
        completions.append(tokens if cut is None else tokens[:cut + 1])
    return completions


def _decode(model: Any, ids: Any, mask: Any, *, num_samples: int, temperatures: Any, max_new_tokens: int,
            eos_ids: list[int], pad_id: int, top_k: int | None = None) -> Any:
    """``[B * num_samples, T]`` new tokens after the left-padded prompts ``ids`` / ``mask``: ancestral samples at
    ``temperatures`` (a ``[B * num_samples, 1]`` tensor; with ``top_k``, from each step's ``top_k`` likeliest
    tokens), or greedy when it is None; pad after a row's end of
    sequence; ``T`` ends at ``max_new_tokens`` or when every row has ended.

    Each prompt runs once and its keys and values are handed to its ``num_samples`` rows (``generate()`` in
    transformers would run every row's copy of the prompt); then one token per step for every row still running,
    with the cache, as transformers' own loop does, without its per-step processors and checks. Once half the rows
    of the batch have ended, the batch (cache included) keeps only the running ones: a few samples that ramble on to
    ``max_new_tokens`` no longer cost the whole batch's compute for their extra tokens.
    """
    import torch

    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    head = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1)
    if temperatures is not None and num_samples > 1:
        return _decode_shared(model, head, mask, num_samples=num_samples, temperatures=temperatures,
                              max_new_tokens=max_new_tokens, eos_ids=eos_ids, pad_id=pad_id, top_k=top_k)
    cache = head.cache
    logits = head.logits[:, -1, :]
    attention = mask
    if num_samples > 1:
        cache.batch_repeat_interleave(num_samples)
        logits = logits.repeat_interleave(num_samples, 0)
        attention = attention.repeat_interleave(num_samples, 0)
    rows = torch.arange(logits.shape[0], device=ids.device)  # each running row's place in the output
    out = torch.full((logits.shape[0], max_new_tokens), pad_id, dtype=torch.long, device=ids.device)
    position = attention.sum(-1, keepdim=True)
    eos = torch.tensor(eos_ids, device=ids.device)
    ended = torch.zeros(logits.shape[0], dtype=torch.bool, device=ids.device)
    width = 0
    for t in range(max_new_tokens):
        if temperatures is None:
            chosen = logits.argmax(-1)
        else:
            chosen = _draw(logits.float() / temperatures, top_k)
        chosen = torch.where(ended, torch.full_like(chosen, pad_id), chosen)
        out[rows, t] = chosen
        width = t + 1
        ended = ended | torch.isin(chosen, eos)
        if t == max_new_tokens - 1 or bool(ended.all()):
            break
        if 2 * int(ended.sum()) >= len(rows):
            running = torch.nonzero(~ended).squeeze(-1)
            cache.batch_select_indices(running)
            rows, chosen, attention, position = rows[running], chosen[running], attention[running], position[running]
            ended = ended[running]
            if temperatures is not None:
                temperatures = temperatures[running]
        attention = torch.cat([attention, attention.new_ones((attention.shape[0], 1))], dim=-1)
        step = model(input_ids=chosen.unsqueeze(-1), attention_mask=attention, position_ids=position, cache=cache,
                     use_cache=True)
        cache, logits, position = step.cache, step.logits[:, -1, :], position + 1
    return out[:, :width]


def _decode_shared(model: Any, head: Any, mask: Any, *, num_samples: int, temperatures: Any, max_new_tokens: int,
                   eos_ids: list[int], pad_id: int, top_k: int | None) -> Any:
    """:func:`_decode`'s sampling of ``num_samples`` rows per prompt, each distinct text run once.

    The rows of one prompt that have drawn the same tokens so far hold the same keys, values and next-token
    distribution: the model runs once per distinct prefix (a *node*) and every row draws its own next token from
    its node's distribution, so each row is still an independent ancestral sample. A policy that restates the
    prompt's facts before it decides has one or two distinct prefixes per prompt for most of the answer, not
    ``num_samples``: the decoding steps run on a fraction of the rows. ``head`` is the prompts' forward pass (one
    row per prompt); ``temperatures`` one per row, the same for the rows of a prompt.
    """
    import torch

    cache, logits = head.cache, head.logits[:, -1, :]
    prompts = logits.shape[0]
    vocab = logits.shape[-1]
    node_temperature = temperatures.reshape(prompts, num_samples, 1)[:, 0]
    attention, position = mask, mask.sum(-1, keepdim=True)
    row_node = torch.arange(prompts, device=mask.device).repeat_interleave(num_samples)  # each running row's node
    rows = torch.arange(prompts * num_samples, device=mask.device)  # each running row's place in the output
    out = torch.full((prompts * num_samples, max_new_tokens), pad_id, dtype=torch.long, device=mask.device)
    eos = torch.tensor(eos_ids, device=mask.device)
    width = 0
    for t in range(max_new_tokens):
        chosen = _draw(logits.float() / node_temperature, top_k, row_node)
        out[rows, t] = chosen
        width = t + 1
        running = ~torch.isin(chosen, eos)
        if t == max_new_tokens - 1 or not bool(running.any()):
            break
        rows, chosen, row_node = rows[running], chosen[running], row_node[running]
        # The next nodes: each distinct (node, token) drawn by a running row.
        drawn, row_node = torch.unique(row_node * vocab + chosen, return_inverse=True)
        parent, token = drawn // vocab, drawn % vocab
        unchanged = torch.arange(parent.shape[0], device=parent.device)
        if parent.shape[0] != logits.shape[0] or not bool((parent == unchanged).all()):
            cache.batch_select_indices(parent)
            attention, position, node_temperature = attention[parent], position[parent], node_temperature[parent]
        attention = torch.cat([attention, attention.new_ones((attention.shape[0], 1))], dim=-1)
        step = model(input_ids=token.unsqueeze(-1), attention_mask=attention, position_ids=position, cache=cache,
                     use_cache=True)
        cache, logits, position = step.cache, step.logits[:, -1, :], position + 1
    return out[:, :width]


def _draw(scores: Any, top_k: int | None, rows: Any = None) -> Any:
    """One token id per row, drawn from ``softmax(scores)`` (``[N, V]``; with ``top_k``, from the ``top_k``
    likeliest tokens only), ``rows`` (``[R]``, default one draw per row of ``scores``) naming the row of ``scores``
    each draw uses. Each draw is ``argmax(p / e)`` over its distribution ``p`` with ``e`` independent Exp(1)
    noise (the exponential race, equivalent to the Gumbel-max trick): an exact sample, at a fraction of the cost
    of ``torch.multinomial`` on CPU (which took 14 % of a demo step), and from torch's global generator."""
    import torch

    indices = None
    if top_k is not None and top_k < scores.shape[-1]:
        scores, indices = torch.topk(scores, top_k)
    probs = torch.softmax(scores, dim=-1)
    if rows is not None:
        probs = probs[rows]
        indices = indices[rows] if indices is not None else None
    # noise of exactly 0 would make 0 / 0 (a token of probability 0) or a certain pick: kept above it
    noise = torch.empty_like(probs).exponential_(1.0).clamp_(min=torch.finfo(probs.dtype).tiny)
    picked = (probs / noise).argmax(-1)
    return picked if indices is None else indices.gather(-1, picked.unsqueeze(-1)).squeeze(-1)


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    found = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if found is None:
        found = tokenizer.eos_token_id
    ids = [found] if isinstance(found, int) else list(found or [])
    if not ids:
        raise ValueError("the model and tokenizer define no end-of-sequence token")
    return ids
