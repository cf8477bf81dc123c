"""OpenRLHF's own HTTP reward client (``openrlhf/utils/agent.py`` of the installed package, unmodified) against
``serve-reward`` over real HTTP: the key in the URL, two endpoints rotated, chat-templated queries with their
special tokens kept, and the rewards, scores and extra_logs read back as OpenRLHF reads them.

``openrlhf/utils/__init__.py`` imports the package's math and training helpers (pylatexenc, sympy, torch,
transformers), none of which the reward client uses: the package's own ``utils`` modules are loaded without
running that ``__init__`` (``agent.py`` imports only aiohttp and ``openrlhf.utils.logging_utils``).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import sys
import types
from contextlib import ExitStack
from pathlib import Path

import pytest

from proofgym.integrations import domain_run_config
from proofgym.reward_server import create_reward_app, parse_label
from proofgym.reward_server._app import build_response

from ._reward_servers import served
from integrations._support import flip_decision, rows_and_gold

KEY = "openrlhf+key/with=odd&chars"
_AGENT_MODULES = ("openrlhf.utils", "openrlhf.utils.agent", "openrlhf.utils.logging_utils")


@pytest.fixture(scope="module")
def agent():
    """The installed ``openrlhf.utils.agent`` module, loaded as the package ships it."""
    pytest.importorskip("aiohttp", reason="OpenRLHF's HTTP reward client needs aiohttp (pip install aiohttp)")
    spec = importlib.util.find_spec("openrlhf")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("openrlhf is not installed (pip install --no-deps openrlhf==0.11.2)")
    utils_dir = Path(next(iter(spec.submodule_search_locations))) / "utils"
    if not (utils_dir / "agent.py").is_file():
        pytest.skip(f"this openrlhf has no utils/agent.py (looked in {utils_dir})")
    saved = {name: sys.modules.get(name) for name in _AGENT_MODULES}
    package = types.ModuleType("openrlhf.utils")
    package.__path__ = [str(utils_dir)]
    sys.modules["openrlhf.utils"] = package
    try:
        module = importlib.import_module("openrlhf.utils.agent")
    except ImportError as exc:
        pytest.skip(f"openrlhf.utils.agent could not be imported: {exc}")
    yield module
    for name, previous in saved.items():
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


def _chatml(prompt: str) -> str:
    """The prompt as OpenRLHF's dataset renders it (``apply_chat_template(..., tokenize=False)``)."""
    return (f"<|im_start|>system\nYou are a careful grant officer.<|im_end|>\n<|im_start|>user\n{prompt}<|im_end|>\n"
            "<|im_start|>assistant\n")


class _Ids(list):
    def tolist(self) -> list[int]:
        return list(self)


class CharTokenizer:
    """One token per character: ``decode(..., skip_special_tokens=False)`` keeps ``<|im_end|>`` and the template."""

    def __call__(self, text: str, add_special_tokens: bool = False, return_tensors: str | None = None):
        return {"input_ids": [_Ids(map(ord, text))]}

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        assert skip_special_tokens is False, "OpenRLHF decodes the query with its special tokens"
        return "".join(map(chr, ids))


class ScriptedEngine:
    """A vLLM engine that answers each prompt with its scripted response (ended by the EOS token, as vLLM does)."""

    def __init__(self, responses: dict[str, str]) -> None:
        self.responses = responses

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        response = self.responses["".join(map(chr, prompt_token_ids))] + "<|im_end|>"
        output = types.SimpleNamespace(token_ids=[ord(c) for c in response], finish_reason="stop", logprobs=None)
        return types.SimpleNamespace(outputs=[output])


def _samples(n: int):
    rows, gold = rows_and_gold(n, seed=7)
    responses = [g if i % 3 == 0 else flip_decision(g) if i % 3 == 1 else "I cannot decide." for i, g in
                 enumerate(gold)]
    prompts = [_chatml(row["prompt"]) for row in rows]
    labels = [json.dumps({"gold": row["gold"], "source_facts": row["source_facts"]}) for row in rows]
    return prompts, responses, labels


def _expected(reward_fn, queries, prompts, labels):
    """What the server should answer for each sample: the reward function called directly on the response."""
    responses = [query[len(prompt):] for query, prompt in zip(queries, prompts)]
    items = reward_fn.score(None, responses, [parse_label(label, i) for i, label in enumerate(labels)])
    return [build_response([item], invalid_fill=0.0).model_dump() for item in items]


def test_openrlhfs_own_http_reward_client_scores_through_serve_reward_with_the_key_in_the_url(agent):
    n = 8
    prompts, responses, labels = _samples(n)
    direct = domain_run_config("grant_eligibility").reward_function()
    with ExitStack() as stack:
        servers = [domain_run_config("grant_eligibility").reward_function() for _ in range(2)]
        for reward_fn in servers:
            stack.callback(reward_fn.close)
        stack.callback(direct.close)
        ports = [stack.enter_context(served(create_reward_app(fn, api_key=KEY)))[0] for fn in servers]
        from urllib.parse import quote

        urls = [f"http://127.0.0.1:{port}/get_reward?key={quote(KEY, safe='')}" for port in ports]
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=urls)
        engine = ScriptedEngine(dict(zip(prompts, responses)))
        sampling = types.SimpleNamespace(max_tokens=4096, logprobs=None)

        async def rollouts():
            # As OpenRLHF runs them: every sample's rollout at once, each posting its own reward request.
            return await asyncio.gather(*(executor.execute(prompt, label, sampling, 1 << 16, CharTokenizer(), engine)
                                          for prompt, label in zip(prompts, labels)))

        outputs = asyncio.run(rollouts())
        queries = [prompt + response + "<|im_end|>" for prompt, response in zip(prompts, responses)]
        expected = _expected(direct, queries, prompts, labels)
        for output, want in zip(outputs, expected):
            # What OpenRLHF keeps of the answer: rewards, scores (preferred over rewards) and extra_logs.
            assert output["reward"] == pytest.approx(want["rewards"]), output
            assert output["scores"] == want["scores"]
            assert output["extra_logs"] == want["extra_logs"]
        assert [output["scores"] for output in outputs] == [[1.0 if i % 3 == 0 else 0.0] for i in range(n)]
        assert {len(output["extra_logs"]["certified"]) for output in outputs} == {1}
        # One sample per request, rotated over the two endpoints.
        assert [fn.stats.items for fn in servers] == [n // 2, n // 2]

        # The same client sharding a list of queries across both servers (its other calling pattern).
        answers = asyncio.run(executor._fetch_rewards_via_http(queries[:4], prompts[:4], labels[:4]))
        assert [answer["rewards"] for answer in answers] == [
            pytest.approx([*expected[0]["rewards"], *expected[1]["rewards"]]),
            pytest.approx([*expected[2]["rewards"], *expected[3]["rewards"]])]
        assert [fn.stats.items for fn in servers] == [n // 2 + 2, n // 2 + 2]


def test_the_package_under_test_is_openrlhfs_own_client(agent):
    origin = Path(agent.__file__)
    assert origin.parts[-3:] == ("openrlhf", "utils", "agent.py")
    assert "site-packages" in origin.parts or "dist-packages" in origin.parts
    assert agent.SingleTurnAgentExecutor._fetch_rewards_via_http.__module__ == "openrlhf.utils.agent"
