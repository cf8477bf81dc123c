import pytest

from proofgym.taskapp import RolloutRequest
from proofgym.taskapp._correlation import correlation_id
from proofgym.taskapp._errors import RequestError

from ._support import ScriptedModelServer, rollout_body


def request(mode="eval", url=None, explicit=None, in_config=None):
    config = {}
    if url is not None:
        config["inference_url"] = url
    if in_config is not None:
        config["trace_correlation_id"] = in_config
    body = {"run_id": "r", "mode": mode, "policy": {"config": config}}
    if explicit is not None:
        body["trace_correlation_id"] = explicit
    return RolloutRequest.model_validate(body)


def test_the_cid_of_the_inference_url_is_the_correlation_id():
    assert correlation_id(request(url="http://h:8000/v1/chat/completions?cid=trace_abc")) == "trace_abc"
    assert correlation_id(request(url="http://h/v1?x=1&trace_correlation_id=t2")) == "t2"


def test_an_explicit_id_works_without_a_url():
    assert correlation_id(request(explicit="t1")) == "t1"
    assert correlation_id(request(in_config="t1", url="http://h/v1?cid=t1")) == "t1"


def test_no_id_is_fine_in_eval_mode():
    assert correlation_id(request(url="http://h/v1")) is None


def test_rl_mode_without_an_id_is_refused():
    with pytest.raises(RequestError) as exc_info:
        correlation_id(request(mode="rl", url="http://h/v1?cid="))
    assert exc_info.value.loc == ("policy", "config", "inference_url")


@pytest.mark.parametrize("kwargs", [{"explicit": "a", "url": "http://h/v1?cid=b"},
                                    {"url": "http://h/v1?cid=a&cid=b"}])
def test_conflicting_ids_are_refused(kwargs):
    with pytest.raises(RequestError, match="different|conflicting"):
        correlation_id(request(**kwargs))


URL = "http://127.0.0.1:9/v1/chat/completions?b=2&cid=trace_xyz&a=1"


def test_the_inference_url_is_echoed_unchanged_everywhere_and_the_session_is_stored_under_the_cid(
        make_client, stored):
    body = rollout_body(3, policy_config={"inference_url": URL}, mode="rl", record={"return_trace": True,
                                                                                       "trace_format": "full"})
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    trajectory = data["trajectories"][0]
    assert trajectory["inference_url"] == URL and trajectory["trace_correlation_id"] == "trace_xyz"
    assert trajectory["steps"] and all(step["info"]["meta"]["inference_url"] == URL and
                                       step["info"]["meta"]["trace_correlation_id"] == "trace_xyz"
                                       for step in trajectory["steps"])
    assert data["pipeline_metadata"]["inference_url"] == URL
    assert data["trace_correlation_id"] == data["pipeline_metadata"]["trace_correlation_id"] == "trace_xyz"
    [session] = stored().find_by_correlation_id("trace_xyz")
    assert session.session_id == data["pipeline_metadata"]["session_id"] == data["trace"]["session_id"]
    assert session.run_id == "run-1" and session.seed == 3


def test_rl_mode_without_a_cid_is_422(make_client, stored):
    body = rollout_body(policy_config={"inference_url": "http://127.0.0.1:9/v1"}, mode="rl")
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "policy", "config", "inference_url"]
    assert "cid" in response.json()["detail"][0]["msg"]
    assert stored().count_sessions() == 0


def test_the_policy_calls_the_inference_url_with_the_cid(make_client):
    actions = [{"tool": "answer", "args": {"completion": "<decision>{}</decision>"}}]
    with ScriptedModelServer(actions) as model:
        url = model.url + "?cid=trace_q"
        body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": url}, mode="rl")
        response = make_client().post("/rollout", json=body)
    assert response.status_code == 200, response.text
    assert model.queries == ["cid=trace_q"]
    assert response.json()["pipeline_metadata"]["inference_url"] == url
