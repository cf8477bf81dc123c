"""Run configs are validated strictly in every section: ``true`` is not 1, ``"3"`` is not 3 (YAML reads
``max_concurrency: true`` as a boolean, and a lax validator turned it into one verifier call at a time)."""

import pytest

from proofgym.config import ConfigError, parse_run_config

TRAIN = {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility"}}


def config(**sections):
    return {"verifier": {"kind": "rulebook", "domain": "grant_eligibility"}, **sections}


@pytest.mark.parametrize("sections, line", [
    ({"runtime": {"max_concurrency": True}}, "runtime.max_concurrency: Input should be a valid integer, got true"),
    ({"runtime": {"timeout_s": True}}, "runtime.timeout_s: Input should be a valid number, got true"),
    ({"runtime": {"retries": "3"}}, 'runtime.retries: Input should be a valid integer, got "3"'),
    ({"runtime": {"batch_size": 4.0}}, "runtime.batch_size: Input should be a valid integer, got 4.0"),
    ({"parser": {"limits": {"max_facts": False}}},
     "parser.limits.max_facts: Input should be a valid integer, got false"),
    ({"parser": {"require_facts": 1}}, "parser.require_facts: Input should be a valid boolean, got 1"),
    ({"error_budget": {"max_invalid_share": True}},
     "error_budget.max_invalid_share: Input should be a valid number, got true"),
    ({"reward": {"floor": True}}, "reward.floor: Input should be a valid number, got true"),
    ({"training": {**TRAIN, "grpo": {"steps": True}}},
     "training.grpo.steps: Input should be a valid integer, got true"),
    ({"training": {**TRAIN, "lora": {"r": True}}}, "training.lora.r: Input should be a valid integer, got true"),
    ({"training": {**TRAIN, "seed": True}}, "training.seed: Input should be a valid integer, got true"),
    ({"training": {**TRAIN, "use_vllm": 3}}, "training.use_vllm: Input should be 'auto' or a valid boolean, got 3"),
    ({"parser": {"decisions": ["permit", 1]}}, "parser.decisions[1]: Input should be a valid string, got 1"),
    ({"reward": {"on_invalid": "zero"}},
     "reward.on_invalid: Input should be 'abstain', 'floor' or 'raise', got \"zero\""),
])
def test_a_boolean_or_a_string_for_a_number_is_refused_with_its_key(sections, line):
    with pytest.raises(ConfigError) as info:
        parse_run_config(config(**sections), source="run.yaml")
    assert str(info.value) == f"run.yaml: {line}"


@pytest.mark.parametrize("verifier, line", [
    ({"kind": "python", "function": "proofgym.domains.grant_rules:verify", "uses_decision": 1},
     "verifier.uses_decision: Input should be a valid boolean, got 1"),
    ({"kind": "ambertrace", "platform_id": 3, "request_timeout_s": True},
     "verifier.request_timeout_s: Input should be a valid number, got true"),
    ({"kind": "verilog", "timeout_s": True}, "verifier.timeout_s: Input should be a valid number, got true"),
    ({"kind": "verilog", "cpu_s": "20"}, 'verifier.cpu_s: Input should be a valid integer, got "20"'),
])
def test_verifier_options_are_strict_too_and_named_under_verifier(verifier, line):
    with pytest.raises(ConfigError) as info:
        parse_run_config({"verifier": verifier}, source="run.yaml")
    assert str(info.value) == f"run.yaml: {line}"


def test_every_problem_is_one_line_naming_the_file():
    with pytest.raises(ConfigError) as info:
        parse_run_config(config(runtime={"max_concurrency": True, "retries": -1}, bogus=1), source="run.yaml")
    assert str(info.value).splitlines() == [
        "run.yaml: runtime.max_concurrency: Input should be a valid integer, got true",
        "run.yaml: runtime.retries: Input should be greater than or equal to 0",
        "run.yaml: bogus: unknown key",
    ]
    assert [problem["loc"] for problem in info.value.problems] == [
        ("runtime", "max_concurrency"), ("runtime", "retries"), ("bogus",)]


def test_numbers_of_the_right_type_still_load():
    run = parse_run_config(config(runtime={"max_concurrency": 4, "timeout_s": 10}, reward={"floor": -1}))
    assert run.runtime.max_concurrency == 4 and run.runtime.timeout_s == 10.0 and run.reward.floor == -1.0
