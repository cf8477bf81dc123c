"""The real ``inspect eval proofgym/<env>`` (the CLI, as a subprocess) against a scripted OpenAI-compatible server that
answers each environment's known-good actions: the log's sample carries the environment's reward with its certificate
or simulation log, ``proofgym eval`` with the ``openai`` policy on the same server gives the same return, and the server
saw the same request from both. Bad input stops the eval in one line. ``inspect view`` serves the log directory.

(The same runs against a real ``proofgym serve-model`` are in ``test_inspect_serve_model.py``.)
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("inspect_ai")

from ._inspect_cli import (  # noqa: E402
    BIN,
    ToolCallingModel,
    cli_env,
    inspect_eval,
    proofgym_eval,
    read_log,
    sample_scores,
)
from _judge import requires_judge  # noqa: E402
from _scripted_model import ScriptedModel  # noqa: E402
from proofgym.envs import env_hook, make  # noqa: E402


def oracle_texts(env_name: str, seed: int) -> list[str]:
    """The environment's known-good actions for ``seed`` as a model would write them: the answer as text for a
    single-answer environment, each tool call as the JSON-in-text object the policies read."""
    with make(env_name) as env:
        actions = env_hook(env, "oracle_actions")(seed)
    if env_name in ("loan", "math"):
        return [actions[0]["args"]["completion"]]
    return [json.dumps(action) for action in actions]


def run_both(env_name: str, tmp_path: Path, *, seed: int = 0,
             max_turns: int | None = None) -> tuple[object, dict, list[dict], list[dict]]:
    """``inspect eval`` and ``proofgym eval`` of ``seed``, each over its own scripted server answering the oracle's
    actions: the inspect log, proofgym's JSON summary, and the request bodies each server received."""
    answers = oracle_texts(env_name, seed)
    logs = tmp_path / "logs"
    turns = ("-T", f"max_turns={max_turns}") if max_turns is not None else ()
    with ScriptedModel(answers) as model:
        done = inspect_eval(f"proofgym/{env_name}", model.url, "scripted", logs, "-T", f"seeds={seed}", *turns,
                            "--max-tokens", "512")
        assert done.returncode == 0, done.stdout + done.stderr
        inspect_requests = list(model.requests)
    with ScriptedModel(answers) as model:
        summary = proofgym_eval(env_name, str(seed), model.url, "scripted", tmp_path, max_tokens=512,
                                max_turns=max_turns)
        proofgym_requests = list(model.requests)
    return read_log(logs), summary, inspect_requests, proofgym_requests


def test_loan_certificate_is_in_the_log_and_the_return_matches_proofgym_eval(tmp_path):
    log, summary, inspect_requests, proofgym_requests = run_both("loan", tmp_path)
    assert log.status == "success"
    (score,) = sample_scores(log).values()
    (result,) = summary["results"]
    assert result["status"] == "ok" and result["passed"]
    assert score.value == pytest.approx(result["total_return"]) and score.value > 0
    assert score.metadata["outcome"] == "certified" and score.metadata["outcome_score"] == 1.0
    assert score.metadata["verdict"]["evidence"]["proof_checked"] is True
    assert score.metadata["rejected_facts"] == []
    assert "proof summary: Decision 'approve' independently certified by the proof checker" in score.explanation
    assert "rules fired (" in score.explanation and "  - approve_prime: " in score.explanation
    certificate = score.metadata["verdict"]["evidence"]["proof"]
    assert f"certificate (the proof the checker verified): {json.dumps(certificate)}" in score.explanation
    assert certificate["decision"]["decision"] == "approve" and certificate["firings"]
    metrics = log.results.scores[0].metrics
    assert metrics["mean"].value == pytest.approx(result["total_return"]) and metrics["outcome"].value == 1.0
    # The server saw the same conversation, tools and sampling settings from both.
    assert inspect_requests == proofgym_requests


def test_math_verdict_and_return_match_proofgym_eval(tmp_path):
    log, summary, inspect_requests, proofgym_requests = run_both("math", tmp_path)
    (score,) = sample_scores(log).values()
    (result,) = summary["results"]
    assert score.value == pytest.approx(result["total_return"]) and result["passed"]
    assert score.metadata["outcome"] == "certified"
    assert "answer: 27" in score.explanation
    assert "verifier's reason: the answer equals the gold answer" in score.explanation
    assert "last action: The answer is \\boxed{27}." in score.explanation
    assert inspect_requests == proofgym_requests


@requires_judge
def test_verilog_tool_episode_carries_the_simulation_log_and_matches_proofgym_eval(tmp_path):
    log, summary, inspect_requests, proofgym_requests = run_both("verilog", tmp_path)
    (sample,) = log.samples
    score = sample.scores["proofgym_scorer"]
    (result,) = summary["results"]
    assert result["passed"] and score.value == pytest.approx(result["total_return"])
    assert score.metadata["steps"] == result["num_steps"] == 2
    assert score.metadata["outcome"] == "certified"
    assert "simulation log:\n  Hint: Output 'out' has no mismatches." in score.explanation
    assert "  Mismatches: 0 in 208 samples" in score.explanation
    assert score.metadata["verdict"]["evidence"]["sandboxed"] is True
    # the episode's conversation is the sample's: the write_file result went back to the model before submit
    assert [message.role for message in sample.messages][-4:] == ["assistant", "user", "assistant", "user"]
    assert inspect_requests == proofgym_requests and len(inspect_requests) == 2


def test_an_episode_cut_off_at_the_turn_limit_is_unsolved_in_both(tmp_path):
    log, summary, inspect_requests, proofgym_requests = run_both("fact_finding", tmp_path, max_turns=2)
    (score,) = sample_scores(log).values()
    (result,) = summary["results"]
    assert result["outcome_score"] == score.metadata["outcome_score"] == 0.0
    assert score.metadata["truncated"] is True and score.metadata["steps"] == result["num_steps"] == 2
    assert score.explanation.startswith("outcome: none (cut off at the turn limit or time budget); return ")
    assert score.value == pytest.approx(result["total_return"])
    assert 'last action: get_fact({"name": ' in score.explanation
    assert inspect_requests == proofgym_requests


def _one_line_refusal(done: subprocess.CompletedProcess[str], expected: str) -> str:
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "╭" not in output, output
    lines = [line for line in output.splitlines() if expected in line]
    assert len(lines) == 1, output
    return lines[0]


@pytest.fixture(scope="module")
def scripted():
    with ScriptedModel(["no"]) as model:
        yield model


def test_an_unknown_environment_is_one_line(scripted, tmp_path):
    done = inspect_eval("proofgym/env", scripted.url, "scripted", tmp_path / "logs", "-T", "env=nope")
    line = _one_line_refusal(done, "unknown environment 'nope'")
    assert line.strip().startswith("proofgym/env: unknown environment 'nope'; expected one of ")
    assert "loan" in line and "verilog" in line


def test_an_unknown_task_parameter_is_one_line(scripted, tmp_path):
    done = inspect_eval("proofgym/loan", scripted.url, "scripted", tmp_path / "logs", "-T", "seedz=0-3")
    line = _one_line_refusal(done, "unknown task parameter")
    assert "seedz" in line and "seeds, env_config, max_turns, max_time_s" in line


@pytest.mark.parametrize(("parameters", "line"), [
    ({"seeds": "7-3"}, "proofgym/loan: -T seeds: range '7-3' ends before it starts"),
    ({"env_config": "{colour: 1}"}, "proofgym/loan: -T env_config: environment 'loan': invalid config: colour: "
                                    "unknown key (the keys are ['chat', 'max_turns', 'run_config', 'seed_offset'])"),
    ({"max_turns": 0}, "proofgym/loan: -T max_turns must be a number > 0, got 0"),
    ({"solver": "react"}, "proofgym/loan: -T solver must be one of episode, tools, got 'react'"),
    ({"solver": "tools", "max_time_s": 5}, "proofgym/loan: -T max_time_s is the episode solver's; with -T "
                                           "solver=tools use inspect's --time-limit"),
])
def test_a_bad_task_parameter_is_one_line(parameters, line):
    # The same refusal inspect prints alone (its PrerequisiteError), as the CLI tests above show for two of them.
    from inspect_ai._util.error import PrerequisiteError

    from proofgym.integrations import inspect_task

    with pytest.raises(PrerequisiteError) as raised:
        inspect_task("loan", **parameters)
    assert raised.value.message == line


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_model_server_is_one_line(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    done = inspect_eval("proofgym/loan", url, "scripted", tmp_path / "logs", "-T", "seeds=0")
    line = _one_line_refusal(done, "cannot reach the model server")
    assert url in line and "proofgym serve-model" in line


def test_the_plugin_environment_runs_through_the_generic_task(tmp_path):
    # parity comes from examples/plugin (installed in the dev venv): only the generic task needs no code for it
    with ScriptedModel(["even"]) as model:
        done = inspect_eval("proofgym/env", model.url, "scripted", tmp_path / "logs", "-T", "env=parity",
                            "-T", "seeds=0-1", "--max-samples", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    log = read_log(tmp_path / "logs")
    assert log.eval.task == "proofgym/env" and len(log.samples) == 2
    assert {sample.metadata["env"] for sample in log.samples} == {"parity"}


@pytest.mark.slow  # 20-35 s: inspect's own viewer; that its logs read back is checked by every test above
def test_inspect_view_serves_the_log_dir(tmp_path):
    logs = tmp_path / "logs"
    with ScriptedModel(oracle_texts("loan", 0)) as model:
        done = inspect_eval("proofgym/loan", model.url, "scripted", logs, "-T", "seeds=0")
    assert done.returncode == 0, done.stdout + done.stderr
    (log_file,) = logs.glob("*.eval")
    port = _closed_port()
    view = subprocess.Popen([str(BIN / "inspect"), "view", "start", "--log-dir", str(logs), "--port", str(port),
                             "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=cli_env(), cwd=tmp_path)
    try:
        deadline, listed = time.monotonic() + 60, None
        while time.monotonic() < deadline and listed is None:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/api/logs", timeout=5)
                listed = response.json() if response.status_code == 200 else None
            except httpx.HTTPError:
                time.sleep(0.5)
        assert listed is not None, "inspect view did not answer /api/logs within 60 s"
        assert log_file.name in json.dumps(listed)
    finally:
        view.terminate()
        view.wait(timeout=30)


def oracle_actions(env_name: str, seed: int) -> list[dict]:
    with make(env_name) as env:
        return list(env_hook(env, "oracle_actions")(seed))


# Verilog's native tool calls are slow here (30-60 s): the default suite runs fact_finding's, and Verilog's tool
# episode through inspect by test_verilog_tool_episode_carries_the_simulation_log_and_matches_proofgym_eval
@pytest.mark.parametrize("env_name", [pytest.param("verilog", marks=[requires_judge, pytest.mark.slow]),
                                      "fact_finding"])
def test_native_tool_calls_score_the_same_under_both_solvers_and_proofgym_eval(env_name, tmp_path):
    actions = oracle_actions(env_name, 0)
    returns, requests = {}, {}
    for solver in ("episode", "tools"):
        logs = tmp_path / solver
        with ToolCallingModel(actions) as model:
            done = inspect_eval(f"proofgym/{env_name}", model.url, "scripted", logs, "-T", "seeds=0",
                                "-T", f"solver={solver}", "--max-tokens", "512")
            requests[solver] = list(model.requests)
        assert done.returncode == 0, done.stdout + done.stderr
        log = read_log(logs)
        (sample,) = log.samples
        score = sample.scores["proofgym_scorer"]
        assert score.metadata["outcome_score"] == 1.0 and score.metadata["steps"] == len(actions)
        returns[solver] = score.value
        if solver == "tools":  # inspect ran the environment's tools: one ToolEvent per call, in the transcript
            events = [event for event in sample.events if event.event == "tool"]
            assert [event.function for event in events] == [action["tool"] for action in actions]
            assert [message.role for message in sample.messages].count("tool") == len(actions)
    with ToolCallingModel(actions) as model:
        summary = proofgym_eval(env_name, "0", model.url, "scripted", tmp_path, max_tokens=512)
        requests["proofgym"] = list(model.requests)
    (result,) = summary["results"]
    assert result["passed"]
    assert returns["episode"] == pytest.approx(result["total_return"]) == returns["tools"]
    # the same conversations reached the server: tools, tool calls and their results
    assert requests["episode"] == requests["proofgym"] == requests["tools"]
