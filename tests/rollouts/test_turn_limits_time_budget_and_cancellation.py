"""Turn limits, the wall-clock budget and cancellation: the session says how it ended, the env is always closed."""

import asyncio
import time

import pytest

from _bounds import CUT_OFF_S
from proofgym.policies import PolicyReply, ScriptedPolicy
from proofgym.rollouts import run_rollout
from proofgym.traces import LMCallEvent

from ._support import CounterEnv, RecordingPolicy, call, sleep_forever

ADD = {"tool": "add", "args": {"n": 1}}


def test_the_environments_own_turn_limit_truncates_the_episode(counter_env):
    result = asyncio.run(run_rollout(counter_env, seed=9, policy=ScriptedPolicy([ADD] * 10),
                                     env_config={"max_turns": 3}))
    assert result.length == 3 and result.session.steps[-1].truncated and result.session.steps[-1].done
    assert result.status == "ok" and result.outcome_score == 0.0


def test_max_turns_cuts_the_rollout_short_and_marks_the_last_step_truncated(counter_env):
    result = asyncio.run(run_rollout(counter_env, seed=9, policy=ScriptedPolicy([ADD] * 10), max_turns=2))
    last = result.session.steps[-1]
    assert result.length == 2 and last.truncated and last.done and last.env_event.truncated
    assert result.status == "ok" and result.outcome_score == 0.0
    assert CounterEnv.instances[0].closed_at is not None


def test_a_slow_policy_runs_into_the_time_budget(counter_env):
    started = time.monotonic()
    result = asyncio.run(run_rollout(counter_env, seed=1, policy=RecordingPolicy([call(ADD), sleep_forever]),
                                     max_time_s=0.3))
    assert time.monotonic() - started < CUT_OFF_S  # the policy sleeps forever
    assert result.status == "timeout" and "wall-clock budget of 0.3 s" in result.error
    assert result.length == 1 and result.session.steps[0].truncated and result.outcome_score is None
    assert CounterEnv.instances[0].closed_at is not None


def test_a_step_still_running_at_the_deadline_finishes_before_the_environment_closes(counter_env):
    started = time.monotonic()
    result = asyncio.run(run_rollout(counter_env, seed=1, max_time_s=0.2,
                                     policy=ScriptedPolicy([{"tool": "wait", "args": {"s": 8}}])))
    returned = time.monotonic()
    assert result.status == "timeout" and returned - started < 0.7  # the rollout did not wait for the step
    env = CounterEnv.instances[0]
    deadline = time.monotonic() + 5
    while env.closed_at is None and time.monotonic() < deadline:
        time.sleep(0.02)
    # close() ran after the 0.8 s step, on the environment's own worker thread: never during the step.
    assert env.closed_at is not None and env.closed_at - started >= 0.75
    assert all(name.startswith("proofgym-env") for name in env.step_threads)


def test_cancellation_closes_the_environment_records_cancelled_and_re_raises(counter_env):
    finished = []

    async def main():
        task = asyncio.create_task(run_rollout(counter_env, seed=1, on_finish=finished.append,
                                               policy=RecordingPolicy([call(ADD), sleep_forever])))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    [result] = finished
    assert result.status == "cancelled" and result.length == 1 and result.outcome_score is None
    assert CounterEnv.instances[0].closed_at is not None


def test_on_finish_sees_every_ending_and_its_errors_are_contained(counter_env):
    seen = []

    def on_finish(result):
        seen.append(result.status)
        raise RuntimeError("listener bug")

    result = asyncio.run(run_rollout(counter_env, seed=0, policy=ScriptedPolicy([{"tool": "finish"}]),
                                     on_finish=on_finish))
    assert seen == ["ok"] and result.outcome_score == 1.0


def test_an_environment_still_being_built_when_cancelled_is_closed_once_built():
    from proofgym.envs import register_env
    from proofgym.envs import ENVIRONMENTS

    def slow_factory(**config):
        time.sleep(0.3)
        return CounterEnv(**config)

    CounterEnv.instances = []
    register_env("slow-build-rollout-test", slow_factory)

    async def main():
        task = asyncio.create_task(run_rollout("slow-build-rollout-test", seed=1, policy=ScriptedPolicy([])))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
        deadline = time.monotonic() + 5
        while not (CounterEnv.instances and CounterEnv.instances[0].closed_at) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        ENVIRONMENTS.unregister("slow-build-rollout-test")
    assert CounterEnv.instances[0].closed_at is not None


def _model_call(action, attempts=1):
    """A reply as a model-backed policy makes it: ``attempts`` recorded HTTP attempts (retries) for one call."""
    return PolicyReply(action, {"role": "assistant", "content": str(action)},
                       lm_calls=[LMCallEvent(model="m", prompt_tokens=1, completion_tokens=1)] * attempts)


def test_max_lm_calls_ends_the_episode_truncated_once_the_model_was_called_that_often(counter_env):
    policy = RecordingPolicy([_model_call(ADD), _model_call(ADD, attempts=3), _model_call(ADD)])
    result = asyncio.run(run_rollout(counter_env, seed=9, policy=policy, max_lm_calls=2))
    last = result.session.steps[-1]
    assert len(policy.requests) == 2  # the third call was never made; a retried call counts once
    assert result.length == 2 and last.truncated and last.done and last.env_event.truncated
    assert result.status == "ok" and result.outcome_score == 0.0
    assert CounterEnv.instances[0].closed_at is not None


def test_max_lm_calls_does_not_stop_an_episode_that_ends_first_or_a_policy_that_calls_no_model(counter_env):
    finish = {"tool": "finish", "args": {}}
    result = asyncio.run(run_rollout(counter_env, seed=1, policy=RecordingPolicy(
        [_model_call(ADD), _model_call(finish)]), max_lm_calls=2))
    assert result.length == 2 and not result.session.steps[-1].truncated and result.outcome_score == 1.0
    scripted = asyncio.run(run_rollout(counter_env, seed=2, policy=ScriptedPolicy([ADD, ADD, finish]),
                                       max_lm_calls=1))
    assert scripted.length == 3 and scripted.outcome_score == 1.0


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_max_lm_calls_must_be_a_positive_integer(counter_env, bad):
    with pytest.raises(ValueError, match="max_lm_calls"):
        asyncio.run(run_rollout(counter_env, seed=1, policy=ScriptedPolicy([ADD]), max_lm_calls=bad))
