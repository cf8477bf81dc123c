"""The tiny local model (proofgym.policies.build_tiny_model): its tokenizer, its shape, its cache on disk."""

import pytest

torch = pytest.importorskip("torch")

from proofgym.domains import get_domain  # noqa: E402
from proofgym.policies import DEMO_DOMAIN_NAME, TinyModelConfig, build_tiny_model, demo_completion, demo_prompt  # noqa: E402

SMALL = TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128)


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("tiny-cache")


@pytest.fixture
def small_model(tiny_cache):
    return build_tiny_model(tiny_cache, seed=0, config=SMALL)


def test_tokenizer_reads_digits_one_by_one_and_task_phrases_as_few_tokens(small_model):
    _, tokenizer = small_model
    record = get_domain(DEMO_DOMAIN_NAME).generate(0, 1)[0]
    answer = demo_completion("deny", record.facts)
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(answer, add_special_tokens=False)["input_ids"])
    digits = [t for t in tokens if any(ch.isdigit() for ch in t)]
    assert digits and all(len(t) == 1 for t in digits)
    assert "deny" in tokens and "false" in tokens or "true" in tokens
    assert len(tokens) <= 20  # keys and punctuation merged: the answer costs few generation steps
    assert tokenizer.decode(tokenizer(answer, add_special_tokens=False)["input_ids"]) == answer
    prompt_ids = tokenizer(demo_prompt(record))["input_ids"]
    assert prompt_ids[0] == tokenizer.bos_token_id and len(prompt_ids) <= 16


def test_special_tokens_and_left_padding(small_model):
    _, tokenizer = small_model
    assert (tokenizer.pad_token, tokenizer.bos_token, tokenizer.eos_token) == ("<pad>", "<s>", "</s>")
    assert tokenizer.padding_side == "left"
    batch = tokenizer(["age 1", "age 1 and 2 and 3"], padding=True)
    assert batch["input_ids"][0][0] == tokenizer.pad_token_id and batch["attention_mask"][0][0] == 0


def test_the_model_is_a_small_llama_with_tied_embeddings(small_model):
    model, tokenizer = small_model
    assert type(model).__name__ == "LlamaForCausalLM"
    assert model.config.tie_word_embeddings and model.get_input_embeddings().weight is model.lm_head.weight
    assert model.config.vocab_size == len(tokenizer)
    assert model.generation_config.eos_token_id == tokenizer.eos_token_id


def test_the_default_model_has_about_1_8_million_parameters(tiny_cache):
    model, _ = build_tiny_model(tiny_cache, seed=0)
    assert 1.6e6 < sum(p.numel() for p in model.parameters()) < 2.0e6
    assert (model.config.hidden_size, model.config.num_hidden_layers, model.config.intermediate_size) == (192, 4, 512)


def test_a_second_build_reloads_the_same_model_and_tokenizer_from_the_cache(tiny_cache):
    first_model, first_tok = build_tiny_model(tiny_cache, seed=0, config=SMALL)
    folders = sorted(p.name for p in tiny_cache.iterdir())
    second_model, second_tok = build_tiny_model(tiny_cache, seed=0, config=SMALL)
    assert sorted(p.name for p in tiny_cache.iterdir()) == folders  # nothing new was built
    for a, b in zip(first_model.state_dict().values(), second_model.state_dict().values()):
        assert torch.equal(a, b)
    assert first_tok.get_vocab() == second_tok.get_vocab() and second_tok.padding_side == "left"


def test_another_seed_builds_other_weights_in_another_folder(tiny_cache):
    a, _ = build_tiny_model(tiny_cache, seed=0, config=SMALL)
    b, _ = build_tiny_model(tiny_cache, seed=1, config=SMALL)
    assert not torch.equal(a.model.layers[0].mlp.up_proj.weight, b.model.layers[0].mlp.up_proj.weight)
    assert len([p for p in tiny_cache.iterdir() if p.name.startswith("tiny-llama-")]) >= 2


def test_a_half_written_cache_folder_is_rebuilt(tmp_path):
    build_tiny_model(tmp_path, seed=0, config=SMALL)
    [folder] = [p for p in tmp_path.iterdir() if p.name.startswith("tiny-llama-")]
    (folder / "proofgym-tiny.json").unlink()  # as if the build had died before its last write
    model, _ = build_tiny_model(tmp_path, seed=0, config=SMALL)
    assert (folder / "proofgym-tiny.json").is_file() and model is not None


@pytest.mark.parametrize("kwargs", [{"hidden_size": 0}, {"hidden_size": 65, "num_heads": 2}, {"vocab_size": 100},
                                    {"num_layers": True}])
def test_bad_model_configs_are_rejected(kwargs):
    with pytest.raises(ValueError, match="TinyModelConfig"):
        TinyModelConfig(**kwargs)


def test_an_empty_corpus_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="corpus"):
        build_tiny_model(tmp_path, seed=0, config=SMALL, corpus=[])
