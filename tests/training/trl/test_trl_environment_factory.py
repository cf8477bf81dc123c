"""proofgym environments through TRL 1.16's environment_factory: tool methods, rows, episode returns."""

import inspect
import json

import pytest

pytest.importorskip("trl")

from _judge import requires_judge  # noqa: E402

from proofgym.training import trl_environment  # noqa: E402

from integrations._support import flip_decision  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")


@pytest.fixture(scope="module")
def grant():
    bridge = trl_environment("grant_eligibility")
    yield bridge
    bridge.close()


def _gold_for(bridge, seed):
    from proofgym.domains import get_domain, gold_completion

    env = bridge.factory()
    env.reset(seed=seed)
    return gold_completion(get_domain("grant_eligibility"), env._env.record)


def test_each_tool_becomes_a_typed_documented_method_trl_renders_back_to_its_schema(grant):
    from transformers.utils import get_json_schema

    method = grant.factory.answer
    assert str(inspect.signature(method)) == "(self, *, completion: str) -> str"
    schema = get_json_schema(method)["function"]
    assert schema["name"] == "answer"
    assert schema["parameters"]["required"] == ["completion"]
    assert schema["parameters"]["properties"]["completion"]["type"] == "string"
    public = [name for name, _ in inspect.getmembers(grant.factory, predicate=inspect.isfunction)
              if not name.startswith("_")]
    assert sorted(public) == ["answer", "reset"]  # TRL exposes every other public method as a tool
    assert grant.reward_func.__name__ == "grant_eligibility_return"


def test_rows_show_the_observation_of_each_seed_and_never_the_gold(grant):
    rows = grant.rows(range(4))
    assert [row["seed"] for row in rows] == [0, 1, 2, 3]
    assert rows[0]["prompt"][0]["role"] == "system" and rows[0]["prompt"][-1]["role"] == "user"
    assert len({row["prompt"][-1]["content"] for row in rows}) == 4
    assert all("gold" not in row for row in rows)


def test_an_answer_through_the_tool_earns_the_episode_return(grant):
    env = grant.factory()
    env.reset(seed=3, prompt=[])
    gold = _gold_for(grant, 3)
    observation = env.answer(completion=gold)
    assert observation.startswith("Answer scored: certified")
    assert env.answer(completion=gold) == "The episode is over: no more tool calls are accepted."
    [reward] = grant.reward_func(completions=[[{"role": "assistant", "content": "ignored, already answered"}]],
                                 environments=[env])
    assert reward == pytest.approx(env._env.reward_function.shaper.bounds[1])


def test_a_plain_text_answer_is_scored_and_an_empty_one_is_the_floor(grant):
    envs = [grant.factory() for _ in range(3)]
    for env in envs:
        env.reset(seed=5)
    gold = _gold_for(grant, 5)
    completions = [[{"role": "assistant", "content": gold}], [{"role": "assistant", "content": flip_decision(gold)}],
                   [{"role": "assistant", "content": ""}]]
    right, wrong, empty = grant.reward_func(completions=completions, environments=envs)
    assert right > wrong > empty == -1.0


def test_rows_need_an_integer_seed_and_the_reward_needs_trls_environments(grant):
    env = grant.factory()
    with pytest.raises(ValueError, match="integer 'seed' column"):
        env.reset(prompt="x")
    with pytest.raises(ValueError, match="needs TRL's 'environments'"):
        grant.reward_func(completions=["x"])


def test_instances_share_one_reward_function(grant):
    first, second = grant.factory(), grant.factory()
    assert first._env.reward_function is second._env.reward_function


def test_a_qwen_tool_call_parsed_by_trl_runs_the_tool(grant):
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import add_response_schema, parse_response, qwen2_5_chat_template

    from proofgym.policies._tiny import _train_tokenizer

    tokenizer = PreTrainedTokenizerFast(tokenizer_object=_train_tokenizer(["<tool_call> answer completion"], 300),
                                        eos_token="</s>", pad_token="<pad>")
    tokenizer.chat_template = qwen2_5_chat_template
    add_response_schema(tokenizer)
    gold = _gold_for(grant, 7)
    # What the model would write after the chat template's assistant header.
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "decide"}], tools=[grant.factory.answer],
                                           add_generation_prompt=True, tokenize=False)
    text = f'<tool_call>\n{json.dumps({"name": "answer", "arguments": {"completion": gold}})}\n</tool_call><|im_end|>'
    message = parse_response(tokenizer, tokenizer(text, add_special_tokens=False)["input_ids"],
                             prefix=tokenizer(prompt, add_special_tokens=False)["input_ids"],
                             tools=[grant.factory.answer])
    [call] = message["tool_calls"]
    env = grant.factory()
    env.reset(seed=7)
    answer = getattr(env, call["function"]["name"])(**call["function"]["arguments"])
    assert answer.startswith("Answer scored: certified")


def test_a_grpo_step_with_the_environment_factory_on_the_tiny_model(grant, tiny, tmp_path):
    from trl.chat_template_utils import qwen2_5_chat_template

    from proofgym.config import parse_run_config
    from proofgym.domains import default_run_config
    from proofgym.training import build_grpo_trainer

    model, tokenizer = tiny
    tokenizer.chat_template = qwen2_5_chat_template  # a template TRL can render and parse tool calls with
    data = default_run_config("grant_eligibility").model_dump()
    data["training"] = {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility"},
                        "output_dir": str(tmp_path),
                        "grpo": {"group_size": 2, "batch_size": 2, "steps": 1, "max_completion_length": 12}}
    trainer = build_grpo_trainer(parse_run_config(data), model, grant.rows(range(8)), tokenizer=tokenizer,
                                 extra_reward_funcs=[grant.reward_func], environment_factory=grant.factory,
                                 config_overrides={"disable_tqdm": True})
    try:
        trainer.train()
    finally:
        trainer.reward_funcs[0].close()
    assert trainer.state.global_step == 1
    log = trainer.state.log_history[0]
    # The tiny model writes no decision block: the environment scores every episode at the floor.
    assert log["rewards/grant_eligibility_return/mean"] == -1.0
    assert "tools/call_frequency" in log


@requires_judge
def test_the_multi_step_verilog_environment_plays_through_its_tools():
    import re

    bridge = trl_environment("verilog")
    try:
        public = sorted(name for name, _ in inspect.getmembers(bridge.factory, predicate=inspect.isfunction)
                        if not name.startswith("_"))
        assert public == ["compile", "reset", "simulate", "submit", "write_file"]
        env = bridge.factory()
        env.reset(seed=0)
        design = re.sub(r"\bRefModule\b", "TopModule", env._env.problem.reference)
        assert env.write_file(path="top.v", content=design).startswith("Wrote top.v")
        env.submit()
        [solved] = bridge.reward_func(completions=["done"], environments=[env])
        broken = bridge.factory()
        broken.reset(seed=0)
        broken.write_file(path="top.v", content="module TopModule(); endmodule")
        broken.submit()
        [failed] = bridge.reward_func(completions=["done"], environments=[broken])
        assert solved > failed
        # A completion that never submits is not given the text as an answer: Verilog takes tool calls only.
        idle = bridge.factory()
        idle.reset(seed=0)
        assert bridge.reward_func(completions=["module TopModule..."], environments=[idle]) == [0.0]
    finally:
        bridge.close()
