"""The reference's own client, unmodified, against a real ``proofgym serve``: synth-ai 0.2.14's ``TaskAppClient``,
its pydantic contracts (``TaskInfo``, ``RolloutRequest``, ``RolloutResponse``), its RL validator and
trace-correlation helpers, its trace loader and storage, ``synth-ai task-app validate`` and ``synth-ai eval``.

synth-ai runs in a venv of its own (built once and cached, see ``_synth_ai``), each check a subprocess; every
registered environment gets one ``proofgym serve`` (a subprocess on loopback) for the module, and a scripted
OpenAI-compatible model server plays the environment's known-good answer for seed 0 where a model is needed.
"""

from __future__ import annotations

import json
import sqlite3

import httpx
import pytest
from _judge import requires_judge

from proofgym.envs import env_names, make

from ._support import ScriptedModelServer, TaskAppProcess
from ._synth_ai import cli, drive_all, synth_ai_venv

KEY = "synth-ai-compat-key"
ENVS = env_names()


@pytest.fixture(scope="module")
def venv():
    return synth_ai_venv()


# synth-ai's client against one environment by default (crafter's app alone costs about 35 s: its validator and
# checks); `-m slow` runs it against every registered environment (crafter, fact_finding, verilog, loan, math, ...).
CHECKED_BY_DEFAULT = {"grant_eligibility"}


@pytest.fixture(scope="module", params=[pytest.param(name, marks=() if name in CHECKED_BY_DEFAULT else pytest.mark.slow)
                                        for name in ENVS])
def app(request, tmp_path_factory):
    """``proofgym serve ENV`` for each registered environment, with the API key set."""
    traces = tmp_path_factory.mktemp(f"synth-ai-{request.param}") / "app.db"
    with TaskAppProcess(request.param, traces=traces, api_key=KEY) as served:
        served.env_name = request.param
        yield served


@pytest.fixture(scope="module")
def model(app):
    """A model server that answers with the environment's known-good actions for seed 0, one per turn."""
    with make(app.env_name) as env:
        actions = env.oracle_actions(0)
    with ScriptedModelServer(actions) as served:
        yield served


@pytest.fixture(scope="module")
def checked(venv, app, model):
    """Every client-side check against the module's app, run in one synth-ai process."""
    cid_url = f"{model.url}?cid=trace_synth_{app.env_name}"
    return drive_all(venv, app.url, {
        "one": ("task_info", "3"), "many": ("task_info", "0,1,2"), "none": ("task_info", ""),
        "info": ("info", ""), "aliases": ("aliases", f"old-key,{KEY}"),
        "eval": ("rollout", rollout_request(1)),
        "full": ("rollout", rollout_request(1, trace_format="full")),
        "rl": ("rollout", rollout_request(0, mode="rl", policy_name="openai", config={"inference_url": cid_url})),
    }, api_key=KEY)


def result(checked, name):
    """One check's result; a check that raised in synth-ai's code fails the test with its traceback."""
    value = checked[name]
    assert not (isinstance(value, dict) and set(value) == {"error"}), f"synth-ai's {name} check failed:\n" + \
        str(value.get("error"))
    return value


def rollout_request(seed, *, mode="eval", policy_name="oracle", config=None, trace_format="structured"):
    """A rollout request as synth-ai types it: ops as objects, ``policy.config.model`` always set."""
    return {"run_id": f"synth-ai-{seed}-{mode}", "env": {"seed": seed, "config": {}},
            "policy": {"policy_name": policy_name, "config": {"model": "some-model", **(config or {})}},
            "ops": [{"type": "agent"}, {"type": "env"}] * 4, "mode": mode,
            "record": {"return_trace": True, "trace_format": trace_format}}


def test_task_info_answers_synth_ais_client_for_one_seed_many_seeds_and_none(checked, app):
    one = result(checked, "one")
    assert not one["is_list"] and one["infos"][0]["environment"] == app.env_name
    [task] = one["infos"]
    assert task["seed"] == 3 and task["task"]["id"] == task["task_id"] and task["observation"]["text"]
    assert task["tools"] and task["dataset"]["splits"] == ["train", "val", "test"]
    many = result(checked, "many")
    assert many["is_list"] and [info["seed"] for info in many["infos"]] == [0, 1, 2]
    taskset = result(checked, "none")["raw"]["taskset"]
    assert taskset["environment"] == app.env_name and taskset["tools"]


def test_info_validates_as_synth_ais_task_info(checked, app):
    info = result(checked, "info")
    raw = info["raw"]
    assert info["task_info"]["environment"] == app.env_name
    assert {"service", "dataset", "rubrics", "inference", "limits"} <= set(raw)
    assert raw["service"]["task"]["id"] == app.env_name and raw["limits"]["timeout_seconds"] > 0
    assert raw["limits"]["max_concurrency"] >= 1  # proofgym's own keys are still there
    assert "structured" in raw["trace_formats"]


def test_the_root_answers_without_a_key_as_the_reference_server_does(app):
    response = httpx.get(app.url + "/", timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert httpx.get(app.url + "/info", timeout=10).status_code == 401


def test_the_key_may_come_among_synth_ais_aliases(checked, app):
    aliases = result(checked, "aliases")
    assert aliases["env_name"] == app.env_name and "X-API-Keys" in aliases["headers"]


def test_an_eval_rollout_without_an_inference_url_parses_and_its_trace_stores(checked):
    rollout = result(checked, "eval")
    response = rollout["response"]
    trajectory = response["trajectories"][0]
    assert response["metrics"]["details"]["status"] == "ok" and trajectory["inference_url"] == ""
    call = trajectory["steps"][0]["tool_calls"][0]
    assert call["type"] == "function" and isinstance(json.loads(call["function"]["arguments"]), dict)
    session = response["trace"]["session_trace"]
    assert len(session["session_time_steps"]) == trajectory["length"] == len(trajectory["steps"])
    assert session["outcome_rewards"][0]["total_steps"] == trajectory["length"]
    # Stored as synth-ai eval stores it: its loader, then its trace database.
    assert rollout["stored"] == {"session_traces": 1, "session_timesteps": trajectory["length"],
                                "events": 2 * trajectory["length"],
                                "messages": len(session["markov_blanket_message_history"])}


def test_a_full_trace_carries_a_session_trace_synth_ai_stores_with_its_timesteps(checked):
    rollout = result(checked, "full")
    response = rollout["response"]
    trajectory = response["trajectories"][0]
    trace = response["trace"]
    assert trace["steps"] and len(trace["steps"]) == trajectory["length"]  # proofgym's own session
    session = trace["session_trace"]
    assert len(session["session_time_steps"]) == trajectory["length"]
    assert rollout["stored"] == {"session_traces": 1, "session_timesteps": trajectory["length"],
                                "events": 2 * trajectory["length"],
                                "messages": len(session["markov_blanket_message_history"])}


def test_an_rl_rollout_passes_synth_ais_rl_validator_and_correlation_check(checked, app, model):
    url = f"{model.url}?cid=trace_synth_{app.env_name}"
    rollout = result(checked, "rl")
    assert rollout["rl_issues"] == [] and rollout["cid"] == f"trace_synth_{app.env_name}"
    assert rollout["cid_everywhere"] is True
    response = rollout["response"]
    assert all(step["info"]["meta"]["inference_url"] == url for step in response["trajectories"][0]["steps"])
    # The model's calls are in the trace: LM events in their timesteps, and the runtime events' summaries.
    steps = response["trace"]["session_trace"]["session_time_steps"]
    lm_events = [event for step in steps for event in step["events"] if "model_name" in event]
    assert lm_events and all(event["input_tokens"] for event in lm_events)
    assert rollout["stored"]["session_traces"] == 1 and all(query == f"cid=trace_synth_{app.env_name}"
                                                           for query in model.queries)


# synth-ai's own validator (its CLI, about 10 s a run) on a single-turn and a multi-step environment (fact_finding:
# crafter's app took 3.5 times as long, 165 s against 46 s in one loaded run, and `proofgym serve crafter` is run
# by default in tests/crafter/test_the_reference_crafter_eval_files_run.py); every environment's task app answers
# synth-ai's client checks above, and `-m slow` validates every one.
VALIDATED_BY_DEFAULT = {"grant_eligibility", "fact_finding"}


@pytest.mark.parametrize("app", [pytest.param(name, marks=() if name in VALIDATED_BY_DEFAULT else pytest.mark.slow)
                                 for name in ENVS], indirect=True)
def test_synth_ai_task_app_validate_passes(venv, app, tmp_path):
    done = cli(venv, "task-app", "validate", "proofgym", "--url", app.url, "--api-key", KEY, api_key=KEY,
               cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All validations passed" in done.stdout and "Found 15 task instances" in done.stdout


def _eval_config(app, model, seeds):
    # synth-ai's own eval config: its table is [eval] (proofgym's eval configs are not read here).
    return "\n".join([
        "[eval]",
        f'app_id = "proofgym-{app.env_name}"',
        'model = "scripted-model"',
        f"seeds = {json.dumps(seeds)}",
        f'env_name = "{app.env_name}"',
        'policy_name = "openai"',
        f'inference_url = "{model.url}"',
        'trace_format = "structured"',
        "return_trace = true",
        "concurrency = 2",
        "",
    ])


def _synth_ai_eval(venv, app, model, tmp_path, seeds):
    (tmp_path / "app.env").write_text(f"ENVIRONMENT_API_KEY={KEY}\n")
    (tmp_path / "eval.toml").write_text(_eval_config(app, model, seeds))
    done = cli(venv, "eval", "--url", app.url, "--env-file", "app.env", "--config", "eval.toml",
               "--trace-db", str(tmp_path / "synth.db"), api_key=KEY, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert f"Eval complete: {len(seeds)} ok, 0 failed" in done.stdout, done.stdout[-4000:]
    with sqlite3.connect(tmp_path / "synth.db") as db:
        sessions = [json.loads(row[0]) for row in db.execute("SELECT metadata FROM session_traces")]
        counts = {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608 - fixed names
                  for table in ("session_timesteps", "events", "messages")}
    assert sorted(meta["eval_seed"] for meta in sessions) == seeds
    assert all(meta["status"] == "ok" and meta["env_name"] == app.env_name for meta in sessions)
    assert counts["session_timesteps"] >= len(seeds) and counts["events"] >= 2 * len(seeds)
    assert counts["messages"] >= 3 * len(seeds)


@pytest.mark.parametrize("app", ["grant_eligibility"], indirect=True)
def test_synth_ai_eval_completes_every_seed_and_stores_its_traces_grant_eligibility(venv, app, model, tmp_path):
    _synth_ai_eval(venv, app, model, tmp_path, [0, 1, 2, 3])


@requires_judge
@pytest.mark.slow
@pytest.mark.parametrize("app", ["verilog"], indirect=True)
def test_synth_ai_eval_completes_every_seed_and_stores_its_traces_verilog(venv, app, model, tmp_path):
    _synth_ai_eval(venv, app, model, tmp_path, [0, 1, 2])
