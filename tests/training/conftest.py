import pytest

torch = pytest.importorskip("torch")

from proofgym.policies import build_tiny_model  # noqa: E402

from ._support import SMALL  # noqa: E402


@pytest.fixture(scope="session")
def tiny_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("tiny-cache")


@pytest.fixture
def small_model(tiny_cache):
    """A fresh (reloaded from disk) small model and tokenizer, on one thread for determinism and speed."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield build_tiny_model(tiny_cache, seed=0, config=SMALL)
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def _warm_state(tiny_cache):
    """The small model after a short format warm-up: about half its samples parse, so rewards spread."""
    from proofgym.training import SFTConfig, demo_completion, demo_rows, sft_warmup

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(tiny_cache, seed=0, config=SMALL)
    rows = demo_rows(0, 64)

    def example(rng):
        row = rng.choice(rows)
        return row["prompt"], demo_completion(rng.choice(["permit", "deny"]), row["source_facts"])

    sft_warmup(model, tokenizer, example, config=SFTConfig(steps=60, batch_size=16, learning_rate=1e-2,
                                                            warmup_steps=0))
    torch.set_num_threads(threads)
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.fixture
def warm_model(small_model, _warm_state):
    """A fresh copy of the warmed-up small model and its tokenizer."""
    model, tokenizer = small_model
    model.load_state_dict(_warm_state)
    return model, tokenizer
