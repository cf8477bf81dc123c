"""The LLM judge's calls in flight are requests at the model server at once: against the fake judge model (a real
HTTP server on loopback) that answers only when N requests are in it together, N calls in flight are N requests at
the server, never more, over N connections kept alive from one call to the next (no connection per call). Counts,
not timings (benchmarks/judge_throughput.py measures the time)."""

from __future__ import annotations

from judges._fake_judges import FakeJudgeProcess, FakeJudgeServer, Gate, Latency

from proofgym.judges import Criterion, JudgeItem, LLMJudge, Rubric
from proofgym.judges._limiter import RateLimiter
from proofgym.runtime import RuntimeConfig

RUBRIC = Rubric(id="flight", goal_text="Answer the question.", criteria=(
    Criterion(id="correct", description="The answer is right.", scale={"kind": "bounded", "min": 0, "max": 10}),
    Criterion(id="clear", description="The answer is clear.", scale={"kind": "bounded", "min": 0, "max": 10}),
))


def items(count: int) -> list[JudgeItem]:
    """``count`` distinct items (nothing to de-duplicate or answer from the cache)."""
    return [JudgeItem(level="outcome", rubric=RUBRIC, candidate=f"answer number {i}") for i in range(count)]


def test_n_calls_in_flight_are_n_requests_at_the_server_at_once_over_n_kept_alive_connections():
    with FakeJudgeServer(Gate(RUBRIC, 8)) as server, \
            LLMJudge(server.base_url, "judge", runtime=RuntimeConfig(max_concurrency=8, retries=0, timeout_s=60),
                     limiter=RateLimiter()) as judge:
        verdicts = judge.judge_sync(items(24))
    assert [v.reason for v in verdicts if not v.valid] == []
    assert server.calls == 24 and server.max_in_flight == 8
    assert len({request.connection for request in server.requests}) == 8


def test_the_default_judge_has_its_limiters_32_calls_in_flight():
    with FakeJudgeServer(Gate(RUBRIC, 32)) as server, LLMJudge(server.base_url, "judge") as judge:
        verdicts = judge.judge_sync(items(64))
    assert [v.reason for v in verdicts if not v.valid] == []
    assert server.calls == 64 and server.max_in_flight == 32
    assert len({request.connection for request in server.requests}) == 32


def test_the_fake_judge_in_its_own_process_counts_and_records_each_request():
    with FakeJudgeProcess(Latency, RUBRIC, 0.0) as server, \
            LLMJudge(server.base_url, "judge", runtime=RuntimeConfig(max_concurrency=2, timeout_s=60),
                     limiter=RateLimiter()) as judge:
        verdicts = judge.judge_sync(items(6))
        timeline = server.timeline()
        assert all(v.valid for v in verdicts) and server.calls == 6 and server.max_in_flight <= 2
        assert len(timeline) == 6 and len({connection for connection, _, _ in timeline}) <= 2
        assert all(answered is not None and answered >= received for _, received, answered in timeline)
        server.reset()
        assert server.calls == 0 and server.timeline() == []
