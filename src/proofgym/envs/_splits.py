"""Seeds and splits: ``split`` (train / val / test) and ``index`` in any environment's config.

Every environment's seeds are partitioned into three disjoint splits. An environment says how (a
:class:`SeedPartition` as its ``seed_partition`` attribute); one that does not gets the default,
:class:`BlockPartition` with blocks of one seed (seed ``s`` is in train when ``s mod 10 < 8``, val when it is
8, test when it is 9). :func:`~proofgym.envs.make` takes the two keys out of the config before the factory
sees them: ``make(name, split="test")`` is a :class:`SplitEnv` whose ``reset(i)`` is the environment's
``reset`` of the ``i``-th test seed. So every registered environment, a plugin's included, has splits.

How ``split``, ``index`` and the seed combine (the seed is ``reset``'s argument, ``env.seed`` of a request):

- no ``split``: the seed is the environment's own seed; ``index`` is refused (it is a position in a split);
- ``split`` alone: the seed is the position in the split;
- ``split`` and ``index``: ``index`` is the position, and a seed given too must equal it (the reference's
  client sends both, equal); a different one is an error naming ``index``, never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, Mapping, Protocol, Self, Sequence, runtime_checkable

from proofgym.core import ConfigError
from proofgym.envs._core import Environment, Observation, StepResult, env_hook

#: The splits, in the order they are listed everywhere.
SPLITS: tuple[str, ...] = ("train", "val", "test")
#: The reference's task difficulties, easiest first (its eval files set ``difficulty`` to one of them): an
#: environment whose tasks have a difficulty accepts these values for its ``difficulty`` config key.
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
#: The config keys :func:`~proofgym.envs.make` reads itself, for every environment.
SPLIT_KEYS: tuple[str, ...] = ("split", "index")
_MAX_SEED = (1 << 63) - 1


@runtime_checkable
class SeedPartition(Protocol):
    """How an environment's seeds fall into train / val / test: disjoint, and deterministic.

    ``split_of(seed)`` is the split a seed is in; ``seed_at(split, index)`` the ``index``-th seed of a split (in
    increasing order of seed); ``size(split)`` how many distinct tasks the split holds (``None``: unbounded), so
    that a split with none is refused when the environment is built rather than when it is reset.
    """

    def split_of(self, seed: int) -> str: ...

    def seed_at(self, split: str, index: int) -> int: ...

    def size(self, split: str) -> int | None: ...


@dataclass(frozen=True)
class BlockPartition:
    """Seeds in blocks of ``block`` consecutive seeds; block ``k = seed // block`` is in train when ``k mod 10`` is
    0-7, val when it is 8 and test when it is 9 (80 / 10 / 10). The default, with ``block = 1``; an environment
    whose seeds come in balanced groups (a rulebook domain's generator covers every branch once per ``block``
    seeds) uses the group as the block, so that every split is balanced too."""

    block: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.block, bool) or not isinstance(self.block, int) or self.block < 1:
            raise ValueError(f"a block holds at least one seed, got {self.block!r}")

    def split_of(self, seed: int) -> str:
        position = (seed // self.block) % 10
        return "train" if position < 8 else "val" if position == 8 else "test"

    def seed_at(self, split: str, index: int) -> int:
        _check_split(split)
        group, offset = divmod(index, self.block)
        if split == "train":
            cycle, position = divmod(group, 8)
        else:
            cycle, position = group, 8 if split == "val" else 9
        return (10 * cycle + position) * self.block + offset

    def size(self, split: str) -> int | None:
        _check_split(split)
        return None


@dataclass(frozen=True)
class TaskPartition:
    """A finite task set: seed ``s`` is task ``s mod n`` (``n = len(task_splits)``), and ``task_splits[t]`` is the
    split of task ``t``. The ``index``-th seed of a split is its ``index mod m``-th task (``m`` tasks in the split)
    in round ``index // m``: seeds past the split's tasks repeat them, as seeds past ``n`` repeat the tasks."""

    task_splits: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.task_splits:
            raise ValueError("a task partition needs at least one task")
        for split in self.task_splits:
            _check_split(split)

    def split_of(self, seed: int) -> str:
        return self.task_splits[seed % len(self.task_splits)]

    def seed_at(self, split: str, index: int) -> int:
        tasks = self._tasks(split)
        if not tasks:
            raise ValueError(f"split {split!r} holds no task")
        rounds, position = divmod(index, len(tasks))
        return tasks[position] + rounds * len(self.task_splits)

    def size(self, split: str) -> int | None:
        return len(self._tasks(split))

    def _tasks(self, split: str) -> list[int]:
        _check_split(split)
        return [task for task, name in enumerate(self.task_splits) if name == split]


DEFAULT_PARTITION = BlockPartition()


def seed_partition(env: Any) -> SeedPartition:
    """``env``'s partition of its seeds: its ``seed_partition`` hook, else :data:`DEFAULT_PARTITION`."""
    partition = env_hook(env, "seed_partition")
    if partition is None:
        return DEFAULT_PARTITION
    if not isinstance(partition, SeedPartition):
        raise TypeError(f"{type(env).__name__}.seed_partition must be a SeedPartition (split_of, seed_at, size), "
                        f"got {type(partition).__name__}")
    return partition


@dataclass(frozen=True)
class SplitSelection:
    """The validated ``split`` and ``index`` of a config (see the module docstring for how they combine)."""

    split: str
    index: int | None = None

    def position(self, seed: int) -> int:
        """The position in the split that ``seed`` (a request's or ``reset``'s) stands for: ``index`` when there
        is one, which ``seed`` must equal (else :class:`~proofgym.core.ConfigError` naming ``index``), else ``seed``."""
        if self.index is None:
            return seed
        if seed != self.index:
            message = (f"index ({self.index}) and the seed ({seed}) name different positions in split "
                       f"{self.split!r}: within a split the seed is the index; give one of them, or both equal")
            raise ConfigError(f"index: {message}", problems=[_problem("index", message, self.index)])
        return self.index


def split_selection(config: Mapping[str, Any]) -> tuple[SplitSelection | None, dict[str, Any]]:
    """``config``'s ``split`` / ``index``, validated, and the rest of the config (what the factory gets).

    Raises :class:`~proofgym.core.ConfigError` naming the key and what was expected (its ``problems`` in
    pydantic's shape, so a task app answers a 422 at ``env.config.<key>``)."""
    rest = {key: value for key, value in config.items() if key not in SPLIT_KEYS}
    split, index = config.get("split"), config.get("index")
    problems = []
    if split is not None and (not isinstance(split, str) or split not in SPLITS):
        problems.append(_problem("split", f"expected one of {', '.join(SPLITS)}", split, "literal_error"))
    if index is not None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= _MAX_SEED:
            problems.append(_problem("index", "expected an integer from 0 to 2**63-1 (a position in the split)",
                                     index, "int_type"))
        elif split is None:
            problems.append(_problem("index", "index is a position within a split: give split (one of "
                                              f"{', '.join(SPLITS)}) too", index))
    if problems:
        raise ConfigError("; ".join(f"{p['loc'][0]}: {p['msg']} (got {p['input']!r})" for p in problems),
                          problems=problems)
    return (None if split is None else SplitSelection(split, index)), rest


class SplitEnv:
    """An environment whose seeds are the positions in one split of another's: ``reset(i)`` resets the wrapped
    environment with the ``i``-th seed of the split (``index``, when the selection has one, must equal ``i``).

    Everything else is the wrapped environment's (``tools``, ``step``, ``blocking``, ``accepts_text``, its own
    attributes); ``oracle_actions(i)`` is the wrapped one's for the same seed (``None`` when it has none). The first
    observation's ``data`` also says ``split``, ``index`` (the position) and ``env_seed`` (the environment's seed it
    stands for).
    """

    def __init__(self, env: Environment, selection: SplitSelection) -> None:
        self.env = env
        self.selection = selection
        self.partition = seed_partition(env)
        if self.partition.size(selection.split) == 0:
            env.close()
            sizes = ", ".join(f"{name} {self.partition.size(name)}" for name in SPLITS)
            message = f"this environment's config has no task in split {selection.split!r} (tasks per split: {sizes})"
            raise ConfigError(f"split: {message}", problems=[_problem("split", message, selection.split)])

    def env_seed(self, seed: int) -> int:
        """The wrapped environment's seed that ``seed`` (a position in the split) stands for."""
        return self.partition.seed_at(self.selection.split, self.selection.position(seed))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.env.tools

    def reset(self, seed: int) -> Observation:
        position = self.selection.position(seed)
        env_seed = self.partition.seed_at(self.selection.split, position)
        observation = self.env.reset(env_seed)
        data = {**observation.data, "split": self.selection.split, "index": position, "env_seed": env_seed}
        return Observation(observation.text, data)

    def step(self, action: Any) -> StepResult:
        return self.env.step(action)

    @property
    def oracle_actions(self) -> Callable[[int], Sequence[Any]] | None:
        """The wrapped environment's oracle, for a position in the split; ``None`` when it has none."""
        oracle = env_hook(self.env, "oracle_actions")
        if not callable(oracle):
            return None
        return lambda seed: oracle(self.env_seed(seed))

    def close(self) -> None:
        self.env.close()

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not set yet (a failed __init__): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SplitEnv({self.env!r}, split={self.selection.split!r})"


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: expected one of {', '.join(SPLITS)}")


def _problem(key: str, message: str, value: Any, kind: str = "value_error") -> dict[str, Any]:
    return {"loc": (key,), "msg": message, "input": value, "type": kind}
