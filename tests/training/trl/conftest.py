import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """Where the tests build proofgym's tiny model once (nothing is downloaded)."""
    return tmp_path_factory.mktemp("tiny-model")


@pytest.fixture
def tiny(tiny_model_dir):
    """A fresh copy of the tiny model and its tokenizer (built once, reloaded from disk per test)."""
    torch = pytest.importorskip("torch")
    from proofgym.policies._tiny import build_tiny_model

    # One thread: far faster than two on a machine whose other core is busy, and deterministic.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield build_tiny_model(tiny_model_dir, seed=0)
    torch.set_num_threads(threads)
