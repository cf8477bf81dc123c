"""The per-endpoint rate limiter: requests and tokens per minute, calls in flight, pauses; deterministic with an
injected clock and sleep."""

from __future__ import annotations

import asyncio
import threading

import pytest

from proofgym.judges._limiter import EndpointLimits, LimiterRegistry, RateLimiter, endpoint_key


class FakeTime:
    """A clock that only moves when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def limiter(**limits) -> tuple[RateLimiter, FakeTime]:
    fake = FakeTime()
    return RateLimiter(EndpointLimits(**limits), clock=fake.clock, sleep=fake.sleep), fake


async def admit(limiter: RateLimiter, tokens: float = 0.0, used: float | None = None) -> None:
    async with limiter.reserve(tokens) as reservation:
        reservation.settle(used)


def test_requests_per_minute_admit_a_minutes_burst_then_wait():
    rate, fake = limiter(requests_per_minute=60, max_concurrency=None)

    async def main() -> None:
        for _ in range(60):
            await admit(rate)
        assert fake.now == 0.0
        await admit(rate)

    asyncio.run(main())
    assert fake.now == pytest.approx(1.0)
    assert rate.stats()["waited"] == 1


def test_tokens_per_minute_wait_for_the_estimate():
    rate, fake = limiter(tokens_per_minute=1000, max_concurrency=None)

    async def main() -> None:
        await admit(rate, 400)
        await admit(rate, 400)
        assert fake.now == 0.0
        await admit(rate, 400)  # 200 left, 200 missing at 1000/60 a second: 12 s

    asyncio.run(main())
    assert fake.now == pytest.approx(12.0)


def test_the_reported_usage_corrects_the_estimate():
    rate, fake = limiter(tokens_per_minute=1000, max_concurrency=None)

    async def main() -> None:
        await admit(rate, 900, used=100)  # 800 given back
        await admit(rate, 900)

    asyncio.run(main())
    assert fake.now == 0.0


def test_usage_above_the_estimate_charges_the_difference():
    rate, fake = limiter(tokens_per_minute=1000, max_concurrency=None)

    async def main() -> None:
        await admit(rate, 100, used=1000)
        await admit(rate, 60)  # the bucket is empty: 60 tokens take 3.6 s

    asyncio.run(main())
    assert fake.now == pytest.approx(3.6)


def test_a_call_larger_than_a_minutes_tokens_waits_for_a_full_bucket_not_forever():
    rate, fake = limiter(tokens_per_minute=100, max_concurrency=None)

    async def main() -> None:
        await admit(rate, 50)
        await admit(rate, 10_000)

    asyncio.run(main())
    assert fake.now == pytest.approx(30.0)


def test_pause_delays_every_caller_and_a_longer_pause_stands():
    rate, fake = limiter(max_concurrency=None)
    rate.pause(5.0)
    rate.pause(2.0)
    assert rate.paused_for() == pytest.approx(5.0)

    async def main() -> None:
        await asyncio.gather(admit(rate), admit(rate), admit(rate))

    asyncio.run(main())
    assert fake.now == pytest.approx(5.0)
    assert rate.stats()["pauses"] == 2
    assert rate.stats()["admitted"] == 3


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf")])
def test_a_meaningless_pause_is_ignored(seconds):
    rate, _ = limiter()
    rate.pause(seconds)
    assert rate.paused_for() == 0.0


def test_max_concurrency_bounds_calls_in_flight():
    rate, _ = limiter(max_concurrency=3)
    in_flight = peak = 0

    async def call() -> None:
        nonlocal in_flight, peak
        async with rate.reserve():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1

    async def main() -> None:
        await asyncio.gather(*(call() for _ in range(20)))

    asyncio.run(main())
    assert peak == 3
    assert rate.in_flight == 0 and rate.stats()["admitted"] == 20


def test_a_cancelled_waiter_does_not_lose_the_slot():
    rate, _ = limiter(max_concurrency=1)

    async def main() -> None:
        release = asyncio.Event()

        async def holder() -> None:
            async with rate.reserve():
                await release.wait()

        first = asyncio.create_task(holder())
        await asyncio.sleep(0)
        doomed = asyncio.create_task(admit(rate))
        later = asyncio.create_task(admit(rate))
        await asyncio.sleep(0.01)
        doomed.cancel()
        release.set()
        await asyncio.wait_for(later, timeout=2.0)
        await first

    asyncio.run(main())
    assert rate.in_flight == 0


def test_one_limiter_serves_callers_on_different_event_loops():
    rate = RateLimiter(EndpointLimits(max_concurrency=1))
    lock = threading.Lock()
    in_flight = peak = 0

    async def calls() -> None:
        nonlocal in_flight, peak
        for _ in range(5):
            async with rate.reserve():
                with lock:
                    in_flight += 1
                    peak = max(peak, in_flight)
                await asyncio.sleep(0.005)
                with lock:
                    in_flight -= 1

    threads = [threading.Thread(target=asyncio.run, args=(calls(),)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert peak == 1 and rate.stats()["admitted"] == 15


def test_the_endpoint_of_a_url_ignores_the_chat_completions_path_query_and_credentials():
    assert endpoint_key("http://Host:8000/v1") == endpoint_key("http://host:8000/v1/chat/completions/")
    assert endpoint_key("http://user:pw@host:8000/v1?x=1") == "http://host:8000/v1"
    assert endpoint_key("http://host:8000/v1") != endpoint_key("http://host:8001/v1")


def test_judges_of_one_endpoint_share_one_limiter_at_the_tighter_limits():
    registry = LimiterRegistry()
    one = registry.get("http://host/v1", EndpointLimits(requests_per_minute=100, max_concurrency=8))
    two = registry.get("http://host/v1/chat/completions", EndpointLimits(tokens_per_minute=5000, max_concurrency=16))
    assert one is two
    assert one.limits == EndpointLimits(requests_per_minute=100, tokens_per_minute=5000, max_concurrency=8)
    assert registry.get("http://host/v1") is one
    assert registry.get("http://other/v1") is not one
