"""A policy backed by a local Hugging Face causal language model (transformers), for offline use and tests."""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, cast

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from proofgym.config import OFFLINE_MODELS, HubModelUnavailable, hub_model_options
from proofgym.policies._protocol import PolicyReply, PolicyRequest
from proofgym.policies._text_calls import read_text_action, with_tool_instructions
from proofgym.traces import LMCallEvent

# generate() options the policy sets itself from its own arguments.
_OWN_OPTIONS = frozenset({"input_ids", "attention_mask", "max_new_tokens", "do_sample", "temperature", "top_p"})


@dataclass(frozen=True)
class _Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    seed: int


class _ContextTooLong(ValueError):
    pass


def load_pretrained(name: str, *, tokenizer: bool = False) -> Any:
    """The causal LM at ``name`` (``tokenizer``: its tokenizer), a hub model read from the local cache first
    (:func:`~proofgym.config.hub_model_options`). One that cannot be loaded is a ``ValueError``, one line naming
    it (and, for a hub model that cannot be had, what runs without a download)."""
    try:
        options = hub_model_options(name)
    except HubModelUnavailable as exc:
        raise ValueError(f"{exc}; without a download, serve {OFFLINE_MODELS} with proofgym serve-model and use the "
                         "openai policy at its URL") from None
    try:
        if tokenizer:
            return AutoTokenizer.from_pretrained(name, **options.tokenizer)
        return AutoModelForCausalLM.from_pretrained(name, **options.model)
    except OSError as exc:
        raise ValueError(f"model {name!r}: cannot load it (a hub id or a local directory): "
                         f"{' '.join(str(exc).split())}") from None


class HFLocalPolicy:
    """Acts by generating with a local ``transformers`` causal LM.

    ``model`` is a local path (or hub id) loaded with ``AutoModelForCausalLM`` / ``AutoTokenizer``,
    or a model object, in which case ``tokenizer`` is required. The conversation is rendered with
    the tokenizer's chat template when it has one, else as plain ``Role: text`` paragraphs; the
    tools are described in the system message and the reply is read for one JSON tool call (or
    taken as the answer when the environment takes text), as :class:`OpenAIChatPolicy` does in
    JSON mode. ``temperature=0`` decodes greedily; otherwise sampling is seeded from ``seed``, the
    rollout's seed and the turn, so a rollout is reproducible whatever runs beside it.
    Generation runs in a worker thread (one at a time per policy), so the event loop stays free.
    ``generation_kwargs`` are passed on to ``generate`` (e.g. ``repetition_penalty``). What they leave out comes
    from the model's generation config, and transformers fills in ``top_k=50`` when that sets none: sampling
    draws from the 50 likeliest tokens unless ``generation_kwargs={"top_k": 0}`` asks for the whole vocabulary.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float | None = None,
        seed: int = 0,
        device: str = "cpu",
        generation_kwargs: Mapping[str, Any] | None = None,
        policy_id: str | None = None,
    ) -> None:
        if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
        if not _finite(temperature) or temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
        if top_p is not None and not (_finite(top_p) and 0 < top_p <= 1):
            raise ValueError(f"top_p must be a number > 0 and <= 1, got {top_p!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        options = dict(generation_kwargs or {})
        clash = sorted(_OWN_OPTIONS & set(options))
        if clash:
            raise ValueError(f"generation_kwargs must not set {clash}: use the policy's own arguments")
        if isinstance(model, (str, os.PathLike)):
            name = os.fspath(model)
            tokenizer = tokenizer if tokenizer is not None else load_pretrained(name, tokenizer=True)
            model = load_pretrained(name)
        else:
            if tokenizer is None:
                raise ValueError("a model object needs its tokenizer: HFLocalPolicy(model, tokenizer)")
            name = getattr(getattr(model, "config", None), "name_or_path", "") or type(model).__name__
        self.model = model.to(device)
        self.model.eval()
        self.tokenizer = tokenizer
        self.model_name = name
        self.policy_id = policy_id or f"hf:{name}"
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.top_p = top_p
        self.seed = seed
        self.device = device
        self.generation_kwargs = options
        self._lock = threading.Lock()

    @property
    def uses_chat_template(self) -> bool:
        """Whether prompts are rendered with the tokenizer's chat template."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def render(self, request: PolicyRequest) -> str:
        """The prompt text the model is given for ``request``."""
        messages = with_tool_instructions(request.messages, request.tools, accepts_text=request.accepts_text)
        if self.uses_chat_template:
            # tokenize=False: the rendered prompt text
            return cast(str, self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
        turns = [f"{message['role'].capitalize()}: {message['content']}" for message in messages]
        return "\n\n".join([*turns, "Assistant:"])

    async def act(self, request: PolicyRequest) -> PolicyReply:
        started = time.perf_counter()
        try:
            prompt = self.render(request)
            generation = await asyncio.to_thread(self._generate, prompt, self._call_seed(request))
        except Exception as exc:  # the model could not run: not the agent's doing
            error = f"generation failed: {type(exc).__name__}: {exc}"
            event = LMCallEvent(model=self.model_name, latency_s=time.perf_counter() - started, error=error)
            return PolicyReply(None, {"role": "assistant", "content": ""}, [event], error=error, unavailable=True)
        event = LMCallEvent(
            model=self.model_name,
            request={"prompt": prompt, "max_new_tokens": self.max_new_tokens, "temperature": self.temperature,
                     "top_p": self.top_p, "seed": generation.seed},
            response={"text": generation.text, "finish_reason": generation.finish_reason},
            prompt_tokens=generation.prompt_tokens,
            completion_tokens=generation.completion_tokens,
            latency_s=time.perf_counter() - started,
        )
        message = {"role": "assistant", "content": generation.text}
        parsed = read_text_action(generation.text, accepts_text=request.accepts_text or not request.tools)
        if parsed.error is not None:
            cut = " (the reply was cut off at max_new_tokens)" if generation.finish_reason == "length" else ""
            return PolicyReply(None, message, [event], error=parsed.error + cut)
        return PolicyReply(parsed.action, message, [event])

    async def aclose(self) -> None:
        """Nothing to release: the model stays usable (and is freed with the policy)."""

    def _call_seed(self, request: PolicyRequest) -> int:
        digest = hashlib.sha256(f"{self.seed}:{request.seed}:{request.turn}".encode()).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def _generate(self, prompt: str, seed: int) -> _Generation:
        tokenizer = self.tokenizer
        with self._lock:
            encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=not self.uses_chat_template)
            input_ids = encoded["input_ids"].to(self.device)
            attention_mask = encoded.get("attention_mask")
            if attention_mask is not None:
                attention_mask = attention_mask.to(self.device)
            prompt_tokens = int(input_ids.shape[1])
            context = getattr(self.model.config, "max_position_embeddings", None)
            if isinstance(context, int) and prompt_tokens + self.max_new_tokens > context:
                raise _ContextTooLong(f"the prompt has {prompt_tokens} tokens; with max_new_tokens "
                                      f"{self.max_new_tokens} that exceeds the model's context of {context}")
            options: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "do_sample": self.temperature > 0}
            if self.temperature > 0:
                options["temperature"] = self.temperature
                if self.top_p is not None:
                    options["top_p"] = self.top_p
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
            if pad is not None:
                options["pad_token_id"] = pad
            options.update(self.generation_kwargs)
            torch.manual_seed(seed)  # under the lock: no other generation of this policy draws meanwhile
            with torch.inference_mode():
                output = self.model.generate(input_ids=input_ids, attention_mask=attention_mask, **options)
        new_tokens = output[0, prompt_tokens:].tolist()
        eos = tokenizer.eos_token_id
        stopped = eos is not None and eos in new_tokens
        finish = "length" if len(new_tokens) >= self.max_new_tokens and not stopped else "stop"
        text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        return _Generation(text, prompt_tokens, len(new_tokens), finish, seed)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
