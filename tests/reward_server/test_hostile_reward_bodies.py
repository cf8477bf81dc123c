"""The OpenRLHF reward server against the hostile corpus of tests/_hostile.py, class by class: never a 5xx,
always a strict JSON body without a traceback; a refusal is a 422 naming the field (a label's own JSON past
the limits names the label), anything else is scored normally: one finite reward, score and log per item."""

import asyncio
import math

import httpx
import pytest
from _hostile import CLASSES, VALID, by_class, misbehaviour, reward_corpus

from proofgym.integrations import domain_run_config
from proofgym.reward_server import create_reward_app

from integrations._support import rows_and_gold


def _scored(data):
    """Why a 200's body is not one item scored normally, or ``None``."""
    if not isinstance(data, dict) or set(data) < {"rewards", "scores", "extra_logs"}:
        return f"not a reward response: {data!r:.200}"
    values = [*data["rewards"], *data["scores"], *(value for log in data["extra_logs"].values() for value in log)]
    lengths = {len(data["rewards"]), len(data["scores"]), *(len(log) for log in data["extra_logs"].values())}
    if lengths != {1} or not all(isinstance(v, float) and math.isfinite(v) for v in values):
        return f"not one finite reward, score and log per item: {data!r:.200}"
    return None


async def _send_all(app, corpus):
    results = {}
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://reward-server",
                                 headers={"Content-Type": "application/json"}) as client:
        for kind, cases in corpus.items():
            failures = []
            for case in cases:
                response = await client.post("/get_reward", content=case.body)
                problem = misbehaviour(case, response.status_code, response.headers.get("content-type", ""),
                                       response.content)
                if problem is None and response.status_code == 200:
                    problem = _scored(response.json())
                if problem is None and kind == VALID and response.json()["scores"] != [1.0]:
                    problem = f"the gold completion is not scored correct: {response.text[:200]}"
                if problem is not None:
                    failures.append(f"{case.name}: {problem}")
            results[kind] = (len(cases), failures)
    return results


@pytest.fixture(scope="module")
def results():
    rows, gold = rows_and_gold(1)
    reward_fn = domain_run_config("grant_eligibility").reward_function()
    try:
        corpus = reward_corpus(rows[0]["prompt"], gold[0], rows[0]["gold"], rows[0]["source_facts"])
        return asyncio.run(_send_all(create_reward_app(reward_fn), by_class(corpus)))
    finally:
        reward_fn.close()


@pytest.mark.parametrize("kind", [VALID, *CLASSES])
def test_every_hostile_body_is_refused_naming_its_field_or_scored(results, kind):
    tried, failures = results[kind]
    assert tried, f"no {kind} cases"
    assert not failures, f"{len(failures)} of {tried} {kind} cases:\n" + "\n".join(failures[:40])
