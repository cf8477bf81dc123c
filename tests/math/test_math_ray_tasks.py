"""No false zero from Ray tasks: plain ``ray.remote`` tasks (and threads inside them) run the math verifier on
a local Ray and certify every gold answer; Math-Verify's own timeouts there would raise or score 0."""

from __future__ import annotations

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")
ray = pytest.importorskip("ray", reason="Ray is not installed: pip install ray==2.60.0")

from proofgym.core import Verdict  # noqa: E402
from proofgym.math import MathVerifier, builtin_math_problems, math_claim  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    if ray.is_initialized():
        yield ray
        return
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _node_ip_address="127.0.0.1")
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.mark.slow  # starting a local Ray takes 20-30 s on 2 busy cores
def test_ray_tasks_certify_every_gold_answer_and_refute_every_perturbed_one(local_ray):
    problems = list(builtin_math_problems().values())[::5]
    gold = [(p.answer, p.answer.strip("$")) for p in problems]
    wrong = [(p.answer, "\\frac{1}{7} + 1000003") for p in problems]
    def verify_batch(verifier: MathVerifier, pairs: list[tuple[str, str]], threads: int) -> list[dict]:
        # Defined here so that Ray ships it by value (this test module is not importable on a Ray worker).
        from concurrent.futures import ThreadPoolExecutor

        def one(pair):
            return verifier.verify(math_claim(*pair)).to_dict()

        if threads <= 1:
            return [one(pair) for pair in pairs]
        with ThreadPoolExecutor(threads) as pool:  # off the Ray worker's main thread, where SIGALRM cannot go
            return list(pool.map(one, pairs))

    task = local_ray.remote(verify_batch)
    verifier = MathVerifier()
    chunks = [gold[i::4] for i in range(4)] + [wrong[i::4] for i in range(4)]
    results = local_ray.get([task.remote(verifier, chunk, threads) for chunk, threads
                             in zip(chunks, [1, 4, 1, 4, 1, 4, 1, 4])], timeout=300)
    verdicts = [Verdict.from_dict(item) for batch in results for item in batch]
    outcomes = [v.outcome.value for v in verdicts]
    assert outcomes == ["certified"] * len(gold) + ["refuted"] * len(wrong), [v.reason for v in verdicts
                                                                              if v.invalid]
