"""serve-model's LoRA adapter endpoints (vLLM's shapes): adapters written by peft's save_pretrained, loaded and
unloaded by name, applied to the requests that name them, mixed with base-model rows in one batch."""

from __future__ import annotations

import asyncio
import copy
import json
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

import torch  # noqa: E402
from _bounds import CUT_OFF_S  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from proofgym.model_server import GenerationBackend, LoadedModel, ServeError, create_model_app, serve_model  # noqa: E402
from proofgym.model_server._adapters import AdapterGone  # noqa: E402
from proofgym.model_server._backend import SamplingParams  # noqa: E402
from proofgym.policies import TinyModelConfig, build_tiny_model  # noqa: E402

PROMPT = [{"role": "user", "content": "Applicant: age 30, income 5"}]


def _adapter(model, folder, *, seed: int, r: int = 4) -> None:
    """A LoRA adapter of ``model`` as peft saves one, its B matrices drawn so that it changes the outputs."""
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    peft_model = get_peft_model(copy.deepcopy(model), LoraConfig(r=r, lora_alpha=2 * r, target_modules="all-linear",
                                                                  task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, parameter in peft_model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.3)
    peft_model.save_pretrained(str(folder))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    model, tokenizer = build_tiny_model(tmp_path_factory.mktemp("tiny"), seed=0)
    model.eval()
    folder = tmp_path_factory.mktemp("adapters")
    _adapter(model, folder / "a", seed=1)
    _adapter(model, folder / "b", seed=2)
    other, _ = build_tiny_model(tmp_path_factory.mktemp("wide"), seed=0,
                                config=TinyModelConfig(hidden_size=64, num_heads=4, intermediate_size=128))
    _adapter(other, folder / "misfit", seed=3)
    (folder / "empty").mkdir()
    reference = copy.deepcopy(model)
    backend = GenerationBackend(LoadedModel(model, tokenizer, "tiny", 128), max_batch_size=8, batch_window_ms=50)
    yield backend, reference, folder
    backend.close()


def _chat(client, model: str, expect: int = 200) -> dict:
    response = client.post("/v1/chat/completions", json={"model": model, "messages": PROMPT, "temperature": 0,
                                                         "max_tokens": 8, "logprobs": True})
    assert response.status_code == expect, response.text
    return response.json()


def _error(response, status: int, kind: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == kind and error["code"] == status
    return error["message"]


def test_the_endpoints_exist_only_with_enable_lora(served):
    backend, _, folder = served
    with TestClient(create_model_app(backend)) as client:
        response = client.post("/v1/load_lora_adapter", json={"lora_name": "a", "lora_path": str(folder / "a")})
        assert response.status_code == 404


def test_load_apply_list_and_unload_an_adapter_with_vllms_shapes(served):
    backend, reference, folder = served
    with TestClient(create_model_app(backend, enable_lora=True)) as client:
        base = _chat(client, "tiny")
        loaded = client.post("/v1/load_lora_adapter", json={"lora_name": "a", "lora_path": str(folder / "a")})
        assert loaded.status_code == 200 and loaded.text == "Success: LoRA adapter 'a' added successfully."
        cards = client.get("/v1/models").json()["data"]
        assert [c["id"] for c in cards] == ["tiny", "a"]
        assert cards[1]["parent"] == "tiny" and cards[1]["root"] == str(folder / "a")
        assert client.get("/v1/models/a").json()["parent"] == "tiny"

        adapted = _chat(client, "a")
        assert adapted["model"] == "a" and base["model"] == "tiny"
        choice, base_choice = adapted["choices"][0], base["choices"][0]
        assert choice["token_ids"] != base_choice["token_ids"]
        # The served log-probabilities are the adapter's: peft's own model over the same ids gives them.
        from peft import PeftModel

        local = PeftModel.from_pretrained(copy.deepcopy(reference), str(folder / "a")).eval()
        ids = torch.tensor([choice["prompt_token_ids"] + choice["token_ids"]])
        with torch.no_grad():
            logprobs = torch.log_softmax(local(input_ids=ids).logits[0].float(), dim=-1)
        start = len(choice["prompt_token_ids"])
        expected = [float(logprobs[start - 1 + i, token]) for i, token in enumerate(choice["token_ids"])]
        served_logprobs = [entry["logprob"] for entry in choice["logprobs"]["content"]]
        assert served_logprobs == pytest.approx(expected, abs=1e-3)

        # Base rows are unchanged while an adapter is attached.
        assert _chat(client, "tiny")["choices"][0]["token_ids"] == base_choice["token_ids"]

        unloaded = client.post("/v1/unload_lora_adapter", json={"lora_name": "a"})
        assert unloaded.status_code == 200 and unloaded.text == "Success: LoRA adapter 'a' removed successfully."
        assert [c["id"] for c in client.get("/v1/models").json()["data"]] == ["tiny"]
        gone = client.post("/v1/chat/completions", json={"model": "a", "messages": PROMPT})
        assert gone.status_code == 404 and "'a' does not exist" in gone.json()["error"]["message"]
        assert not backend.adapters_attached  # the last adapter gone: the plain model again
        assert _chat(client, "tiny")["choices"][0]["token_ids"] == base_choice["token_ids"]


def test_a_streamed_reply_of_an_adapter_is_its_whole_reply(served):
    backend, _, folder = served
    with TestClient(create_model_app(backend, enable_lora=True)) as client:
        assert client.post("/v1/load_lora_adapter", json={"lora_name": "a",
                                                          "lora_path": str(folder / "a")}).status_code == 200
        whole = _chat(client, "a")["choices"][0]
        models, ids = set(), []
        with client.stream("POST", "/v1/chat/completions", json={"model": "a", "messages": PROMPT, "temperature": 0,
                                                                  "max_tokens": 8, "stream": True}) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("data: {"):
                    chunk = json.loads(line[len("data: "):])
                    models.add(chunk["model"])
                    for choice in chunk["choices"]:
                        ids += choice.get("token_ids", [])
        assert models == {"a"} and ids == whole["token_ids"]
        assert client.post("/v1/unload_lora_adapter", json={"lora_name": "a"}).status_code == 200


def test_rows_of_two_adapters_and_the_base_share_a_batch(served):
    backend, _, folder = served
    with TestClient(create_model_app(backend, enable_lora=True)) as client:
        for name in ("a", "b"):
            assert client.post("/v1/load_lora_adapter", json={"lora_name": name,
                                                              "lora_path": str(folder / name)}).status_code == 200
        alone = {name: _chat(client, name)["choices"][0]["token_ids"] for name in ("tiny", "a", "b")}
        assert len({tuple(ids) for ids in alone.values()}) == 3
        adapters = backend.adapter_set
        prompt = _chat(client, "tiny")["choices"][0]["prompt_token_ids"]

        async def together() -> list:
            rows = [SamplingParams(max_tokens=8, adapter=adapters.adapter_id(name)) for name in ("tiny", "a", "b")]
            return await asyncio.gather(*(backend.generate(prompt, [row]) for row in rows))

        batches = backend.batches_decoded
        results = asyncio.run(together())
        assert backend.batches_decoded - batches < 3  # at least two of them were decoded in one batch
        assert [r[0].token_ids for r in results] == [alone["tiny"], alone["a"], alone["b"]]
        for name in ("a", "b"):
            assert client.post("/v1/unload_lora_adapter", json={"lora_name": name}).status_code == 200


def test_refusals_name_the_adapter_or_the_path(served):
    backend, _, folder = served
    with TestClient(create_model_app(backend, enable_lora=True)) as client:
        load = lambda body: client.post("/v1/load_lora_adapter", json=body)  # noqa: E731
        assert _error(load({"lora_name": "a"}), 400, "InvalidUserInput") == \
            "Both 'lora_name' and 'lora_path' must be provided."
        missing = folder / "nowhere"
        assert _error(load({"lora_name": "x", "lora_path": str(missing)}), 404, "NotFoundError") == \
            f"Loading lora x failed: No adapter found for {missing}"
        assert "No adapter found" in _error(load({"lora_name": "x", "lora_path": str(folder / "empty")}), 404,
                                            "NotFoundError")
        misfit = _error(load({"lora_name": "x", "lora_path": str(folder / "misfit")}), 400, "BadRequestError")
        assert str(folder / "misfit") in misfit and "in_features" in misfit
        assert "base model's name" in _error(load({"lora_name": "tiny", "lora_path": str(folder / "a")}), 400,
                                             "InvalidUserInput")
        assert load({"lora_name": "a", "lora_path": str(folder / "a")}).status_code == 200
        assert "already been loaded" in _error(load({"lora_name": "a", "lora_path": str(folder / "b")}), 400,
                                               "InvalidUserInput")
        before = _chat(client, "a")["choices"][0]["token_ids"]
        assert load({"lora_name": "a", "lora_path": str(folder / "b"), "load_inplace": True}).status_code == 200
        assert _chat(client, "a")["choices"][0]["token_ids"] != before  # now b's weights under a's name
        assert _error(client.post("/v1/unload_lora_adapter", json={"lora_name": "zz"}), 404, "NotFoundError") == \
            "The lora adapter 'zz' cannot be found."
        assert client.post("/v1/unload_lora_adapter", json={"lora_name": "a"}).status_code == 200
        assert not backend.adapters_attached
        assert json.loads(client.get("/v1/models").text)["data"][0]["id"] == "tiny"


def test_an_adapter_unloaded_while_in_use_stays_attached_until_its_rows_end(served):
    backend, _, folder = served
    with TestClient(create_model_app(backend, enable_lora=True)) as client:
        assert client.post("/v1/load_lora_adapter", json={"lora_name": "a",
                                                          "lora_path": str(folder / "a")}).status_code == 200
        adapters = backend.adapter_set
        adapter_id = adapters.adapter_id("a")
        with adapters.holding_ids({adapter_id}):  # what a request of adapter a holds while its rows decode
            assert client.post("/v1/unload_lora_adapter", json={"lora_name": "a"}).status_code == 200
            assert adapter_id in backend.model.peft_config  # still attached for the rows in flight
            assert "a" not in [c["id"] for c in client.get("/v1/models").json()["data"]]
            gone = client.post("/v1/chat/completions", json={"model": "a", "messages": PROMPT})
            assert gone.status_code == 404  # new requests cannot name it
        deadline = time.monotonic() + CUT_OFF_S  # the last holder's release detaches it (in a thread)
        while backend.adapters_attached and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not backend.adapters_attached
        # Rows whose adapter went away between the request's arrival and its queueing: a 404, never a failed batch.
        with pytest.raises(AdapterGone, match="unloaded while the request was read"):
            with adapters.holding_ids({adapter_id}):
                pass


def test_the_llama_cpp_backend_refuses_adapters_in_one_line():
    with pytest.raises(ServeError, match="--enable-lora: the llama_cpp backend serves no LoRA adapters"):
        serve_model("smollm2", backend="llama_cpp", enable_lora=True)
