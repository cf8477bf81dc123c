"""The kinds of file proofgym's commands read, recognised by their top-level keys.

A file given to the command of another kind (``proofgym train --config eval.toml``) is then one line naming the kind
it is and the command that runs it, instead of one key error per section it has and lacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proofgym.config._files import read_config_file
from proofgym.core import ConfigError


@dataclass(frozen=True)
class ConfigKind:
    """A kind of proofgym file: ``name`` (``eval config``), the top-level ``keys`` that only files of this kind have,
    and ``command``, the command that reads it. ``str()`` is the name with its article (``an eval config``)."""

    name: str
    keys: frozenset[str]
    command: str
    article: str = "a"

    def __str__(self) -> str:
        return f"{self.article} {self.name}"


RUN_CONFIG = ConfigKind("run config", frozenset({"verifier", "parser", "reward", "runtime", "error_budget", "train"}),
                        "proofgym score, serve-reward or train --config")
RL_CONFIG = ConfigKind("RL config", frozenset({"algorithm", "services", "rollout", "training", "evaluation", "lora",
                                               "topology", "vllm", "reference"}),
                       "proofgym train --config", article="an")
# task_app_url and num_episodes: the reference's older eval files have them at the top level.
EVAL_CONFIG = ConfigKind("eval config", frozenset({"eval", "task_app_url", "num_episodes"}), "proofgym eval --config",
                         article="an")
RULEBOOK = ConfigKind("rulebook", frozenset({"facts", "derived", "decisions", "default_decision", "posture",
                                             "min_confidence", "constraints", "decision_rules", "rules"}),
                      "proofgym rules validate")
RUBRIC_SET = ConfigKind("rubric set", frozenset({"criteria", "event", "outcome", "weights", "event_window"}),
                        "proofgym judge --rubric")

# The top-level keys a message shows, of those that gave a file's kind away.
_SHOWN_KEYS = 3

#: Every kind :func:`config_kind` recognises.
CONFIG_KINDS: tuple[ConfigKind, ...] = (RUN_CONFIG, RL_CONFIG, EVAL_CONFIG, RULEBOOK, RUBRIC_SET)


def config_kind(data: Any) -> ConfigKind | None:
    """The kind of parsed file ``data``: the one kind whose top-level keys it has; ``None`` when it has none of any
    kind's, or some of two kinds' (a file of one kind with a stray key of another is that kind's file to report)."""
    if not isinstance(data, Mapping):
        return None
    found = [kind for kind in CONFIG_KINDS if kind.keys & set(data)]
    return found[0] if len(found) == 1 else None


def require_config_kind(data: Any, source: str | Path, *expected: ConfigKind) -> None:
    """Raise :class:`ConfigError`, one line naming ``source``, the kind ``data`` is and the command that reads it,
    when ``data`` is recognisably a file of another kind than ``expected``; nothing otherwise (a file of no clear
    kind is left to the expected kind's validation, which names each key at fault)."""
    found = config_kind(data)
    if found is None or found in expected:
        return
    keys = sorted(found.keys & set(data))
    shown = ", ".join(keys[:_SHOWN_KEYS]) + (", ..." if len(keys) > _SHOWN_KEYS else "")
    raise ConfigError(f"{source}: this is {found} (it has {shown}), for {found.command}, not "
                      f"{' or '.join(map(str, expected))}")


def require_file_kind(path: str | Path, *expected: ConfigKind) -> None:
    """:func:`require_config_kind` for the file at ``path``, for a command that hands the file to a reader of its
    own (a rulebook's, a rubric set's); a file the config reader refuses is left to that reader to report."""
    try:
        data = read_config_file(path)
    except ConfigError:
        return
    require_config_kind(data, path, *expected)
