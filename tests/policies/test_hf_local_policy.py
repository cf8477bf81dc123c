"""The local Hugging Face policy: rendering, seeded generation off the event loop, reading the reply."""

import asyncio

import pytest

from proofgym.policies import HFLocalPolicy, PolicyRequest, build_policy
from proofgym.rollouts import run_rollout

from ._support import COMPILE, MESSAGES

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def act(policy, request):
    return asyncio.run(policy.act(request))


def forced(tokenizer, text):
    """generate() options that make the model write exactly ``text`` and stop."""
    target = tokenizer(text, add_special_tokens=False)["input_ids"]
    state = {"step": 0}

    def allowed(batch_id, input_ids):
        step = state["step"]
        state["step"] += 1
        return [target[step]] if step < len(target) else [tokenizer.eos_token_id]

    return {"prefix_allowed_tokens_fn": allowed}


def test_without_a_chat_template_the_messages_are_rendered_as_plain_turns(tiny_lm):
    model, tokenizer = tiny_lm
    policy = HFLocalPolicy(model, tokenizer)
    prompt = policy.render(PolicyRequest(messages=MESSAGES, tools=[COMPILE]))
    assert not policy.uses_chat_template
    assert prompt.startswith("System: You design hardware.\n\n## Tools")
    assert prompt.endswith("User: Make an AND gate.\n\nAssistant:")
    assert "- compile(): Compile the design." in prompt


def test_a_chat_template_is_used_when_the_tokenizer_has_one(tiny_lm):
    model, tokenizer = tiny_lm
    templated = tokenizer.__class__(tokenizer_object=tokenizer.backend_tokenizer, eos_token="</s>", pad_token="<pad>")
    templated.chat_template = CHAT_TEMPLATE
    policy = HFLocalPolicy(model, templated)
    prompt = policy.render(PolicyRequest(messages=MESSAGES, tools=[]))
    assert policy.uses_chat_template
    assert prompt == "<|system|>You design hardware.\n<|user|>Make an AND gate.\n<|assistant|>"


def test_a_json_call_in_the_output_is_the_action_and_the_call_is_recorded(tiny_lm):
    model, tokenizer = tiny_lm
    call = '{"tool": "compile", "args": {}}'
    policy = HFLocalPolicy(model, tokenizer, max_new_tokens=64, generation_kwargs=forced(tokenizer, call))
    request = PolicyRequest(messages=MESSAGES, tools=[COMPILE], seed=3)
    reply = act(policy, request)
    assert reply.action == {"tool": "compile", "args": {}} and reply.error is None
    assert reply.message == {"role": "assistant", "content": call}
    [event] = reply.lm_calls
    prompt_ids = tokenizer(policy.render(request), add_special_tokens=True)["input_ids"]
    assert event.prompt_tokens == len(prompt_ids)
    assert event.completion_tokens == len(tokenizer(call, add_special_tokens=False)["input_ids"]) + 1  # + eos
    assert event.response == {"text": call, "finish_reason": "stop"} and event.latency_s > 0


def test_greedy_and_seeded_sampling_are_reproducible(tiny_lm):
    model, tokenizer = tiny_lm
    request = PolicyRequest(messages=MESSAGES, tools=[], seed=5)
    greedy = HFLocalPolicy(model, tokenizer, max_new_tokens=12)
    assert act(greedy, request).action == act(greedy, request).action
    sampler = HFLocalPolicy(model, tokenizer, max_new_tokens=12, temperature=1.0, seed=11)
    texts = [act(sampler, PolicyRequest(messages=MESSAGES, tools=[], seed=s)).action for s in (1, 2, 3, 1)]
    assert texts[0] == texts[3]
    assert len(set(texts)) > 1  # the rollout's seed changes the sample


def test_random_output_is_an_error_for_the_agent_when_a_tool_call_is_needed(tiny_lm):
    model, tokenizer = tiny_lm
    reply = act(HFLocalPolicy(model, tokenizer, max_new_tokens=8), PolicyRequest(messages=MESSAGES, tools=[COMPILE]))
    assert reply.action is None and not reply.unavailable
    assert "no tool call found" in reply.error and "cut off at max_new_tokens" in reply.error
    assert reply.lm_calls[0].completion_tokens == 8


def test_a_prompt_longer_than_the_context_is_an_unavailable_reply(tiny_lm):
    model, tokenizer = tiny_lm
    long = [{"role": "user", "content": "The applicant is 17 years old. " * 1500}]
    reply = act(HFLocalPolicy(model, tokenizer, max_new_tokens=8), PolicyRequest(messages=long, tools=[]))
    assert reply.unavailable and "exceeds the model's context of 4096" in reply.error


def test_build_policy_loads_a_saved_model_from_its_path(tiny_lm, tmp_path):
    model, tokenizer = tiny_lm
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    policy = build_policy("local", {"model": str(tmp_path), "max_new_tokens": 6})
    assert isinstance(policy, HFLocalPolicy) and policy.policy_id == f"hf:{tmp_path}"
    reply = act(policy, PolicyRequest(messages=MESSAGES, tools=[], seed=0))
    assert reply.lm_calls[0].completion_tokens <= 6 and isinstance(reply.action, str)


def test_a_rollout_with_the_local_model_runs_end_to_end(tiny_lm):
    model, tokenizer = tiny_lm
    policy = HFLocalPolicy(model, tokenizer, max_new_tokens=8)
    result = asyncio.run(run_rollout("grant_eligibility", seed=0, policy=policy))
    assert result.status == "ok", result.error
    assert result.length == 1
    # Random text is read as the answer: it does not parse, so the episode scores the floor.
    assert result.total_return == -1.0 and result.outcome_score == 0.0
    assert result.session.steps[0].lm_calls[0].completion_tokens == 8


@pytest.mark.parametrize("options, message", [
    ({"max_new_tokens": 0}, "max_new_tokens"),
    ({"temperature": -0.5}, "temperature"),
    ({"top_p": 1.5}, "top_p"),
    ({"generation_kwargs": {"max_new_tokens": 3}}, "generation_kwargs must not set"),
])
def test_invalid_options_are_refused(tiny_lm, options, message):
    model, tokenizer = tiny_lm
    with pytest.raises(ValueError, match=message):
        HFLocalPolicy(model, tokenizer, **options)


def test_a_model_object_needs_its_tokenizer(tiny_lm):
    with pytest.raises(ValueError, match="needs its tokenizer"):
        HFLocalPolicy(tiny_lm[0])
