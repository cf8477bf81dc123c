"""Which run a checkpoint belongs to: the seed and a canonical hash of the config it was written with, and the check
before a run resumes from it.

A run resumes only from a checkpoint of the same run: the same ``training.seed`` and the same config, up to
:data:`RESUMABLE_KEYS`. The config's identity is the resolved config's keys set to other than their defaults (a
proofgym release that adds a key with its default then leaves every checkpoint resumable), flattened to dotted keys,
credentials redacted; its hash is the SHA-256 of that mapping as canonical JSON.

A checkpoint written before this record (no ``config_hash``) is resumed with a warning: it cannot be checked, and
refusing it would throw away the runs that were resumable until then.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from proofgym.core import redact_secrets
from proofgym.training.rl._config import RLConfig
from proofgym.training.rl._task_app import RLError

#: Keys that may change when a run resumes: how long it goes and when it stops (iterations, the error budget, the
#: stop rule), how often it evaluates and checkpoints, where its services run, how many CPU threads it uses and where
#: it writes. The rest say what the run learns from and how; ``training.seed`` is checked on its own.
RESUMABLE_KEYS: tuple[str, ...] = (
    "services", "compute", "topology", "vllm", "reference", "policy_server",
    "training.seed", "training.num_epochs", "training.iterations_per_epoch", "training.max_error_share",
    "training.checkpoint_every", "training.output_dir", "training.request_timeout_s", "training.log_interval",
    "training.cpu_threads",
    "training.async_semaphore_max", "rollout.max_concurrent_rollouts",
    "evaluation.every_n_iters", "evaluation.stop_at", "evaluation.stop_streak", "evaluation.confirm_seeds",
)


def run_identity(config: RLConfig) -> dict[str, Any]:
    """What a checkpoint records of its run: ``seed``, ``config`` (dotted key -> value, see the module docstring)
    and ``config_hash``."""
    flat = _flatten(redact_secrets(config.model_dump(mode="json", exclude_defaults=True)))
    identity = {key: value for key, value in flat.items()
                if not any(key == k or key.startswith(k + ".") for k in RESUMABLE_KEYS)}
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return {"seed": config.training.seed, "config_hash": hashlib.sha256(canonical.encode()).hexdigest(),
            "config": identity}


def check_resume(state: Mapping[str, Any], config: RLConfig, checkpoint: Path) -> str | None:
    """Raise :class:`RLError` (one line: what differs, what to do) when ``state`` (a checkpoint's state.json) is
    another run's; the warning to note when it predates the record and cannot be checked, else None."""
    if "config_hash" not in state:
        return (f"{checkpoint} records no config hash or seed (written before proofgym checked resumes): resuming it "
                "unchecked; if it is another run's, stop and start this one in another --output-dir")
    current = run_identity(config)
    problems = []
    if state.get("seed") != current["seed"]:
        problems.append(f"it was written with training.seed {state.get('seed')}, this run has {current['seed']}")
    if state["config_hash"] != current["config_hash"]:
        saved: Mapping[str, Any] = state["config"] if isinstance(state.get("config"), Mapping) else {}
        changed = sorted(key for key in set(saved) | set(current["config"])
                         if saved.get(key, _ABSENT) != current["config"].get(key, _ABSENT))
        problems.append(f"the config changed since ({', '.join(changed) or 'its hash differs'})")
    if not problems:
        return None
    again = f"give --seed {state.get('seed')} and " if state.get("seed") != current["seed"] else ""
    raise RLError(f"cannot resume from {checkpoint}: {'; '.join(problems)}. To resume that run, {again}use the "
                  f"config it was written with; to start this one, give another --output-dir (or delete "
                  f"{checkpoint})")


_ABSENT = object()


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat
