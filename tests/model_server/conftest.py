"""The torch backends the serve-model tests share: the tiny offline model, and the tiny model with a 1024-token
context (room for tool descriptions); and a TestClient of the tiny model's app behind an API key (``KEY``) with a
``LIMIT`` on max_tokens. Module-scoped: each test module builds its own."""

from __future__ import annotations

import pytest
from model_server._support import KEY, LIMIT


@pytest.fixture(scope="module")
def backend():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from proofgym.model_server import GenerationBackend, load_model

    backend = GenerationBackend(load_model("proofgym:tiny"), max_batch_size=8, batch_window_ms=50)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def wide_backend():
    """The tiny model with a 1024-token context: room for the tool descriptions."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from proofgym.config import TrainingSection
    from proofgym.model_server import GenerationBackend, LoadedModel
    from proofgym.policies import TinyModelConfig, build_tiny_model

    model, tokenizer = build_tiny_model(TrainingSection.model_fields["model_cache_dir"].default, seed=0,
                                        config=TinyModelConfig(max_positions=1024))
    backend = GenerationBackend(LoadedModel(model.eval(), tokenizer, "tiny-wide", 1024), batch_window_ms=0)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def client(backend):
    from fastapi.testclient import TestClient

    from proofgym.model_server import create_model_app

    app = create_model_app(backend, api_key=KEY, max_tokens_limit=LIMIT, max_body_bytes=64 << 10)
    with TestClient(app, headers={"Authorization": f"Bearer {KEY}"}) as client:
        yield client
