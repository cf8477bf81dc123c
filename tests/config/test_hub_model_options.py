"""hub_model_options: a hub model in the local Hugging Face cache is loaded from it without a single request to the
hub (transformers would otherwise ask the hub for each file the cache lacks, five times with back-off, when it cannot
be reached).

The model is proofgym's tiny model, saved by transformers into a snapshot of the cache as huggingface_hub lays it
out (models--<namespace>--<name>/snapshots/<revision>, refs/main naming it); each load runs in a child process with
that cache and a hub endpoint that refuses connections.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from proofgym.policies import build_tiny_model

UNREACHABLE_HUB = "http://127.0.0.1:9"
CACHED = "proofgym-test/tiny"


@pytest.fixture(scope="module")
def hf_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("hf-home")
    model, tokenizer = build_tiny_model(home / "built", seed=0)
    repo = home / "hub" / f"models--{CACHED.replace('/', '--')}"
    revision = "0" * 40
    snapshot = repo / "snapshots" / revision
    model.save_pretrained(snapshot)
    tokenizer.save_pretrained(snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    return home


def load_offline(hf_home: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(HF_HOME=str(hf_home), HF_ENDPOINT=UNREACHABLE_HUB)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.parametrize("code", [
    f"from proofgym.model_server import load_model; print(load_model({CACHED!r}).name)",
    f"from proofgym.policies import build_policy; print(build_policy('hf', {{'model': {CACHED!r}, "
    f"'tokenizer': {CACHED!r}}}).model_name)",
], ids=["serve-model's loader", "the hf policy"])
def test_a_cached_hub_model_loads_without_asking_the_hub(hf_home, code):
    done = load_offline(hf_home, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [CACHED]
    assert UNREACHABLE_HUB not in done.stderr and "Retrying" not in done.stderr, done.stderr
