"""The trainer's policy: the model it updates, and the copy ``serve-model`` serves to the task app.

The served copy is a separate module object updated by :meth:`PolicyServer.sync` (a state-dict copy, in place)
only while no rollout is in flight, so a completion is never decoded by half-updated weights. Staleness bound:
rollouts of update ``k`` were sampled by the weights of update ``k - s`` with ``s <= weight_sync_interval - 1``
(strictly on-policy collection), ``s <= weight_sync_interval`` when the next batch is collected during the update
(``training.overlap_rollouts``). Every turn's behaviour log-probabilities come back with its tokens, so the
importance ratio is always against the weights that sampled.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from proofgym.config import TINY_MODEL, ConfigError

#: ``proofgym:tiny`` for RL: a compact chat template that renders a past tool call as ``> name args`` (not the
#: JSON the model wrote: the template is not append-only, and training on the recorded ids must not care).
TINY_CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' or m.role == 'system' -%}{{ m.content ~ '\\n' }}"
    "{%- elif m.role == 'assistant' -%}"
    "{%- for c in m.tool_calls or [] -%}"
    "{{ '> ' ~ c.function.name }}"
    "{%- if c.function.arguments is mapping -%}{%- for v in c.function.arguments.values() -%}{{ ' ' ~ v }}"
    "{%- endfor -%}{%- endif -%}{{ '\\n' }}"
    "{%- endfor -%}"
    "{%- if not m.tool_calls -%}{{ '> ' ~ m.content ~ '\\n' }}{%- endif -%}"
    "{%- elif m.role == 'tool' -%}{{ m.content ~ '\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if tools -%}{%- endif -%}>>"
)


_TINY_CONTEXT = 1024


@dataclass
class PolicyModels:
    """The trained model (``trainer``), the served copy (``served``), the tokenizer, and how it trains."""

    trainer: Any
    served: Any
    tokenizer: Any
    name: str
    context_length: int
    lora: bool


def build_policy_models(name: str, *, trainer_mode: str, lora: Any, seed: int, cache_dir: str | Path,
                        corpus: list[str] | None = None, served_here: bool = True) -> PolicyModels:
    """Load ``name`` (``proofgym:tiny``: built here with :data:`TINY_CHAT_TEMPLATE` and a tokenizer trained on
    ``corpus``; else a hub id, read from the local cache first, a local directory or ``smollm2``) and wrap it for
    training: LoRA through peft when ``trainer_mode`` is ``lora`` (``proofgym:tiny`` trains fully unless another
    process serves it, ``served_here`` False: its updates then travel as LoRA adapters, and there is no served
    copy here). A model that cannot be loaded is a :class:`~proofgym.config.ConfigError` naming the ``model``
    section."""
    torch.manual_seed(seed)
    if name == TINY_MODEL:
        from proofgym.policies import TinyModelConfig, build_tiny_model

        model, tokenizer = build_tiny_model(cache_dir, seed=seed, config=TinyModelConfig(max_positions=_TINY_CONTEXT),
                                            corpus=corpus)
        tokenizer.chat_template = TINY_CHAT_TEMPLATE
        context = _TINY_CONTEXT
        use_lora = trainer_mode == "lora" and not served_here
    else:
        from proofgym.model_server import load_model

        try:
            loaded = load_model(name, device="cuda" if torch.cuda.is_available() else "cpu")
        except ValueError as exc:  # the serve backend's ModelLoadError, one line naming the model
            raise ConfigError(f"model: {exc}") from None
        model, tokenizer, context = loaded.model, loaded.tokenizer, loaded.context_length
        use_lora = trainer_mode == "lora"
    if use_lora:
        from peft import LoraConfig, get_peft_model

        targets: Any = lora.target_modules
        if targets == ["all-linear"]:
            targets = "all-linear"
        model = get_peft_model(model, LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                                                 target_modules=targets, task_type="CAUSAL_LM"))
    model.train()
    served = None
    if served_here:
        served = copy.deepcopy(model).eval()
        for parameter in served.parameters():
            parameter.requires_grad_(False)
    return PolicyModels(model, served, tokenizer, name, context, use_lora)


class PolicyServer:
    """``serve-model``'s app over the served copy, in a background thread, on ``host`` (loopback by default; the
    address a Ray cluster's rollout actors reach it on otherwise) and ``port`` (default: a free one); ``threads``:
    torch's CPU threads for its decoding (default: torch's own choice)."""

    def __init__(self, models: PolicyModels, *, max_batch_size: int = 16, max_tokens_limit: int = 256,
                 host: str = "127.0.0.1", port: int | None = None, threads: int | None = None) -> None:
        from proofgym.http import BackgroundServer
        from proofgym.model_server import GenerationBackend, LoadedModel, create_model_app

        self.models = models
        self.backend = GenerationBackend(LoadedModel(models.served, models.tokenizer, models.name,
                                                     models.context_length), max_batch_size=max_batch_size,
                                          threads=threads)
        app = create_model_app(self.backend, max_tokens_limit=max_tokens_limit)
        self._server = BackgroundServer(app, host=host, lifespan="off", name="proofgym-rl-policy-server",
                                        ports=None if port is None else range(port, port + 1))
        self.port = self._server.port
        self.url = f"{self._server.url}/v1"
        self.loopback = self._server.loopback
        self.syncs = 0
        self.version = 0  # the update whose weights are served

    def start(self) -> PolicyServer:
        self._server.start()
        return self

    @property
    def model_name(self) -> str:
        """The model the rollouts ask for (this server serves one, updated in place by :meth:`sync`)."""
        return self.models.name

    def name_for(self, version: int) -> str:
        """The model the rollouts of update ``version`` asked for (here always the same name)."""
        return self.models.name

    def sync(self, version: int) -> float:
        """Copy the trained weights into the served copy (call only with no rollout in flight), and drop the keys
        and values the server kept of the prompts run by the old weights (its prefix cache: before 2026-12-06 the
        last prompt's were kept across a sync, and a shared prefix was then read with the old weights); seconds
        taken."""
        started = time.perf_counter()
        with torch.no_grad(), self.backend.model_lock:
            served = self.models.served.state_dict()
            for key, value in self.models.trainer.state_dict().items():
                served[key].copy_(value)
            self.backend.forget_prefix()
        self.syncs += 1
        self.version = version
        return time.perf_counter() - started

    def close(self) -> None:
        self._server.close()
        self.backend.close()
