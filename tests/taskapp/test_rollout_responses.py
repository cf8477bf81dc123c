from proofgym.taskapp import RolloutResponse

from ._support import AND_GATE, ScriptedModelServer, rollout_body, write_file

WRONG = "<reasoning>no</reasoning>\n<decision>{\"classification\": \"permit\", \"facts\": {}}</decision>"


def test_an_oracle_rollout_earns_the_top_outcome_and_is_stored(make_client, stored):
    response = make_client().post("/rollout", json=rollout_body(5, record={"return_trace": True,
                                                                           "trace_format": "full"}))
    assert response.status_code == 200, response.text
    data = RolloutResponse.model_validate(response.json())
    assert data.status == "ok" and not data.aborted and data.error is None
    assert data.metrics.outcome_score == 1.0
    assert data.metrics.mean_return == data.pipeline_metadata.reward_score == data.metrics.episode_returns[0] > 0
    trajectory = data.trajectories[0]
    assert trajectory.length == 1 and trajectory.steps[0].done and trajectory.policy_id == "oracle"
    assert trajectory.steps[0].tool_calls[0]["function"]["name"] == "answer"
    assert trajectory.final["verdict"]["outcome"] == "certified"
    assert data.pipeline_metadata.task_id == trajectory.steps[0].obs["data"]["record_id"]
    session = stored().get_session(data.pipeline_metadata.session_id)
    trace = dict(data.trace)
    assert trace.pop("session_trace")["session_id"] == session.session_id  # the v3 shape, beside
    assert session.to_dict() == trace
    assert session.metadata["mode"] == "eval" and session.metadata["policy_name"] == "oracle"


def test_a_wrong_answer_scores_below_the_oracle(make_client):
    client = make_client()
    oracle = client.post("/rollout", json=rollout_body(1)).json()
    wrong = client.post("/rollout", json=rollout_body(1, policy_name="scripted",
                                                      policy_config={"actions": [WRONG]})).json()
    assert wrong["status"] == "ok" and wrong["metrics"]["outcome_score"] == 0.0
    assert wrong["metrics"]["mean_return"] < oracle["metrics"]["mean_return"]


def test_the_trace_comes_back_only_when_asked_and_in_the_format_asked(make_client):
    client = make_client()
    assert client.post("/rollout", json=rollout_body()).json()["trace"] is None
    compact = client.post("/rollout", json=rollout_body(record={"return_trace": True})).json()["trace"]
    assert compact["format"] == "compact" and compact["num_steps"] == 1 and "steps" not in compact
    full = client.post("/rollout", json=rollout_body(record={"return_trace": True, "trace_format": "full"}))
    assert len(full.json()["trace"]["steps"]) == 1


def test_steps_can_be_left_out_of_the_response(make_client):
    data = make_client().post("/rollout", json=rollout_body(record={"trajectories": False})).json()
    assert data["trajectories"][0]["steps"] == [] and data["trajectories"][0]["length"] == 1


def test_the_turn_limit_of_the_request_applies(make_client, stored):
    actions = [write_file(AND_GATE, f"f{i}.v") for i in range(3)]
    body = rollout_body(policy_name="scripted", policy_config={"actions": actions}, max_turns=2)
    data = make_client("verilog").post("/rollout", json=body).json()
    trajectory = data["trajectories"][0]
    assert trajectory["length"] == 2 and trajectory["steps"][-1]["truncated"] is True
    assert data["metrics"]["outcome_score"] == 0.0
    assert stored().get_session(data["pipeline_metadata"]["session_id"]).steps[-1].truncated


def test_the_env_id_and_policy_id_of_the_request_are_echoed(make_client):
    body = rollout_body()
    body["env"]["env_id"] = "env-7"
    body["policy"]["policy_id"] = "my-policy"
    data = make_client().post("/rollout", json=body).json()
    assert data["trajectories"][0]["env_id"] == "env-7"
    assert data["trajectories"][0]["policy_id"] == data["pipeline_metadata"]["policy_id"] == "my-policy"


def test_a_rollout_past_its_time_budget_is_a_stored_timeout(make_client, stored):
    answer = [{"tool": "answer", "args": {"completion": WRONG}}]
    with ScriptedModelServer(answer, delay_s=2.0) as model:
        body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": model.url},
                            safety={"max_time_s": 0.3})
        data = make_client().post("/rollout", json=body).json()
    assert data["status"] == "timeout" and data["aborted"] is True and "budget" in data["error"]
    assert data["metrics"]["outcome_score"] is None
    assert stored().get_session(data["pipeline_metadata"]["session_id"]).status == "timeout"


def test_the_app_caps_the_time_budget_a_request_asks_for(make_client):
    answer = [{"tool": "answer", "args": {"completion": WRONG}}]
    with ScriptedModelServer(answer, delay_s=2.0) as model:
        body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": model.url},
                            safety={"max_time_s": 3600})
        data = make_client(max_time_s=0.3).post("/rollout", json=body).json()
    assert data["status"] == "timeout"


def test_an_unreachable_model_is_an_error_rollout_not_a_crash(make_client, stored):
    body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": "http://127.0.0.1:9/v1",
                                                             "max_retries": 0})
    data = make_client().post("/rollout", json=body).json()
    assert data["status"] == "error" and data["aborted"] and data["error"]
    assert stored().get_session(data["pipeline_metadata"]["session_id"]).status == "error"


def test_model_calls_and_tokens_are_in_the_trace(make_client):
    answer = [{"tool": "answer", "args": {"completion": WRONG}}]
    with ScriptedModelServer(answer) as model:
        body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": model.url},
                            record={"return_trace": True})
        trace = make_client().post("/rollout", json=body).json()["trace"]
    assert trace["lm_calls"] == 1 and trace["prompt_tokens"] == 100 and trace["completion_tokens"] == 20


def test_task_info_shows_the_seeds_task_as_the_agent_sees_it(make_client):
    client = make_client("verilog")
    info = client.get("/task_info", params={"seed": 2}).json()
    assert info["task_id"] == info["observation"]["data"]["problem_id"]
    assert [tool["function"]["name"] for tool in info["tools"]] == ["write_file", "compile", "simulate", "submit"]
    assert "RefModule" not in info["observation"]["text"]
    assert client.get("/task_info", params={"seed": 2}).json() == info


def test_task_info_rejects_a_bad_seed(make_client):
    client = make_client()
    for seed in ("-1", "x", "1.5"):
        response = client.get("/task_info", params={"seed": seed})
        assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["query", "seed", 0]
    assert client.get("/task_info", params=[("seed", 0)] * 65).status_code == 422


def test_info_lists_the_environment_tools_and_limits(make_client):
    info = make_client(max_concurrency=3).get("/info").json()
    assert info["env_name"] == "grant_eligibility" and info["tools"][0]["function"]["name"] == "answer"
    assert info["limits"]["max_concurrency"] == 3 and info["auth"] is True
    assert "hf" not in info["policies"] and "oracle" in info["policies"]


def test_a_rollout_the_environment_cannot_judge_is_invalid_with_the_reason_not_a_silent_zero(make_client, stored):
    client = make_client("verilog", env_config={"problem_id": "Prob001_and_gate",
                                                "judge": {"iverilog": "/nonexistent/iverilog"}})
    data = client.post("/rollout", json=rollout_body(0)).json()
    assert data["status"] == "ok" and data["metrics"]["outcome_score"] is None
    reason = data["metrics"]["invalid_reason"]
    assert reason.startswith("iverilog not installed; ") and "apt-get install -y iverilog bubblewrap" in reason
    final, last = data["trajectories"][0]["final"], data["trajectories"][0]["steps"][-1]
    assert final["invalid_reason"] == reason and final["verdict"]["outcome"] == "invalid"
    assert last["info"]["outcome"] == "invalid" and last["info"]["reason"] == reason
    assert stored().get_session(data["pipeline_metadata"]["session_id"]).outcome_reward.score is None


def test_a_judged_rollout_has_no_invalid_reason(make_client):
    data = make_client().post("/rollout", json=rollout_body(0)).json()
    assert data["metrics"]["outcome_score"] == 1.0 and data["metrics"]["invalid_reason"] is None
