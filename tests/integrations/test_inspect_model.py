"""The ``proofgym`` inspect model API: what it sends (inspect's generation settings, the tools, the tool choice), the
API key from ``$PROOFGYM_API_KEY`` (or the variable ``-M api_key_env`` names) against a real ``serve-model`` that
requires one, and its refusals (unknown ``-M`` args, a model the server does not serve, a server that fails)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai._util.error import PrerequisiteError  # noqa: E402
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model  # noqa: E402
from inspect_ai.tool import ToolFunction  # noqa: E402

from _scripted_model import ScriptedModel  # noqa: E402
from proofgym.envs import make  # noqa: E402
from proofgym.integrations._inspect_messages import inspect_tool  # noqa: E402
from proofgym.integrations._inspect_model import ModelServerError, ProofgymChatAPI  # noqa: E402


def test_generation_settings_tools_and_tool_choice_are_sent():
    with make("loan") as env:
        tools = [dict(tool) for tool in env.tools]
    with ScriptedModel(["approve"]) as server:
        api = ProofgymChatAPI("scripted", base_url=server.url)
        config = GenerateConfig(temperature=0.3, max_tokens=5, top_p=0.9, seed=7, stop_seqs=["</decision>"])
        output = asyncio.run(api.generate([ChatMessageSystem(content="sys"), ChatMessageUser(content="hi")],
                                          [inspect_tool(tool) for tool in tools], ToolFunction(name="answer"),
                                          config))
        (body,) = server.requests
    assert output.completion == "approve" and output.usage.total_tokens == 2
    assert body == {"model": "scripted", "messages": [{"role": "system", "content": "sys"},
                                                      {"role": "user", "content": "hi"}],
                    "temperature": 0.3, "max_tokens": 5, "top_p": 0.9, "seed": 7, "stop": ["</decision>"],
                    "tools": tools, "tool_choice": {"type": "function", "function": {"name": "answer"}}}


def test_without_settings_or_tools_only_the_conversation_is_sent():
    with ScriptedModel(["x"]) as server:
        api = ProofgymChatAPI("scripted", base_url=server.url)
        asyncio.run(api.generate([ChatMessageUser(content="hi")], [], "auto", GenerateConfig()))
        (body,) = server.requests
    assert body == {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}


def test_unknown_model_args_are_refused_in_one_line():
    with pytest.raises(PrerequisiteError) as raised:
        ProofgymChatAPI("m", base_url="http://127.0.0.1:9/v1", colour="red")
    assert raised.value.message == ("proofgym model API: unknown model arg(s) colour (-M); expected api_key_env, "
                                    "timeout_s, max_retries")


@pytest.fixture(scope="module")
def keyed_server():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _threaded_server import ThreadedServer
    from proofgym.model_server import GenerationBackend, create_model_app, load_model

    backend = GenerationBackend(load_model("proofgym:tiny"), batch_window_ms=0)
    app = create_model_app(backend, api_key="served-key", max_tokens_limit=8)
    with ThreadedServer(app, what="serve-model proofgym:tiny") as server:
        yield f"{server.url}/v1"
    backend.close()


def test_the_api_key_comes_from_the_environment(keyed_server, monkeypatch):
    monkeypatch.setenv("PROOFGYM_API_KEY", "served-key")
    model = get_model("proofgym/proofgym:tiny", base_url=keyed_server, config=GenerateConfig(max_tokens=4))
    output = asyncio.run(model.generate("Applicant: age 30"))
    assert output.usage.output_tokens >= 1 and output.usage.input_tokens > 0


def test_the_variable_api_key_env_names_is_read(keyed_server, monkeypatch):
    monkeypatch.delenv("PROOFGYM_API_KEY", raising=False)
    monkeypatch.setenv("MY_SERVE_KEY", "served-key")
    api = ProofgymChatAPI("proofgym:tiny", base_url=keyed_server, api_key_env="MY_SERVE_KEY")
    output = asyncio.run(api.generate([ChatMessageUser(content="hi")], [], "auto", GenerateConfig(max_tokens=2)))
    assert output.usage.output_tokens >= 1


def test_a_missing_key_is_the_servers_refusal_not_a_retry_storm(keyed_server, monkeypatch):
    monkeypatch.delenv("PROOFGYM_API_KEY", raising=False)
    api = ProofgymChatAPI("proofgym:tiny", base_url=keyed_server)
    with pytest.raises(ModelServerError, match="did not answer: HTTP 401"):
        asyncio.run(api.generate([ChatMessageUser(content="hi")], [], "auto", GenerateConfig(max_tokens=2)))
    assert api.should_retry(ModelServerError("x")) is False


def test_a_model_the_server_does_not_serve_is_refused_naming_the_served_one(keyed_server, monkeypatch):
    monkeypatch.setenv("PROOFGYM_API_KEY", "served-key")
    with pytest.raises(PrerequisiteError) as raised:
        ProofgymChatAPI("tiny", base_url=keyed_server)
    assert "does not serve 'tiny'; it serves proofgym:tiny (--model proofgym/proofgym:tiny)" in raised.value.message
