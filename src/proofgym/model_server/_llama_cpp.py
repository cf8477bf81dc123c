"""``serve-model --backend llama_cpp``: a GGUF file decoded by llama.cpp (``llama-cpp-python``, ``pip install
'proofgym[llama]'``), behind the same server and the same queue as the torch engine.

One llama.cpp context holds a key/value cache of ``context_length`` cells shared by up to ``max_batch_size``
sequences (one per row) and one more that keeps the last prompt run in the batch: a new prompt copies the KV cells
of the prefix it shares with it (the chat template's system turn, the other choices of its request) and runs only
the rest. Each step decodes one token of every running row in one ``llama_decode`` call; rows that arrive meanwhile
are admitted between two steps (continuous batching) while their prompts and token budgets fit the cache. A batch
starts from an empty cache; even so, the same request decoded alone twice may part after a few tokens (measured:
the same greedy request alternated between two answers from one call to the next, with one thread or two; where
llama.cpp lays out a batch's cells changes the order of its sums). Use the torch engine where answers must repeat.

Rows are chosen as the torch engine chooses them (greedy, or one uniform draw per step from the row's own seeded
generator, inverse CDF in float64, top-p), with logprobs on request; unlike the torch engine's, a row's logits
depend a little on what else is in its batch (where its cells lie in the shared buffer), so a seeded or greedy row
may part from its answer alone after a few tokens. Not done here: constrained decoding (``response_format`` JSON, a
forced tool call: the server refuses them for this backend). Imports no torch.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

import numpy as np

from proofgym.model_server._generation import (
    BatchingBackend,
    ModelLoadError,
    TokenLogprob,
    _Row,
    gguf_file,
    render_chat,
)

#: The largest context (KV cells, shared by all rows) allocated when the model was trained for more.
MAX_CONTEXT = 16384


def llama_cpp_available() -> bool:
    """Whether ``llama_cpp`` (``pip install 'proofgym[llama]'``) can be imported."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def _passive_waiting() -> None:
    """llama.cpp's OpenMP threads sleep when they wait (``OMP_WAIT_POLICY=PASSIVE``, unless the user chose a policy;
    read once, when ``llama_cpp`` loads its library). Spinning, SmolLM2 decoded 0.3-0.5 tokens/s on 2 threads of a
    2-vCPU machine at load 15, against 33-44 waiting passively (1 thread: 9.5-10)."""
    import sys

    if "llama_cpp" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class _Seq:
    """A row being decoded: its sequence id in the cache, the tokens its sequence holds, the token chosen last
    (not yet fed to the model)."""

    __slots__ = ("row", "seq", "n_past", "pending")

    def __init__(self, row: _Row, seq: int, n_past: int, pending: int) -> None:
        self.row, self.seq, self.n_past, self.pending = row, seq, n_past, pending


class LlamaCppBackend(BatchingBackend):
    """Batched generation over a GGUF file with llama.cpp (see the module docstring); ``threads``: llama.cpp's
    threads (default: the machine's CPUs). Load it with :meth:`load`."""

    engine = "llama_cpp"
    constrained_decoding = False

    def __init__(self, path: Path, *, name: str, max_batch_size: int = 8, batch_window_ms: float = 5.0,
                 max_queued: int = 1024, threads: int | None = None, continuous: bool = True,
                 context_length: int | None = None) -> None:
        _passive_waiting()
        import llama_cpp
        from llama_cpp import _internals, _logger
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        _logger.set_verbose(False)
        model_params = llama_cpp.llama_model_default_params()
        # No extra buffer types (weights repacked for AMX tiles or interleaved for AVX): AMX tile instructions
        # raised SIGILL in a VM whose CPU lists AMX (Xeon, Linux 6.18 under Firecracker), killing the server.
        model_params.use_extra_bufts = False
        try:
            model = _internals.LlamaModel(path_model=str(path), params=model_params, verbose=False)
        except ValueError as exc:
            raise ModelLoadError(f"model {name!r}: llama.cpp cannot load {path}: {exc}") from None
        self._llama = llama_cpp
        self._model = model
        self._vocab = model.vocab
        self.n_vocab = model.n_vocab()
        trained = model.n_ctx_train()
        context = min(trained, MAX_CONTEXT) if context_length is None else context_length
        if not 0 < context <= trained:
            raise ModelLoadError(f"model {name!r}: context_length must be 1 to {trained} (its training context), "
                                 f"got {context}")
        eos = [token for token in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self._vocab, token)]
        super().__init__(name=name, context_length=context, eos_token_ids=eos, max_batch_size=max_batch_size,
                         batch_window_ms=batch_window_ms, max_queued=max_queued, threads=threads,
                         continuous=continuous)
        n_threads = threads or os.cpu_count() or 1
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = context
        params.n_batch = params.n_ubatch = min(context, 512)
        params.n_seq_max = max_batch_size + 1  # the rows, and the last prompt kept for its prefix
        params.kv_unified = True  # one pool of cells: a shared prefix is stored once
        params.n_threads = params.n_threads_batch = n_threads
        params.no_perf = True
        try:
            self._ctx = _internals.LlamaContext(model=model, params=params, verbose=False)
        except ValueError as exc:
            raise ModelLoadError(f"model {name!r}: llama.cpp cannot make a context of {context} tokens: "
                                 f"{exc}") from None
        self._memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._batch = _internals.LlamaBatch(n_tokens=params.n_batch, embd=0, n_seq_max=max_batch_size + 1,
                                            verbose=False)
        self.n_batch = params.n_batch
        self._cache_seq = max_batch_size
        self._cached: list[int] = []  # the tokens the cache sequence holds
        metadata = model.metadata()
        template = metadata.get("tokenizer.chat_template")
        self.uses_chat_template = bool(template)
        self.native_tools = self.uses_chat_template and "tools" in str(template)

        def piece(key: str) -> str:
            token = int(metadata.get(f"tokenizer.ggml.{key}_token_id", -1))
            return self.decode([token], skip_special_tokens=False) if 0 <= token < self.n_vocab else ""

        self._formatter = Jinja2ChatFormatter(template, eos_token=piece("eos"), bos_token=piece("bos")) \
            if template else None
        self._text_lock = threading.Lock()
        #: Prompt tokens whose KV cells were copied from the last prompt rather than computed.
        self.prefix_tokens_reused = 0

    @classmethod
    def load(cls, spec: str, **options: Any) -> LlamaCppBackend:
        """The backend over the GGUF file ``spec`` names (``smollm2`` or a ``.gguf`` path); ``options`` as
        :class:`LlamaCppBackend` takes them. Raises :class:`ModelLoadError`, one line, when ``spec`` is no GGUF file
        or llama-cpp-python is not installed."""
        path = gguf_file(spec)
        if path is None:
            raise ModelLoadError(f"model {spec!r}: the llama_cpp backend serves GGUF files only (smollm2 or a path "
                                 "ending in .gguf); use the torch backend for other models")
        if not llama_cpp_available():
            raise ModelLoadError("the llama_cpp backend needs the llama-cpp-python package (pip install "
                                 "'proofgym[llama]')")
        return cls(path, name=spec, **options)

    # -- prompts and text ------------------------------------------------------------------------------------

    def render(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = (), *,
               accepts_text: bool = True) -> str:
        """The prompt text, as :func:`~proofgym.model_server._generation.render_chat` renders it with the GGUF
        file's chat template (``tokenizer.chat_template``). A template that refuses the messages raises
        ``ValueError``."""
        return render_chat(messages, tools, accepts_text=accepts_text,
                           template=self._apply_template if self._formatter is not None else None,
                           native_tools=self.native_tools)

    def _apply_template(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        assert self._formatter is not None
        try:
            return str(self._formatter(messages=cast(Any, messages), **kwargs).prompt)
        except Exception as exc:  # noqa: BLE001 - jinja's TemplateError, or a template's own raise_exception
            raise ValueError(f"the model's chat template refused the messages: {exc}") from None

    def encode(self, prompt: str) -> list[int]:
        """``prompt``'s token ids (special tokens parsed; a BOS token added only when there is no chat template)."""
        return [int(token) for token in self._model.tokenize(prompt.encode("utf-8"),
                                                             add_bos=not self.uses_chat_template, special=True)]

    def decode(self, token_ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        tokens = (self._llama.llama_token * max(1, len(token_ids)))(*token_ids)
        size = 64 + 16 * len(token_ids)
        for _ in range(2):
            buffer = ctypes.create_string_buffer(size)
            n = self._llama.llama_detokenize(self._vocab, tokens, len(token_ids), buffer, size, False,
                                             not skip_special_tokens)
            if n >= 0:
                return buffer.raw[:n].decode("utf-8", errors="replace")
            size = -n + 1
        raise RuntimeError(f"llama.cpp could not detokenize {len(token_ids)} tokens")

    def token_texts(self, token_ids: Sequence[int]) -> list[str]:
        """Each token's own text (a fragment of a multi-byte character decodes as U+FFFD)."""
        return [self.decode([token]) for token in token_ids]

    def vocabulary(self) -> Any:
        raise ValueError("the llama_cpp backend does not constrain decoding (response_format JSON, a forced tool "
                         "call): use the torch backend")

    # -- generation ------------------------------------------------------------------------------------------

    def _generator(self, seed: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(seed))

    def close(self) -> None:
        super().close()
        for resource in (self._batch, self._ctx, self._model):
            cast(Any, resource).close()  # llama-cpp-python's wrappers are untyped

    def _decode(self, rows: list[_Row]) -> None:
        """Decode ``rows`` together until each has finished (see the module docstring)."""
        waiting = list(rows)
        running: list[_Seq] = []
        free = list(range(self.max_batch_size))
        # An empty cache for every batch: where a row's cells lie in the shared buffer changes the order of its
        # attention sums, so the same request decoded alone twice would not give the same tokens if the last
        # batch's cells were kept (measured: greedy answers parted after 8 tokens, seeded ones after 7).
        self._llama.llama_memory_clear(self._memory, True)
        self._cached = []
        try:
            while waiting or running:
                waiting, running = self._admitted(waiting, running, free)
                if running:
                    running = self._stepped(running, free)
                if self.continuous and len(running) + len(waiting) < self.max_batch_size:
                    joining = self._taken(self.max_batch_size - len(running) - len(waiting))
                    rows.extend(joining)
                    self.rows_decoded += len(joining)
                    waiting.extend(joining)
        finally:
            for seq in range(self.max_batch_size):
                self._llama.llama_memory_seq_rm(self._memory, seq, -1, -1)

    def _admitted(self, waiting: list[_Row], running: list[_Seq], free: list[int]) -> tuple[list[_Row], list[_Seq]]:
        """The waiting rows that fit the cache now, run (a request's rows share their prompt's run) to their first
        token; returns the rows still waiting and the running ones. A row needs cells for its prompt and its token
        budget; with nothing running, the last prompt kept is dropped and at least one row is admitted."""
        waiting = [row for row in waiting if not row.job.cancelled]
        still: list[_Row] = []
        while waiting and free:
            job = waiting[0].job
            group = [row for row in waiting if row.job is job][:len(free)]
            prompt = group[0].prompt
            held = sum(self._cells(seq.row) for seq in running) + len(self._cached)
            fits = [k for k in range(len(group), 0, -1)
                    if held + len(prompt) + sum(self._cells(row) - len(prompt) for row in group[:k])
                    <= self.context_length]
            if not fits and not running:
                self._forget_cached()
                held = 0
                fits = [k for k in range(len(group), 0, -1)
                        if len(prompt) + sum(self._cells(row) - len(prompt) for row in group[:k])
                        <= self.context_length] or [1]
            taken = group[:fits[0]] if fits else []
            waiting = [row for row in waiting if all(row is not other for other in taken)]
            if not taken:
                still.extend(row for row in waiting if row.job is job)
                waiting = [row for row in waiting if row.job is not job]
                continue
            seqs = [free.pop(0) for _ in taken]
            logits = self._prefilled(prompt, seqs)
            for row, seq in zip(taken, seqs):
                token = self._chosen(row, logits)
                if row.finish is None:
                    running.append(_Seq(row, seq, len(prompt), token))
                else:
                    self._finish(row)
                    self._release(seq, free)
        return still + waiting, running

    def _cells(self, row: _Row) -> int:
        """The KV cells ``row`` may hold at most: its prompt and its token budget, within the context."""
        return min(len(row.prompt) + row.params.max_tokens, self.context_length)

    def _prefilled(self, prompt: list[int], seqs: list[int]) -> np.ndarray:
        """``prompt`` in the cache of each of ``seqs`` (its prefix shared with the last prompt copied, the rest
        computed once for all), and the logits after its last token."""
        llama, memory = self._llama, self._memory
        shared = 0
        for a, b in zip(self._cached, prompt[:-1]):  # at least the last token is run: its logits are needed
            if a != b:
                break
            shared += 1
        for seq in seqs:
            llama.llama_memory_seq_rm(memory, seq, -1, -1)
            if shared:
                llama.llama_memory_seq_cp(memory, self._cache_seq, seq, 0, shared)
        self.prefix_tokens_reused += shared
        batch = self._batch.batch
        logits: np.ndarray | None = None
        for start in range(shared, len(prompt), self.n_batch):
            chunk = prompt[start:start + self.n_batch]
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = start + i
                batch.n_seq_id[i] = len(seqs)
                for j, seq in enumerate(seqs):
                    batch.seq_id[i][j] = seq
                batch.logits[i] = False
            batch.logits[len(chunk) - 1] = True
            self._decode_batch(batch)
            logits = self._logits(len(chunk) - 1)
        assert logits is not None
        # The cache sequence now holds this prompt (its cells are shared with the rows', not copied).
        llama.llama_memory_seq_rm(memory, self._cache_seq, -1, -1)
        llama.llama_memory_seq_cp(memory, seqs[0], self._cache_seq, 0, len(prompt))
        self._cached = list(prompt)
        return logits

    def _forget_cached(self) -> None:
        self._llama.llama_memory_seq_rm(self._memory, self._cache_seq, -1, -1)
        self._cached = []

    def _stepped(self, running: list[_Seq], free: list[int]) -> list[_Seq]:
        """One token of every running row through the model and each row's next one chosen; the rows still
        running."""
        batch = self._batch.batch
        batch.n_tokens = len(running)
        for i, seq in enumerate(running):
            batch.token[i] = seq.pending
            batch.pos[i] = seq.n_past
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq.seq
            batch.logits[i] = True
        self._decode_batch(batch)
        still = []
        for i, seq in enumerate(running):
            seq.n_past += 1
            if seq.row.job.cancelled:
                self._release(seq.seq, free)
                continue
            seq.pending = self._chosen(seq.row, self._logits(i))
            if seq.row.finish is None:
                still.append(seq)
            else:
                self._finish(seq.row)
                self._release(seq.seq, free)
        return still

    def _release(self, seq: int, free: list[int]) -> None:
        self._llama.llama_memory_seq_rm(self._memory, seq, -1, -1)
        free.append(seq)

    def _decode_batch(self, batch: Any) -> None:
        code = self._llama.llama_decode(self._ctx.ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code} for a batch of {batch.n_tokens} tokens")

    def _logits(self, index: int) -> np.ndarray:
        pointer = self._llama.llama_get_logits_ith(self._ctx.ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    def _chosen(self, row: _Row, logits: np.ndarray) -> int:
        """``row``'s next token from ``logits`` (greedy or sampled), recorded with its logprob when asked."""
        params = row.params
        if params.temperature == 0:
            token = int(np.argmax(logits))
        else:
            token = _sample(logits, params.temperature, params.top_p, row.generator)
        if params.top_logprobs is not None:
            row.logprobs.append(_token_logprob(logits, token, params.top_logprobs))
        self._record(row, token)
        return token


def _sample(logits: np.ndarray, temperature: float, top_p: float, generator: np.random.Generator) -> int:
    """One token by inverse-CDF sampling with one uniform draw, in float64 (as the torch engine samples)."""
    scores = logits.astype(np.float64) / temperature
    probs = np.exp(scores - scores.max())
    probs /= probs.sum()
    order = None
    if top_p < 1.0:
        order = np.argsort(-probs, kind="stable")
        probs = probs[order]
        keep = int(np.searchsorted(np.cumsum(probs), top_p)) + 1
        probs = probs[:keep]
    cumulative = np.cumsum(probs)
    draw = generator.random() * cumulative[-1]
    index = min(int(np.searchsorted(cumulative, draw, side="right")), probs.shape[0] - 1)
    while probs[index] == 0.0 and index > 0:  # never a token the distribution excludes
        index -= 1
    return int(order[index]) if order is not None else index


def _token_logprob(logits: np.ndarray, token: int, top: int) -> TokenLogprob:
    scores = logits.astype(np.float64)
    shifted = scores - scores.max()
    logprobs = shifted - np.log(np.exp(shifted).sum())
    alternatives: tuple[tuple[int, float], ...] = ()
    if top > 0:
        best = np.argpartition(-logprobs, min(top, logprobs.shape[0] - 1))[:top]
        best = best[np.argsort(-logprobs[best], kind="stable")]
        alternatives = tuple((int(i), float(logprobs[i])) for i in best)
    return TokenLogprob(token_id=token, logprob=float(logprobs[token]), top=alternatives)

