"""The kinds of file proofgym's commands read: declared by a top-level ``kind`` (``run``, ``eval``, ``rl``), else
recognised by their top-level keys; and the one vocabulary of their sections (``training``, ``evaluation``).

A file given to the command of another kind (``proofgym train --config eval.toml``) is one line naming the file, the
kind it is and the kind the command wants, instead of one key error per section it has and lacks. A file written
before ``kind`` existed, or with a section's old name (a run config's ``train:``, an eval config's ``[eval]``), still
loads: :func:`normalize_config` logs one deprecation line naming the change (logger ``proofgym.config``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proofgym.config._files import read_config_file
from proofgym.core import ConfigError

logger = logging.getLogger("proofgym.config")

#: The top-level key that declares a config file's kind.
KIND_KEY = "kind"


@dataclass(frozen=True)
class ConfigKind:
    """A kind of proofgym file: ``name`` (``eval config``), the top-level ``keys`` that only files of this kind have,
    ``command``, the command that reads it, ``tag``, the value of the ``kind`` key that declares it (``None``: a
    file that declares no kind, a rulebook or a rubric set), and ``renamed``, the old names of its sections
    (``(old, new)``), which still load with a deprecation line. ``str()`` is the name with its article
    (``an eval config``)."""

    name: str
    keys: frozenset[str]
    command: str
    article: str = "a"
    tag: str | None = None
    renamed: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return f"{self.article} {self.name}"


RUN_CONFIG = ConfigKind("run config", frozenset({"verifier", "parser", "reward", "runtime", "error_budget", "train"}),
                        "proofgym score, serve-reward or train --config", tag="run", renamed=(("train", "training"),))
# training and evaluation are every kind's section names: they tell no kind apart.
RL_CONFIG = ConfigKind("RL config", frozenset({"algorithm", "services", "rollout", "lora", "topology", "vllm",
                                               "reference"}),
                       "proofgym train --config", article="an", tag="rl")
# task_app_url and num_episodes: the reference's older eval files have them at the top level.
EVAL_CONFIG = ConfigKind("eval config", frozenset({"eval", "task_app_url", "num_episodes"}), "proofgym eval --config",
                         article="an", tag="eval", renamed=(("eval", "evaluation"),))
RULEBOOK = ConfigKind("rulebook", frozenset({"facts", "derived", "decisions", "default_decision", "posture",
                                             "min_confidence", "constraints", "decision_rules", "rules"}),
                      "proofgym rules validate")
RUBRIC_SET = ConfigKind("rubric set", frozenset({"criteria", "event", "outcome", "weights", "event_window"}),
                        "proofgym judge --rubric")

# The top-level keys a message shows, of those that gave a file's kind away.
_SHOWN_KEYS = 3

#: Every kind :func:`config_kind` recognises.
CONFIG_KINDS: tuple[ConfigKind, ...] = (RUN_CONFIG, RL_CONFIG, EVAL_CONFIG, RULEBOOK, RUBRIC_SET)
#: The kinds a file declares with ``kind``, by the value it gives.
DECLARED_KINDS: dict[str, ConfigKind] = {"run": RUN_CONFIG, "eval": EVAL_CONFIG, "rl": RL_CONFIG}

# Deprecation lines already logged in this process (one per file and change, however often the file is read).
_logged: set[str] = set()


def config_kind(data: Any) -> ConfigKind | None:
    """The kind of parsed file ``data``: the kind its ``kind`` key declares, else the one kind whose top-level keys
    it has; ``None`` when it declares none it knows and has none of any kind's keys, or some of two kinds' (a file
    of one kind with a stray key of another is that kind's file to report)."""
    if not isinstance(data, Mapping):
        return None
    if KIND_KEY in data:
        declared = data[KIND_KEY]
        return DECLARED_KINDS.get(declared) if isinstance(declared, str) else None
    found = [kind for kind in CONFIG_KINDS if kind.keys & set(data)]
    return found[0] if len(found) == 1 else None


def require_config_kind(data: Any, source: str | Path, *expected: ConfigKind) -> ConfigKind | None:
    """The kind of ``data`` (:func:`config_kind`) when it is one of ``expected`` or unclear (``None``: left to the
    expected kind's validation, which names each key at fault). Otherwise :class:`ConfigError`, one line naming
    ``source``, the kind ``data`` declares or is recognised as by its keys, the command that reads it and the kind
    the command wants; a ``kind`` that is no kind is one line too."""
    if isinstance(data, Mapping) and KIND_KEY in data and config_kind(data) is None:
        raise ConfigError(f"{source}: {KIND_KEY}: expected one of {', '.join(DECLARED_KINDS)}, "
                          f"got {data[KIND_KEY]!r}")
    found = config_kind(data)
    if found is None or found in expected:
        return found
    if KIND_KEY in data:
        why = f"it declares kind {found.tag}"
    else:
        keys = sorted(found.keys & set(data))
        why = "it has " + ", ".join(keys[:_SHOWN_KEYS]) + (", ..." if len(keys) > _SHOWN_KEYS else "")
    raise ConfigError(f"{source}: this is {found} ({why}), for {found.command}; this command wants "
                      f"{wanted_kinds(expected)}")


def wanted_kinds(expected: tuple[ConfigKind, ...]) -> str:
    """What a command reads, for a message: ``kind run or rl``, ``a rulebook``, ``a rubric set or kind rl``."""
    tags = [kind.tag for kind in expected if kind.tag is not None]
    parts = [str(kind) for kind in expected if kind.tag is None]
    if tags:
        parts.append(f"kind {' or '.join(tags)}")
    return " or ".join(parts)


def require_file_kind(path: str | Path, *expected: ConfigKind) -> ConfigKind | None:
    """:func:`require_config_kind` for the file at ``path``, for a command that hands the file to a reader of its
    own (a rulebook's, a rubric set's) or picks its reader by the kind (``proofgym train``): the kind found, or
    ``None``; a file the config reader refuses is left to that reader to report (``None``)."""
    try:
        data = read_config_file(path)
    except ConfigError:
        return None
    return require_config_kind(data, path, *expected)


def normalize_config(data: Mapping[str, Any], *, source: str | Path, kind: ConfigKind) -> dict[str, Any]:
    """``data`` as the loader of ``kind`` validates it: its ``kind`` key checked (:func:`require_config_kind`) and
    taken out, and each section under an old name (``train:``) moved to its name (``training:``). Each old name,
    and a file that declares no kind, is one deprecation line logged (once per file and change) naming the change;
    a section under both names is a :class:`ConfigError`. Data not read from a file (``source`` ``<config>``, a
    mapping built in Python) need not declare its kind."""
    require_config_kind(data, source, kind)
    syntax = Path(str(source)).suffix.lower()
    changes = []
    out = dict(data)
    out.pop(KIND_KEY, None)
    for old, new in kind.renamed:
        if old not in out:
            continue
        if new in out:
            raise ConfigError(f"{source}: both {_section(old, syntax)} and {_section(new, syntax)}: "
                              f"{_section(old, syntax)} is the old name of {_section(new, syntax)}; keep "
                              f"{_section(new, syntax)} only")
        changes.append(f"{_section(old, syntax)} is now {_section(new, syntax)}")
        out = {new if key == old else key: value for key, value in out.items()}
    from_file = not str(source).startswith("<")
    if KIND_KEY not in data and kind.tag is not None and from_file:
        changes.append(f"add {_declaration(kind.tag, syntax)}")
    if changes:
        _deprecated(f"{source}: {'; '.join(changes)}")
    return out


def _section(name: str, syntax: str) -> str:
    if syntax == ".toml":
        return f"`[{name}]`"
    if syntax == ".json":
        return f'`"{name}"`'
    return f"`{name}:`"


def _declaration(tag: str, syntax: str) -> str:
    if syntax == ".toml":
        return f'`{KIND_KEY} = "{tag}"` (at the top, before any table)'
    if syntax == ".json":
        return f'`"{KIND_KEY}": "{tag}"`'
    return f"`{KIND_KEY}: {tag}`"


def _deprecated(line: str) -> None:
    if line in _logged:
        return
    _logged.add(line)
    logger.warning("deprecated: %s", line)
