import pytest

from proofgym.envs import Environment, StepResult
from ._support import CounterEnv

ADD_ONE = {"tool": "add", "args": {"n": 1}}


def test_a_tool_env_is_an_environment():
    assert isinstance(CounterEnv(), Environment)


def test_step_result_unpacks_as_observation_reward_done_info():
    with CounterEnv() as env:
        env.reset(1)
        result = env.step(ADD_ONE)
        observation, reward, done, info = result
    assert isinstance(result, StepResult)
    assert (observation, reward, done, info) == (result.observation, result.reward, result.done, result.info)
    assert result.truncated is False


def test_the_turn_limit_truncates_and_ends_the_episode():
    with CounterEnv(max_turns=3) as env:
        env.reset(10)
        results = [env.step(ADD_ONE), env.step("garbage"), env.step(ADD_ONE)]
        assert [(r.done, r.truncated) for r in results] == [(False, False), (False, False), (True, True)]
        assert [r.info["turn"] for r in results] == [1, 2, 3]
        with pytest.raises(RuntimeError):
            env.step(ADD_ONE)


def test_a_terminal_action_on_the_last_turn_is_done_not_truncated():
    with CounterEnv(max_turns=1) as env:
        env.reset(0)
        result = env.step({"tool": "finish"})
    assert result.done and not result.truncated and result.reward == 1.0


def test_reward_is_the_sum_of_components_with_the_step_penalty():
    with CounterEnv(step_penalty=0.25) as env:
        env.reset(0)
        result = env.step({"tool": "finish"})
    assert result.info["reward_components"] == {"finish": 1.0, "step_penalty": -0.25}
    assert result.reward == 0.75


def test_reset_starts_a_fresh_episode():
    with CounterEnv(max_turns=1) as env:
        env.reset(0)
        env.step(ADD_ONE)
        assert env.reset(5).data == {"target": 5}
        assert env.step(ADD_ONE).info["turn"] == 1


def test_calling_loop_bugs_raise():
    env = CounterEnv()
    with pytest.raises(RuntimeError):
        env.step(ADD_ONE)
    with pytest.raises(TypeError):
        env.reset("1")
    env.close()
    with pytest.raises(RuntimeError):
        env.reset(0)


def test_close_is_idempotent_and_runs_the_hook_once():
    env = CounterEnv()
    with env:
        env.reset(0)
    env.close()
    assert env.closed_count == 1


@pytest.mark.parametrize("kwargs", [{"max_turns": 0}, {"step_penalty": -0.1}, {"step_penalty": float("nan")}])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        CounterEnv(**kwargs)
