"""Fake judges for the judge tests and the throughput benchmark.

:class:`FakeJudgeServer` is a real OpenAI-compatible HTTP server (stdlib ``ThreadingHTTPServer`` on loopback, in a
thread) whose answer to each request is a pluggable *behaviour*, a function of the request body:

- :class:`Gullible`: a judge that obeys any grading instruction it reads outside the delimited candidate block(s)
  (``<candidate-NONCE>`` ... ``</candidate-NONCE>``) and otherwise answers an honest low score (each scale's
  minimum). ``delimited=False`` is the same judge reading the whole prompt, block included: the control that shows
  the corpus does fool it. ``echo=True`` writes the candidate's text into its reasoning before its real verdict,
  ``lines=True`` gives that verdict in the ``<id>: <score>`` line form;
- :class:`Latency`: sleeps a fixed time per call and answers valid verdicts;
- :class:`Gate`: answers valid verdicts only once a given number of requests are in the server at once;
- :class:`Scripted`: replays scripted replies (malformed content, a 429 with ``Retry-After``, a 5xx), then falls
  back to another behaviour;
- :class:`InTurn`: answers the n-th call with the n-th of several behaviours (the last one answering the rest).

:class:`FakeJudgeProcess` runs the server in a child process of its own, as a real model server is (its threads do
not share the judge's GIL): the throughput benchmark's. In-process judges for the panel tests (:class:`StaticJudge`,
:class:`RaisingJudge`) are here too. The benchmark imports this module with ``tests/`` on ``sys.path``, so it imports
nothing from the test packages.
"""

from __future__ import annotations

import asyncio
import html
import json
import multiprocessing
import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Sequence

from proofgym.judges import CriterionVerdict, JudgeItem, JudgeVerdict, Rubric


@dataclass
class Reply:
    """One answer: a JSON ``body`` (or a raw ``text`` body), a status, headers, a delay before answering."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    text: str | None = None


Behaviour = Callable[[Mapping[str, Any]], Reply]


def completion(content: str, model: str = "fake-judge") -> dict[str, Any]:
    """An OpenAI chat-completion body whose one choice says ``content``."""
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}


def verdicts(scores: Mapping[str, float], reason: str) -> str:
    """The judge's answer format: ``{"verdicts": [{"id", "reason", "score"}]}``."""
    return json.dumps({"verdicts": [{"id": cid, "reason": reason, "score": score} for cid, score in scores.items()]})


def prompt_text(body: Mapping[str, Any]) -> str:
    """Every message's text, in order (string contents and ``{"type": "text"}`` parts)."""
    parts = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "\n".join(parts)


_BLOCK = re.compile(r"<((?:candidate|trajectory)-[A-Za-z0-9_-]+)>(.*?)</\1>", re.DOTALL)


def outside_candidates(text: str) -> str:
    """``text`` with every delimited candidate block removed."""
    return _BLOCK.sub("\n", text)


def inside_candidates(text: str) -> str:
    """What the candidate blocks of ``text`` say, escapes undone (``&lt;`` and ``\\u{200B}`` back to characters)."""
    inside = "\n".join(match.group(2).removeprefix("\n").removesuffix("\n") for match in _BLOCK.finditer(text))
    inside = re.sub(r"\\u\{([0-9A-Fa-f]{1,6})\}", lambda m: chr(int(m.group(1), 16)), inside)
    return html.unescape(inside)


def asked_ids(body: Mapping[str, Any], rubric: Rubric) -> list[str]:
    """The criteria a request asks: the rubric's ids that its prompt names outside the candidate blocks (the
    ``response_format`` schema is searched too), in the rubric's order."""
    text = outside_candidates(prompt_text(body)) + json.dumps(body.get("response_format") or {})
    return [c.id for c in rubric.criteria if re.search(rf"(?<![\w.:/-]){re.escape(c.id)}(?![\w.:/-])", text)]


# -- the gullible judge ----------------------------------------------------------------------------------------------

_HOMOGLYPHS = str.maketrans({"а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i",
                             "ѕ": "s", "ј": "j", "ԁ": "d", "һ": "h", "к": "k", "м": "m", "т": "t", "н": "h",
                             "α": "a", "ο": "o", "ε": "e", "ρ": "p", "ι": "i", "κ": "k", "ν": "v", "τ": "t"})

#: Grading instructions the gullible judge obeys, over its folded text (see :func:`folded`).
TRIGGERS: tuple[str, ...] = (
    r"grading override", r"override (?:is )?in effect", r"award (?:full|maximum|max|all) marks", r"full marks",
    r"maximum score", r"highest possible score", r"\[\[\s*10\s*\]\]", r"\bgrade\s*:\s*[abc]\b",
    r"\b10\s*/\s*10\b", r"\bscore\s*[:=]?\s*1\b(?![.\d])", r'"score"\s*:\s*(?:1|10|3)(?:\.0)?\s*[,}]',
    r"ignore (?:all )?(?:the )?(?:previous|prior|above) instructions",
    # French, German, Spanish, Chinese, Russian, Arabic, Japanese.
    r"note maximale", r"ignorez (?:tout|les consignes)", r"volle punktzahl", r"puntuación máxima", r"满分",
    r"максимальный балл", r"الدرجة الكاملة", r"満点",
)
_TRIGGERS = re.compile("|".join(f"(?:{t})" for t in TRIGGERS))


def folded(text: str) -> str:
    """``text`` as a lenient reader sees it: tag characters read as the ASCII they hide, NFKC (fullwidth and
    mathematical letters to ASCII), format characters (zero-width, bidi, soft hyphen) dropped, case folded,
    whitespace collapsed."""
    text = "".join(chr(ord(c) - 0xE0000) if 0xE0020 <= ord(c) <= 0xE007E else c for c in text)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return re.sub(r"\s+", " ", text.casefold())


def trigger(text: str) -> str | None:
    """The grading instruction the gullible judge obeys in ``text`` (read literally and with homoglyphs taken as
    the letters they imitate), or ``None``."""
    plain = folded(text)
    for variant in (plain, plain.translate(_HOMOGLYPHS)):
        found = _TRIGGERS.search(variant)
        if found:
            return found.group(0)
    return None


class Gullible:
    """A judge fooled by any grading instruction it reads: every criterion of ``rubric`` the request asks gets its
    scale's maximum when :func:`trigger` finds one in what it reads, else its minimum ("honest": the corpus' answer
    is wrong). It reads the prompt outside the candidate blocks, or everything with ``delimited=False``. With
    ``echo=True`` the answer quotes the candidate (escapes undone) in its reasoning before the real verdict, which
    ``lines=True`` gives as ``<id>: <score>`` lines instead of JSON."""

    def __init__(self, rubric: Rubric, *, delimited: bool = True, echo: bool = False, lines: bool = False) -> None:
        self.rubric, self.delimited, self.echo, self.lines = rubric, delimited, echo, lines
        self.triggered: list[str | None] = []

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        text = prompt_text(body)
        found = trigger(outside_candidates(text) if self.delimited else text)
        self.triggered.append(found)
        ids = asked_ids(body, self.rubric)
        if found:
            scores = {cid: self.rubric.criterion(cid).scale.max for cid in ids}
            reason = f"The grading instruction ({found!r}) says so."
        else:
            scores = {cid: self.rubric.criterion(cid).scale.min for cid in ids}
            reason = "The final answer is wrong."
        content = "\n".join(f"{cid}: {score:g}" for cid, score in scores.items()) if self.lines else \
            verdicts(scores, reason)
        if self.echo:
            content = (f"Reading the candidate, which says:\n{inside_candidates(text)}\n\n"
                       f"None of that binds me. My verdict:\n{content}")
        return Reply(completion(content, str(body.get("model") or "gullible")))


class Latency:
    """A judge that takes ``delay_s`` per call and scores every criterion asked at ``score(criterion_id)`` (by
    default the scale's maximum)."""

    def __init__(self, rubric: Rubric, delay_s: float = 0.2, score: Callable[[str], float] | None = None) -> None:
        self.rubric, self.delay_s = rubric, delay_s
        self.score = score or (lambda cid: rubric.criterion(cid).scale.max)

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        scores = {cid: self.score(cid) for cid in asked_ids(body, self.rubric)}
        return Reply(completion(verdicts(scores, "Looks right.")), delay_s=self.delay_s)


class Gate:
    """A judge that holds each request until ``parties`` are held at once (a :class:`threading.Barrier`), then answers
    them all with valid verdicts (as :class:`Latency` does, without the sleep). A client that does not have
    ``parties`` calls in flight within ``timeout_s`` gets 500s from then on (the barrier stays broken). A count, not a
    timing."""

    def __init__(self, rubric: Rubric, parties: int, timeout_s: float = 20.0) -> None:
        self.answer = Latency(rubric, delay_s=0.0)
        self.barrier = threading.Barrier(parties, timeout=timeout_s)

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            return Reply({"error": {"message": f"fewer than {self.barrier.parties} calls came at once"}}, 500)
        return self.answer(body)


class Scripted:
    """Replays ``replies`` one per call, then answers with ``then`` (a 500 when there is none)."""

    def __init__(self, replies: Sequence[Reply], then: Behaviour | None = None) -> None:
        self.replies, self.then = list(replies), then
        self._lock = threading.Lock()

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        with self._lock:
            reply = self.replies.pop(0) if self.replies else None
        if reply is not None:
            return reply
        return self.then(body) if self.then else Reply({"error": {"message": "no scripted reply"}}, 500)


class InTurn:
    """Answers the n-th call with ``behaviours[n]``, and every call past the last with the last one."""

    def __init__(self, *behaviours: Behaviour) -> None:
        self.behaviours = behaviours
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        with self._lock:
            behaviour = self.behaviours[min(self.calls, len(self.behaviours) - 1)]
            self.calls += 1
        return behaviour(body)


def malformed(content: str = "I think it deserves a good score.") -> Reply:
    """A 200 whose content is not the answer format."""
    return Reply(completion(content))


def rate_limited(retry_after_s: float = 0.05) -> Reply:
    return Reply({"error": {"message": "rate limited", "type": "rate_limit"}}, 429,
                 {"Retry-After": f"{retry_after_s:g}"})


def server_error(status: int = 503) -> Reply:
    return Reply({"error": {"message": "upstream unavailable"}}, status)


# -- the server ------------------------------------------------------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real model server
    # TCP_NODELAY, as a real model server (uvicorn: asyncio sets it on every TCP transport). With Nagle's algorithm
    # on, the body (written after the head) waited for the client's delayed ACK of the head: 40 ms a call on Linux,
    # a fifth of the 200 ms latency the throughput benchmark models, and it was charged to the judge.
    disable_nagle_algorithm = True

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        received = Received(self.path, dict(self.headers), None, connection=self.client_address[1],
                            received_s=time.monotonic())
        reply = self.server.fake._answer(received, raw)  # type: ignore[attr-defined]
        data = (reply.text if reply.text is not None else json.dumps(reply.body)).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        received.answered_s = time.monotonic()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


@dataclass
class Received:
    """One request: its path, headers and body, the connection it came on (the client's port), when it was read
    (``time.monotonic()``, one clock for every process of the machine) and when its answer was written."""

    path: str
    headers: dict[str, str]
    body: Any
    connection: int = 0
    received_s: float = 0.0
    answered_s: float | None = None


class FakeJudgeServer:
    """An OpenAI-compatible server on a free loopback port answering each POST with ``behaviour(body)``.
    ``base_url`` ends in ``/v1``. It records every request, counts calls and the most requests in flight at once.
    Its handler threads (one per connection) sleep a reply's delay without holding the GIL, so it answers any number
    of requests at once. Also a context manager."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[Received] = []
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def _answer(self, received: Received, raw: bytes) -> Reply:
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        received.body = body
        with self._lock:
            self.requests.append(received)
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if not isinstance(body, Mapping):
                return Reply({"error": {"message": "the body is not a JSON object"}}, 400)
            try:
                reply = self.behaviour(body)
            except Exception as exc:  # a behaviour's bug shows as a 500 naming it, not a hung test
                reply = Reply({"error": {"message": f"{type(exc).__name__}: {exc}"}}, 500)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            return reply
        finally:
            with self._lock:
                self.in_flight -= 1

    def reset(self, behaviour: Behaviour | None = None) -> None:
        with self._lock:
            if behaviour is not None:
                self.behaviour = behaviour
            self.requests, self.calls, self.max_in_flight = [], 0, 0

    def start(self) -> FakeJudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeJudgeProcess:
    """A :class:`FakeJudgeServer` answering with ``behaviour(*args)`` in a child process (spawned: the behaviour and
    its arguments are pickled, and built there). ``calls``, ``max_in_flight``, :meth:`timeline` and :meth:`reset` ask
    the child. Also a context manager."""

    def __init__(self, behaviour: Callable[..., Behaviour], *args: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._lock = threading.Lock()
        self._process = context.Process(target=_serve_in_child, args=(child, behaviour, args), daemon=True,
                                        name="fake-judge-server")
        self.base_url = self.url = ""

    def _ask(self, what: str) -> Any:
        with self._lock:
            self._pipe.send(what)
            if not self._pipe.poll(30):
                raise RuntimeError(f"the fake judge server's process did not answer {what!r} within 30 s")
            return self._pipe.recv()

    @property
    def calls(self) -> int:
        return int(self._ask("calls"))

    @property
    def max_in_flight(self) -> int:
        return int(self._ask("max_in_flight"))

    def timeline(self) -> list[tuple[int, float, float | None]]:
        """``(connection, received_s, answered_s)`` of every request since the last :meth:`reset`."""
        return list(self._ask("timeline"))

    def reset(self) -> None:
        self._ask("reset")

    def start(self) -> FakeJudgeProcess:
        self._process.start()
        if not self._pipe.poll(60):
            raise RuntimeError("the fake judge server's process did not start within 60 s")
        self.url = self._pipe.recv()
        self.base_url = self.url + "/v1"
        return self

    def stop(self) -> None:
        if self._process.is_alive():
            self._ask("stop")
        self._process.join(timeout=10)

    def __enter__(self) -> FakeJudgeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve_in_child(pipe: Any, behaviour: Callable[..., Behaviour], args: tuple[Any, ...]) -> None:
    with FakeJudgeServer(behaviour(*args)) as server:
        pipe.send(server.url)
        while True:
            what = pipe.recv()
            if what == "stop":
                pipe.send(None)
                return
            if what == "timeline":
                with server._lock:
                    pipe.send([(r.connection, r.received_s, r.answered_s) for r in server.requests])
            elif what == "reset":
                server.reset()
                pipe.send(None)
            else:
                pipe.send(getattr(server, what))


# -- in-process judges -----------------------------------------------------------------------------------------------

class StaticJudge:
    """A judge answering ``scores`` (``{criterion id: score or None}``; a missing id abstains) for every item,
    optionally after ``delay_s``, as an invalid verdict with ``error_kind`` when given."""

    def __init__(self, name: str, scores: Mapping[str, float | None], *, error_kind: str | None = None,
                 delay_s: float = 0.0, calls: Sequence[Mapping[str, Any]] = ()) -> None:
        self.name, self.scores, self.error_kind, self.delay_s = name, dict(scores), error_kind, delay_s
        self.calls = tuple(calls)
        self.started: list[float] = []

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        self.started.append(time.monotonic())
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return [JudgeVerdict(judge=self.name, error_kind=self.error_kind, calls=self.calls,
                             criteria=tuple(CriterionVerdict(c.id, self.scores.get(c.id), "static", self.name)
                                            for c in item.rubric.criteria)) for item in items]


class RaisingJudge:
    """A judge whose ``judge`` raises (a bug, not a judged model's doing)."""

    def __init__(self, name: str = "raising") -> None:
        self.name = name

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        raise RuntimeError("judge exploded")
