"""A fake AmberTrace platform for the AmberTrace verifier tests (no network).

Recorded HTTP answers (``payloads/ambertrace/*.json``) are served through an ``httpx.MockTransport``
to the real ``ambertraceai`` SDK, so the SDK's own envelope parsing, retries and error classes are
what the verifier sees. A payload is ``{"status", "body"}`` (a JSON answer), ``{"status", "text"}``
(a non-JSON answer, e.g. a proxy page) or ``{"transport_error", "message"}`` (no answer at all).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

ambertraceai = pytest.importorskip("ambertraceai")
httpx = pytest.importorskip("httpx")

PAYLOADS = Path(__file__).parent / "payloads" / "ambertrace"
API_KEY = "at_test_0123456789abcdef"
BASE_URL = "http://ambertrace.test"


def payload(name: str) -> dict[str, Any]:
    """A recorded answer by file name (without ``.json``)."""
    return json.loads((PAYLOADS / f"{name}.json").read_text())


def data(name: str) -> Any:
    """The ``data`` of a recorded 200 answer: what the SDK returns for it."""
    return payload(name)["body"]["data"]


class FakePlatform:
    """Serves ``/query`` and ``/query-batch`` requests.

    ``answer(facts) -> payload`` picks the recorded answer of one query. A batch gets one item per
    query (a 200 answer becomes an ``ok`` item, an app error an ``error`` item), unless some query's
    answer has no app envelope (transport error, proxy page): then the whole batch fails that way.
    ``batch`` overrides the whole batch answer. Every request is recorded in ``requests``.
    """

    def __init__(self, answer: Callable[[Mapping[str, Any]], dict[str, Any]],
                 batch: dict[str, Any] | None = None) -> None:
        self.answer = answer
        self.batch = batch
        self.requests: list[tuple[str, dict[str, Any]]] = []

    @classmethod
    def always(cls, name: str) -> FakePlatform:
        recorded = payload(name)
        return cls(lambda facts: recorded)

    @property
    def queries(self) -> list[dict[str, Any]]:
        """Every query sent, single or inside a batch, in order."""
        out = []
        for path, body in self.requests:
            out.extend(body["queries"] if path.endswith("/query-batch") else [body])
        return out

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append((request.url.path, body))
        if not request.url.path.endswith("/query-batch"):
            return _respond(self.answer(body.get("facts") or {}), request)
        if self.batch is not None:
            return _respond(self.batch, request)
        answers = [self.answer(query.get("facts") or {}) for query in body["queries"]]
        for answer in answers:
            if "body" not in answer or not ({"data", "error"} & set(answer["body"])):
                return _respond(answer, request)
        results = [
            {"index": i, "status": "ok", "data": answer["body"]["data"]} if answer["status"] == 200
            else {"index": i, "status": "error", "error": {**answer["body"]["error"], "status_code": answer["status"]}}
            for i, answer in enumerate(answers)
        ]
        return httpx.Response(200, json={"data": {"platform_id": 7, "results": results}})


def _respond(recorded: dict[str, Any], request: httpx.Request) -> httpx.Response:
    if "transport_error" in recorded:
        raise getattr(httpx, recorded["transport_error"])(recorded["message"], request=request)
    if "text" in recorded:
        return httpx.Response(recorded["status"], text=recorded["text"])
    return httpx.Response(recorded["status"], json=recorded["body"])


def sdk_client(platform: FakePlatform, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A real ``AmbertraceAPI`` whose HTTP goes to ``platform``; the SDK's retry sleeps are skipped."""
    monkeypatch.setattr(ambertraceai.convenience, "_backoff_delay", lambda attempt: 0.0)
    api = ambertraceai.AmbertraceAPI(api_key=API_KEY, base_url=BASE_URL, warm=False)
    api._http = httpx.Client(base_url=BASE_URL, transport=httpx.MockTransport(platform),
                             headers={"Authorization": f"Bearer {API_KEY}"})
    return api


class QueryOnlyClient:
    """An SDK-shaped client without ``query_batch`` (an older SDK): forces one query per claim."""

    def __init__(self, api: Any) -> None:
        self.platforms = _QueryOnly(api.platforms)


class _QueryOnly:
    def __init__(self, platforms: Any) -> None:
        self.query = platforms.query
