"""An OpenAI-compatible policy in a real rollout over HTTP: tool messages, correlation id, outages not scored."""

import asyncio
import json

import pytest

from proofgym.domains import gold_completion
from proofgym.envs import make
from proofgym.rollouts import run_rollout

from ._server import Reply, payload, with_content
from ._support import fast_policy


def gold_for(env_name, seed):
    with make(env_name) as env:
        env.reset(seed)
        return gold_completion(env.domain, env.record)


def rollout(env_name, seed, policy):
    async def run():
        try:
            return await run_rollout(env_name, seed=seed, policy=policy)
        finally:
            await policy.aclose()

    return asyncio.run(run())


def answer_call(completion):
    body = payload("vllm_tool_call_write_file")
    function = body["choices"][0]["message"]["tool_calls"][0]["function"]
    function.update(name="answer", arguments=json.dumps({"completion": completion}))
    return body


def test_a_native_answer_call_is_scored_and_answered_with_a_tool_message(server):
    server.script(Reply(answer_call(gold_for("loan", 6))))
    policy = fast_policy(server, "/v1?cid=trace_loan_6")
    result = rollout("loan", 6, policy)
    assert result.status == "ok" and result.outcome_score == 1.0 and result.total_return == pytest.approx(2.1)
    assert result.session.correlation_id == "trace_loan_6" and server.requests[0].query == "cid=trace_loan_6"
    sent = server.requests[0].body
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert [t["function"]["name"] for t in sent["tools"]] == ["answer"]
    assistant, tool = result.messages[-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "answer"
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    [step] = result.session.steps
    assert step.lm_calls[0].prompt_tokens == 612 and step.env_event.tool == "answer"


def test_a_plain_text_answer_is_the_completion(server):
    server.script(Reply(with_content("vllm_text_answer", gold_for("grant_eligibility", 2))))
    result = rollout("grant_eligibility", 2, fast_policy(server))
    assert result.outcome_score == 1.0 and result.messages[-1]["role"] == "user"


def test_a_server_outage_ends_the_session_in_error_and_is_not_scored(server):
    server.script(*[Reply(payload("vllm_internal_error_500"), status=500)] * 2)
    result = rollout("grant_eligibility", 0, fast_policy(server, max_retries=1))
    assert result.status == "error" and "HTTP 500" in result.error
    assert result.outcome_score is None and result.total_return == 0.0
    assert len(result.session.steps[0].lm_calls) == 2
