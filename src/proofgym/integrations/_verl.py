"""veRL: a ``compute_score`` entry point (and its batched form) for veRL's reward managers.

Point veRL's ``custom_reward_function.path`` at this module's file (or a two-line shim importing it)
with ``name: compute_score`` (NaiveRewardManager, one item per call) or ``compute_score_batch``
(BatchRewardManager). Safe inside Ray workers: no signals, no main-thread assumption (timeouts are
the verification runtime's own, enforced on its loop thread), one shared reward function per run
config per process, built on first use and safe to call from many threads at once.

Which run config scores an item, first match wins: ``extra_info["proofgym_config"]`` (a run-config
file or a shipped domain's name), the environment variable ``PROOFGYM_RUN_CONFIG``, then
``data_source`` when it names a shipped domain (``grant_eligibility``, ``proofgym/loan``...).

veRL needs a number for every item, so an invalid verification (which proofgym's reward function
abstains on) scores the *invalid fill*: ``extra_info["invalid_score"]``, else the environment
variable ``PROOFGYM_INVALID_SCORE``, else 0.0; the breakdown's ``valid`` is 0.0 for it, so it can
be masked or counted.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from proofgym.rewards import item_breakdown, label_text
from proofgym.integrations._run_config_source import reward_function_for_run_config

CONFIG_ENV = "PROOFGYM_RUN_CONFIG"
INVALID_SCORE_ENV = "PROOFGYM_INVALID_SCORE"


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Mapping[str, Any] | None = None,
                  **_: Any) -> dict[str, Any]:
    """Score one response: ``{"score": float, "reward", "outcome", "decision", "certified_decision",
    "valid", "abstained", "format", "certified", "correct", "grounded", "graded", "rejected"}``.

    ``solution_str`` is the response (veRL decodes it without the prompt); ``ground_truth`` is the
    gold decision as a string, or a reference object (``gold``, ``source_facts``) or its JSON text;
    ``extra_info`` may add ``source_facts`` / ``gold`` and ``prompt``. Raises ``ValueError`` only for
    setup mistakes (no run config found, a malformed reference), never for what a policy wrote.
    """
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[Any], ground_truths: Sequence[Any],
                        extra_infos: Sequence[Mapping[str, Any] | None] | None = None, **_: Any,
                        ) -> list[dict[str, Any]]:
    """:func:`compute_score` for a batch (veRL's BatchRewardManager), verified as one batch per run
    config: duplicates within the batch are verified once, through the runtime's cache."""
    n = len(solution_strs)
    if extra_infos is None:
        extra_infos = [None] * n
    for name, values in (("data_sources", data_sources), ("ground_truths", ground_truths),
                         ("extra_infos", extra_infos)):
        if len(values) != n:
            raise ValueError(f"{name} has {len(values)} items but solution_strs has {n}")
    groups: dict[str, list[int]] = {}
    for i in range(n):
        groups.setdefault(_config_source(data_sources[i], extra_infos[i]), []).append(i)
    results: list[dict[str, Any] | None] = [None] * n
    for source, indices in groups.items():
        reward_fn = reward_function_for_run_config(source)
        refs = [_reference(ground_truths[i], extra_infos[i], i) for i in indices]
        prompts = [_prompt(extra_infos[i]) for i in indices]
        # Whatever a solution is, the parser reports a non-text one as a format error: it never raises.
        items = reward_fn.score(prompts, [solution_strs[i] for i in indices], refs)
        for i, item in zip(indices, items):
            fill = _invalid_score(extra_infos[i])
            results[i] = item_breakdown(item, fill if item.reward is None else item.reward)
    return results  # type: ignore[return-value]


def _config_source(data_source: Any, extra_info: Mapping[str, Any] | None) -> str:
    if extra_info is not None and not isinstance(extra_info, Mapping):
        raise ValueError(f"extra_info must be a mapping or None, got {type(extra_info).__name__}")
    chosen = (extra_info or {}).get("proofgym_config") or os.environ.get(CONFIG_ENV) or data_source
    if not isinstance(chosen, (str, os.PathLike)) or not str(chosen).strip():
        raise ValueError(
            "no proofgym run config for this item: set extra_info['proofgym_config'] or the environment variable "
            f"{CONFIG_ENV} to a run-config file or a shipped domain name, or use a domain name as data_source "
            f"(got data_source={data_source!r})")
    return str(chosen)


def _reference(ground_truth: Any, extra_info: Mapping[str, Any] | None, index: int) -> dict[str, Any]:
    reference: dict[str, Any] = {}
    if isinstance(ground_truth, str):
        ground_truth = label_text(ground_truth, f"ground_truth[{index}]")
    if isinstance(ground_truth, Mapping):
        reference.update({key: ground_truth[key] for key in ("gold", "answer", "source_facts", "facts")
                          if key in ground_truth})
    elif ground_truth is not None:
        raise ValueError(f"ground_truth[{index}]: expected the gold decision (a string), a reference object or "
                         f"its JSON text, got {type(ground_truth).__name__}")
    for key in ("gold", "source_facts"):
        if extra_info and extra_info.get(key) is not None:
            reference.setdefault(key, extra_info[key])
    return reference


def _prompt(extra_info: Mapping[str, Any] | None) -> Any:
    prompt = (extra_info or {}).get("prompt")
    return prompt if isinstance(prompt, (str, list)) else None


def _invalid_score(extra_info: Mapping[str, Any] | None) -> float:
    value = (extra_info or {}).get("invalid_score")
    where = "extra_info['invalid_score']"
    if value is None:
        value, where = os.environ.get(INVALID_SCORE_ENV), INVALID_SCORE_ENV
    if value is None or value == "":
        return 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{where} must be finite, got {value!r}")
    return number
