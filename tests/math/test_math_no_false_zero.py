"""No false zero: the math verifier certifies every gold answer from 16 threads at once (Math-Verify's own
SIGALRM timeouts would raise there, and a broad ``except`` would score them 0), through the shipped reward path
under a 16-way burst, and a comparison that hangs is killed by the process executor and is INVALID, never wrong."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")

from proofgym.config import load_run_config  # noqa: E402
from proofgym.core import ErrorKind, Outcome  # noqa: E402
from proofgym.math import MathVerifier, build_math_prompt, builtin_math_problems, math_claim  # noqa: E402
from proofgym.runtime import RuntimeConfig, VerificationRuntime  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "run" / "math.yaml"
# A comparison Math-Verify does not finish (it evaluates a tower of powers): what a timeout is for.
HANGING_ANSWER = "9^{9^{9^{9}}}"


def _problems(n: int = 64):
    problems = list(builtin_math_problems().values())
    return [problems[(i * 7) % len(problems)] for i in range(n)]


def test_math_verify_s_own_timeouts_raise_off_the_main_thread():
    # The failure this package exists to avoid: with its default timeouts, Math-Verify cannot run in a thread.
    import math_verify

    errors = []

    def call():
        try:
            math_verify.verify(math_verify.parse("$1/2$", parsing_timeout=None),
                               math_verify.parse("$0.5$", parsing_timeout=None), timeout_seconds=5)
        except ValueError as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
    assert errors and "threaded environment" in errors[0]


def test_sixteen_threads_certify_every_gold_answer():
    verifier = MathVerifier()
    problems = _problems()

    def check(problem):
        assert threading.current_thread() is not threading.main_thread()
        return verifier.verify(math_claim(problem.answer, problem.answer.strip("$")))

    with ThreadPoolExecutor(16) as pool:
        verdicts = list(pool.map(check, problems))
    assert [v.outcome for v in verdicts] == [Outcome.CERTIFIED] * len(problems), [v.reason for v in verdicts
                                                                                  if not v.certified]


def test_the_shipped_reward_path_pays_every_gold_answer_under_a_16_way_burst():
    problems = _problems(32)
    with load_run_config(CONFIG).reward_function() as reward_fn:
        top = reward_fn.shaper.bounds[1]
        barrier = threading.Barrier(16)

        def score(offset: int) -> list[float | None]:
            group = problems[offset::16]
            barrier.wait()  # all 16 callers at once
            return reward_fn([build_math_prompt(p) for p in group],
                             [f"So the answer is \\boxed{{{p.answer.strip('$')}}}." for p in group])

        with ThreadPoolExecutor(16) as pool:
            rewards = [r for batch in pool.map(score, range(16)) for r in batch]
        assert rewards == [pytest.approx(top)] * len(problems)
        assert dict(reward_fn.stats.outcomes) == {"certified": len(problems)}


@pytest.mark.slow  # the 15 s limit runs out once, after two workers' cold start: about 25 s on 2 busy cores
def test_a_hanging_comparison_is_killed_and_invalid_never_wrong():
    # The limit must exceed a worker's cold start (unpickling the verifier imports SymPy and the LaTeX grammar in
    # the first call a worker serves: 2-8 s here), or every call times out and no worker ever gets warm.
    config = RuntimeConfig(executor="process", workers=2, max_concurrency=2, batch_size=1, timeout_s=15.0,
                           retries=0, cache_size=0)
    with VerificationRuntime(MathVerifier(), config) as runtime:
        # Two warm workers, so that the one killed below leaves a warm one for the answers after it.
        warm = runtime.verify_many_sync([math_claim("3", "3"), math_claim("3", "3.0")])
        assert all(v.certified for v in warm), warm
        hung = runtime.verify_many_sync([math_claim("3", HANGING_ANSWER)])[0]
        assert hung.outcome is Outcome.INVALID and hung.error_kind is ErrorKind.TIMEOUT
        # The pool goes on without the killed worker: the next answers are verified as usual.
        after = runtime.verify_many_sync([math_claim("3", "4"), math_claim("3", "3.00")])
        assert [v.outcome for v in after] == [Outcome.REFUTED, Outcome.CERTIFIED]
        metrics = runtime.metrics()
        assert metrics.invalid == 1 and metrics.invalid_by_kind == {"timeout": 1}
