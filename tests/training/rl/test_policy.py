"""The trainer's served policy: a weight sync reaches every answer after it, the prompts kept by the server's prefix
cache included."""

from __future__ import annotations

import asyncio

import pytest

torch = pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

from proofgym.model_server import GenerationBackend, LoadedModel  # noqa: E402
from proofgym.model_server._backend import SamplingParams  # noqa: E402
from proofgym.training.rl._policy import PolicyServer, build_policy_models  # noqa: E402


def test_a_sync_drops_the_keys_and_values_the_old_weights_computed(tmp_path):
    """A prompt answered before a sync and again after it: the second answer's logprobs are the new weights' (as a
    backend that keeps nothing reads them), not a mix with the old weights' keys and values of its prefix."""
    models = build_policy_models("proofgym:tiny", trainer_mode="full", lora=None, seed=0, cache_dir=tmp_path)
    server = PolicyServer(models, threads=1)  # not started: its backend answers directly
    fresh = GenerationBackend(LoadedModel(models.served, models.tokenizer, "fresh", models.context_length),
                              batch_window_ms=0, reuse_prefix=False)
    prompt = server.backend.encode(server.backend.render([{"role": "user", "content": "Decide: permit or deny. "
                                                          "Hidden facts: age, income. Ask for one."}]))
    params = [SamplingParams(max_tokens=4, top_logprobs=0)]

    def logprobs(engine):
        [generation] = asyncio.run(engine.generate(prompt, params))
        return [t.logprob for t in generation.logprobs]

    try:
        logprobs(server.backend)
        assert len(server.backend.prefixes) == 1 and server.backend.prefix_tokens_reused == 0
        with torch.no_grad():
            for parameter in models.trainer.parameters():
                parameter.add_(torch.randn_like(parameter) * 0.05)
        server.sync(1)
        assert len(server.backend.prefixes) == 0
        after, expected = logprobs(server.backend), logprobs(fresh)
    finally:
        server.close()
        fresh.close()
    assert server.backend.prefix_tokens_reused == 0
    assert after == pytest.approx(expected, abs=1e-4)
