"""A tiny causal language model and its tokenizer, built locally (nothing from a hub) and cached on disk.

The tokenizer is trained on the text of the task the model is built for: the grant-eligibility demo's short prompt
and answer (:func:`demo_prompt`, :func:`demo_completion`; the demo itself is :mod:`proofgym.training`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proofgym.domains import Record

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
# Digits, booleans and decisions are always tokens of their own: numbers are read digit by digit,
# and a fact value or a decision never fuses with the punctuation around it.
_ISOLATED = r"\d|true|false|permit|deny"
_READY = "proofgym-tiny.json"

#: The domain of the task the tiny model is built for.
DEMO_DOMAIN_NAME = "grant_eligibility"


def demo_prompt(record: Record) -> str:
    """The prompt for ``record``: its four facts in one short line."""
    facts = record.facts
    residence = "resident" if facts["resident"] else "not resident"
    grant = "active grant" if facts["has_active_grant"] else "no active grant"
    return f"Grant application: age {facts['age']}, annual income {facts['annual_income']}, {residence}, {grant}."


def demo_completion(decision: str, facts: Mapping[str, Any]) -> str:
    """The answer format: one decision block restating ``facts`` (in order), then ``decision``."""
    body = json.dumps({"facts": dict(facts), "classification": decision})
    return f"<decision>{body}</decision>"


def tokenizer_corpus(n: int = 4_000, seed: int = 10_007) -> list[str]:
    """Prompts and answers (both decisions) of ``n`` records: the text the demo's tokenizer is trained on."""
    from proofgym.domains import get_domain

    domain = get_domain(DEMO_DOMAIN_NAME)
    texts: list[str] = []
    for i, record in enumerate(domain.generate(seed, n)):
        texts.append(demo_prompt(record))
        texts.append(demo_completion(domain.spec.decisions[i % len(domain.spec.decisions)], record.facts))
    return texts


@dataclass(frozen=True)
class TinyModelConfig:
    """Shape of the tiny model (a ``LlamaForCausalLM``) and of its byte-level BPE tokenizer."""

    hidden_size: int = 192
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 512
    max_positions: int = 128
    vocab_size: int = 512

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"TinyModelConfig.{name} must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_heads:
            raise ValueError(f"TinyModelConfig.hidden_size ({self.hidden_size}) must be a multiple of "
                             f"num_heads ({self.num_heads})")
        if self.vocab_size < 260:
            raise ValueError(f"TinyModelConfig.vocab_size must be at least 260 (256 bytes and the special "
                             f"tokens), got {self.vocab_size}")


def build_tiny_model(
    cache_dir: str | Path,
    *,
    seed: int,
    config: TinyModelConfig | None = None,
    corpus: Sequence[str] | None = None,
) -> tuple[Any, Any]:
    """``(model, tokenizer)``: a freshly initialised ``LlamaForCausalLM`` and a ``PreTrainedTokenizerFast``.

    The tokenizer is a byte-level BPE trained on ``corpus`` (default: the demo task's prompts and
    answers), digits split one per token, with ``<s>`` prepended to every encoded text, ``</s>`` as
    end of sequence, ``<pad>`` and left padding. The model's weights are drawn from ``seed``. Both
    are saved under ``cache_dir`` (a folder named after a hash of the config, the seed and the
    corpus) and loaded from there when already built.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    config = config or TinyModelConfig()
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    if corpus is None:
        corpus = tokenizer_corpus()
    corpus = list(corpus)
    if not corpus or not all(isinstance(text, str) for text in corpus):
        raise ValueError("corpus must be a non-empty sequence of strings")
    key = _cache_key(config, seed, corpus)
    path = Path(cache_dir).expanduser() / f"tiny-llama-{key}"
    if (path / _READY).is_file():
        with quiet_transformers():
            tokenizer = PreTrainedTokenizerFast.from_pretrained(path, local_files_only=True)
            model = LlamaForCausalLM.from_pretrained(path, local_files_only=True)
        return model, tokenizer

    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]  # transformers' __init__ is untyped
        tokenizer_object=_train_tokenizer(corpus, config.vocab_size),
        bos_token=BOS, eos_token=EOS, pad_token=PAD, padding_side="left",
        model_max_length=config.max_positions,
    )
    model_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        max_position_embeddings=config.max_positions,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(model_config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    with quiet_transformers():
        _save(path, model, tokenizer, {"config": asdict(config), "seed": seed, "key": key})
    return model, tokenizer


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No transformers progress bars for a 7 MB local checkpoint (the setting is restored afterwards)."""
    from transformers.utils import logging

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped in transformers
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()  # type: ignore[no-untyped-call]  # untyped in transformers


def _train_tokenizer(corpus: list[str], vocab_size: int) -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    # No regex split on spaces: the fixed phrases of the task merge into single tokens, so a prompt
    # and an answer are a dozen or so tokens each, not one per word.
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_ISOLATED), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, tokenizer.token_to_id(BOS))],
    )
    return tokenizer


def _cache_key(config: TinyModelConfig, seed: int, corpus: list[str]) -> str:
    digest = hashlib.sha256(json.dumps({"config": asdict(config), "seed": seed}, sort_keys=True).encode())
    for text in corpus:
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()[:16]


def _save(path: Path, model: Any, tokenizer: Any, meta: dict[str, Any]) -> None:
    """Write into a temporary folder beside ``path`` and rename it: a crash never leaves a half-built cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / _READY).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        if path.exists() and not (path / _READY).is_file():
            shutil.rmtree(path)  # left half-written by an older version or by hand
        try:
            os.replace(staging, path)
        except OSError:
            if not (path / _READY).is_file():  # another process did not win the race: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
