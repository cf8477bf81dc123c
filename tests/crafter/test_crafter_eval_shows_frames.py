"""A Crafter eval with ``use_vision``: the rendered frame arrives at the model server as an ``image_url`` content
part, from a local eval and through a task app; ``image_only_mode`` sends no text view; a text-only policy asked
for frames is refused, naming the key."""

from __future__ import annotations

import base64

import pytest
from evaluation._support import ThreadedTaskApp
from taskapp._support import ScriptedModelServer, only_environment_api_key

from proofgym.evaluation import EvalError, parse_eval_config, run_eval
from proofgym.policies import read_frame
from proofgym.policies._frames import FRAME_INSTRUCTION
from proofgym.traces import TraceStore

pytest.importorskip("crafter", reason="needs the crafter package: pip install 'proofgym[crafter]'")
KEY = "crafter-vision-key"
MOVES = [{"tool": "interact_many", "args": {"actions": ["move_left", "do"]}}]
ENV_CONFIG = {"use_vision": True, "max_turns": 2, "env_params": {"max_steps_per_episode": 20}}


@pytest.fixture
def model():
    with ScriptedModelServer(MOVES) as served:
        yield served


@pytest.fixture(scope="module")
def task_app(tmp_path_factory):
    traces = tmp_path_factory.mktemp("crafter-vision-app") / "app.db"
    with ThreadedTaskApp("crafter", api_key=KEY, store=traces, env_config=ENV_CONFIG) as served:
        yield served


@pytest.fixture(autouse=True)
def key(monkeypatch):
    only_environment_api_key(monkeypatch, KEY)


def section(tmp_path, model_url, *, task_app=None, policy_name="openai", **policy_config):
    where = {"task_app_url": task_app.url} if task_app is not None else {"env_config": ENV_CONFIG}
    return parse_eval_config({"evaluation": {
        "env_name": "crafter", "policy_name": policy_name, "seeds": [0, 1], "traces": str(tmp_path / "t.db"),
        **where, "policy_config": {"model": "m", "inference_url": model_url, **policy_config}}}).evaluation


def shown_frame(message):
    """The frame in a user message's image part, checked (a 64 x 64 PNG)."""
    [part] = [part for part in message["content"] if part["type"] == "image_url"]
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    frame = read_frame(url.removeprefix("data:image/png;base64,"))
    assert base64.b64decode(frame.encoded).startswith(b"\x89PNG") and (frame.width, frame.height) == (64, 64)
    return frame


@pytest.mark.parametrize("remote", [False, True], ids=["local", "task-app"])
def test_use_vision_sends_every_turns_frame_beside_its_text(model, task_app, tmp_path, remote):
    where = "the task app's env config"
    config = section(tmp_path, model.url, task_app=task_app if remote else None, use_vision=True)
    # Rendering frames is the environment's config: here this file's, there the task app's.
    assert [where in line for line in config.warnings()] == ([True] if remote else [])
    report = run_eval(config)
    assert [r.status for r in report.results] == ["ok", "ok"] and all(r.num_steps == 2 for r in report.results)
    assert len(model.bodies) == 4  # 2 seeds x 2 turns
    for body in model.bodies:
        last = body["messages"][-1]
        assert last["role"] == "user" and [part["type"] for part in last["content"]] == ["text", "image_url"]
        assert "Map (5x5, north up, @ is you):" in last["content"][0]["text"]
        shown_frame(last)
        # Only the current observation carries a frame: the history is text.
        assert all(isinstance(m["content"], str) for m in body["messages"][:-1])
    if not remote:
        # The trace keeps the frame once: the request's copy names where the observation's is.
        with TraceStore(tmp_path / "t.db") as store:
            sessions = [store.get_session(r.session_id) for r in report.results]
        for session in sessions:
            for step in session.steps:
                [call] = step.lm_calls
                [url] = [part["image_url"]["url"] for m in call.request["messages"] if isinstance(m["content"], list)
                         for part in m["content"] if part["type"] == "image_url"]
                where = "steps[0].observation" if step.index == 0 else f"steps[{step.index - 1}].env_event.result"
                assert url == f"proofgym-frame:{where}.data.image_png_base64"


def test_image_only_mode_sends_the_frame_and_no_text_view(model, tmp_path):
    report = run_eval(section(tmp_path, model.url, image_only_mode=True))
    assert [r.status for r in report.results] == ["ok", "ok"]
    for body in model.bodies:
        last = body["messages"][-1]
        assert last["content"][0] == {"type": "text", "text": FRAME_INSTRUCTION} and len(last["content"]) == 2
        shown_frame(last)
        assert "Map (5x5" not in str(body["messages"]) and "Inventory:" not in str(body["messages"])
        # The rules and the actions still reach the model: they are the system message, not a view.
        first = body["messages"][0]
        assert first["role"] == "system" and "interact_many" in first["content"] and "Map legend" in first["content"]


def test_a_text_only_policy_asked_for_frames_is_refused_naming_the_key(model, task_app, tmp_path):
    with pytest.raises(EvalError, match="evaluation.policy_config: policy 'crafter-random': use_vision: this policy "
                                        "shows its model the observation's text only"):
        run_eval(section(tmp_path, model.url, policy_name="crafter-random", use_vision=True))
    report = run_eval(section(tmp_path, model.url, task_app=task_app, policy_name="scripted", use_vision=True,
                              actions=MOVES))
    assert {r.status for r in report.results} == {"failed"} and model.bodies == []
    for result in report.results:
        assert "HTTP 422" in result.error and "['body', 'policy', 'config', 'use_vision']" in result.error
        assert "this policy shows its model the observation's text only" in result.error


def test_without_use_vision_in_the_env_config_the_eval_turns_the_frames_on(model, tmp_path):
    config = parse_eval_config({"evaluation": {"env_name": "crafter", "policy_name": "openai", "seeds": [0],
                                         "traces": str(tmp_path / "t.db"),
                                         "env_config": {"max_turns": 1, "env_params": {"max_steps_per_episode": 20}},
                                         "policy_config": {"model": "m", "inference_url": model.url,
                                                           "use_vision": True}}}).evaluation
    assert config.env_config["use_vision"] is True
    assert config.warnings() == ["evaluation.env_config: use_vision = true (set for policy_config.use_vision: the "
                                 "environment renders the frame the model is shown)"]
    report = run_eval(config)
    assert [r.status for r in report.results] == ["ok"]
    [body] = model.bodies
    shown_frame(body["messages"][-1])


def test_an_explicit_use_vision_false_in_the_env_config_is_kept_and_warned_about(model, tmp_path):
    config = parse_eval_config({"evaluation": {"env_name": "crafter", "policy_name": "openai", "seeds": [0],
                                         "env_config": {"use_vision": False},
                                         "policy_config": {"model": "m", "inference_url": model.url,
                                                           "use_vision": True}}}).evaluation
    assert config.env_config == {"use_vision": False}
    [line] = config.warnings()
    assert line.startswith("evaluation.policy_config: use_vision shows the model the observation's frame")
    assert "use_vision = true in [evaluation.env_config]" in line
