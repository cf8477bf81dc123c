"""proofgym's GRPOTrainer overrides four private TRL methods (no public extension point gives the same behaviour; the
reason is written above each override). This pins them: the source of every TRL method those overrides replace or rely
on is recorded as of TRL 1.16.0, and a TRL upgrade that changes one fails here, naming the method and what to re-check.

To upgrade TRL: read the diff of each method named by a failure, re-port the override in
src/proofgym/training/trl/_trainer.py where the change touches what it does, then record the new digest here.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import textwrap

import pytest

pytest.importorskip("trl")
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

from transformers import Trainer  # noqa: E402
from trl import GRPOTrainer  # noqa: E402

from proofgym.training.trl._trainer import ProofgymGRPOTrainer  # noqa: E402

TRAINER_FILE = "src/proofgym/training/trl/_trainer.py"

#: The private TRL methods ProofgymGRPOTrainer overrides, and what each override does there.
OVERRIDDEN = {
    "_get_train_sampler": "the curriculum's sampler",
    "_generate_and_score_completions": "dynamic sampling, the explore temperature, the curriculum's feedback",
    "_generate_single_turn": "proofgym's sampler for plain-text sampling",
    "_get_per_token_logps_and_entropies": "shared-prompt log-probabilities; the first update's kept for the next",
}

#: (class, method) -> (parameter names, sha256 of the dedented source, first 16 hex digits; what proofgym relies on).
PINNED: dict[tuple[type, str], tuple[tuple[str, ...], str, str]] = {
    (GRPOTrainer, "_get_train_sampler"): (
        ("self", "dataset"), "c0ce48638e78ccc9",
        "replaced by the CurriculumSampler: one draw per generation, each index repeated num_generations times"),
    (GRPOTrainer, "_generate_and_score_completions"): (
        ("self", "inputs"), "3d5cec813b83b396",
        "called once per round; its output keys are merged by _merge (_MERGEABLE), its advantages read by _spread, "
        "and with num_iterations set to 1 it skips the old policy's log-probabilities"),
    (GRPOTrainer, "_generate_single_turn"): (
        ("self", "prompt_ids", "images", "multimodal_fields", "num_generations", "has_tool_images"),
        "932da26950bae32c",
        "replaced for plain temperature / top-k sampling of text: what it samples and returns (ids, no logprobs)"),
    (GRPOTrainer, "_get_per_token_logps_and_entropies"): (
        ("self", "model", "input_ids", "attention_mask", "logits_to_keep", "batch_size", "compute_entropy",
         "compute_aux_loss", "pixel_values", "image_grid_thw", "num_images", "pixel_attention_mask", "spatial_shapes",
         "num_tiles", "image_sizes", "token_type_ids", "mm_token_type_ids", "image_position_ids"),
        "fecf708797b16e29",
        "replaced by shared_prompt_logprobs for text batches: its logits temperature, its (logps, entropies, aux) "
        "result"),
    (GRPOTrainer, "__init__"): (
        ("self", "model", "reward_funcs", "args", "train_dataset", "eval_dataset", "processing_class",
         "reward_processing_classes", "callbacks", "optimizers", "quantization_config", "peft_config", "tools",
         "rollout_func", "environment_factory"),
        "08b825a073b699ff",
        "with beta 0 it builds no reference model; the in-memory reference is then prepared as TRL prepares its own "
        "(_prepare_reference: eval, no grad, no dropout, fused LM head, accelerator.prepare_model)"),
    (GRPOTrainer, "get_train_dataloader"): (
        ("self",), "4e81492828d00e65", "the one caller of _get_train_sampler; a fresh batch per generation"),
    (GRPOTrainer, "_prepare_inputs"): (
        ("self", "generation_batch"), "40caff99c2cf1292",
        "generates through _generate_and_score_completions and reuses the buffered batch num_iterations times "
        "(the kept first-update log-probabilities are written into that buffer)"),
    (GRPOTrainer, "_generate"): (
        ("self", "prompts"), "bea6bc4f3207f396",
        "calls _generate_single_turn with each prompt repeated num_generations times in a row; appends one entry "
        "per generation to each completions/* metric (_weigh_round_metrics)"),
    (GRPOTrainer, "_calculate_rewards"): (
        ("self", "inputs", "prompts", "completions", "completion_ids_list"), "5017fb893c0ca9dd",
        "calls reward_funcs[0] once per generation, so its last_items are the generation's (the curriculum reads "
        "their 'correct' component after the scoring)"),
    (GRPOTrainer, "compute_loss"): (
        ("self", "model", "inputs", "return_outputs", "num_items_in_batch"), "adf7308e034ac6c4",
        "called through super() with the loss then scaled; returns the loss (and outputs)"),
    (GRPOTrainer, "_compute_loss"): (
        ("self", "model", "inputs"), "16c4f3917b9fd264",
        "reads old_per_token_logps from inputs (None: the current policy's, detached) and the policy's "
        "log-probabilities through _get_per_token_logps_and_entropies"),
    (Trainer, "create_scheduler"): (
        ("self", "num_training_steps", "optimizer"), "ddd5575b267552a3",
        "overridden (public) with the compact loop's schedule; sets _created_lr_scheduler as this does"),
}


#: The attributes of TRL's GRPOTrainer (and transformers' Trainer) that ProofgymGRPOTrainer reads or sets.
TRAINER_STATE = ("_created_lr_scheduler", "_metrics", "_tokenizer", "accelerator", "args", "beta", "eos_token_ids",
                 "generation_config", "generation_kwargs", "is_deepspeed_enabled", "is_fsdp_enabled", "lr_scheduler",
                 "max_completion_length", "model", "model_wrapped", "num_generations", "num_iterations", "optimizer",
                 "processing_class", "ref_model", "reward_funcs", "temperature", "train_dataset",
                 "use_transformers_continuous_batching", "use_vllm")


def _digest(function) -> str:
    return hashlib.sha256(textwrap.dedent(inspect.getsource(function)).encode()).hexdigest()[:16]


def test_every_private_trl_method_proofgym_overrides_is_listed_and_pinned():
    trl_names = {name for cls in GRPOTrainer.__mro__ for name in vars(cls)}
    overridden = {name for name in vars(ProofgymGRPOTrainer)
                  if name.startswith("_") and not name.startswith("__") and name in trl_names}
    assert overridden == set(OVERRIDDEN), (
        f"ProofgymGRPOTrainer overrides private TRL methods {sorted(overridden - set(OVERRIDDEN))} that are not "
        f"pinned here (or no longer overrides {sorted(set(OVERRIDDEN) - overridden)}): use a public TRL extension "
        "point where one gives the same behaviour, else say why in a comment above the override and pin it here")
    assert set(OVERRIDDEN) <= {name for cls, name in PINNED}


@pytest.mark.parametrize(("cls", "name"), list(PINNED), ids=[f"{cls.__name__}.{name}" for cls, name in PINNED])
def test_the_trl_methods_the_overrides_rely_on_have_not_changed(cls, name):
    parameters, digest, relied_on = PINNED[(cls, name)]
    function = vars(cls)[name]
    where = f"{cls.__module__}.{cls.__name__}.{name}"
    message = (f"TRL changed {where}: re-port proofgym's override in {TRAINER_FILE} (proofgym relies on: {relied_on}), "
               "then record the new pin in this test")
    assert tuple(inspect.signature(function).parameters) == parameters, message
    assert _digest(function) == digest, message


def test_the_trainer_state_the_overrides_use_is_still_set_by_trl():
    source = "".join(inspect.getsource(cls) for cls in GRPOTrainer.__mro__
                     if cls.__module__.startswith(("trl.", "transformers.")))
    gone = [name for name in TRAINER_STATE
            if not re.search(rf"self\.{name}\s*(:[^=\n]*)?=(?!=)", source) and f"def {name}(" not in source]
    assert not gone, (f"TRL's GRPOTrainer no longer sets {gone}: re-port proofgym's override in {TRAINER_FILE}, "
                      "which reads or sets them")
