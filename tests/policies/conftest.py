import pytest

from ._server import FakeOpenAIServer


@pytest.fixture(scope="session")
def _openai_server():
    server = FakeOpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def server(_openai_server):
    """The running fake server, with no scripted replies and no recorded requests."""
    _openai_server.script()
    yield _openai_server
    _openai_server.script()


TRAINING_TEXTS = [
    '{"tool": "compile", "args": {}}',
    '{"tool": "answer", "args": {"completion": "<decision>{\\"classification\\": \\"deny\\"}</decision>"}}',
    "System: You review applications for a community grant.\n\nUser: The applicant is 17 years old.",
    "<reasoning>The applicant is a minor.</reasoning>",
]


@pytest.fixture(scope="session")
def tiny_lm():
    """A tiny random LlamaForCausalLM (hidden 32, 2 layers) and a BPE tokenizer trained on a few strings."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(TRAINING_TEXTS, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=4096,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    return LlamaForCausalLM(config), tokenizer
