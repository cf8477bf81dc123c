"""Single-turn rulebook environments: one record of a shipped domain, one answer, scored by the domain's reward path.

``reset(seed)`` draws one record of the domain deterministically and shows it with the domain's
prompt; the one action is the answer (the ``answer`` tool, or the completion as plain text), which
is scored by the same :class:`~proofgym.rewards.RewardFunction` a trainer uses -- the one built from
the domain's default run config (``configs/run/<domain>.yaml``), or from ``run_config`` -- and ends the
episode. So a rulebook domain is served, rolled out and evaluated exactly like the Verilog
environment, with the same verdicts and reward components.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Mapping
from typing import Any, Callable, cast

from pydantic import BaseModel, ConfigDict, Field

from proofgym.config import ConfigError, RunConfig, load_run_config, parse_run_config
from proofgym.domains._dataset import build_example, gold_completion
from proofgym.domains._domain import Domain, Record, get_domain
from proofgym.domains._verifier import RulebookVerifier
from proofgym.envs import (
    AnswerTask,
    BlockPartition,
    Observation,
    SingleAnswerEnv,
    TaskPartition,
    answer_reward_function,
    answer_tool,
    report_verification_caches,
    run_config_version,
    validated_env_config,
)
from proofgym.rewards import RewardFunction
from proofgym.runtime import InProcessExecutor, VerificationRuntime

ANSWER_TOOL = answer_tool(
    "Submit your complete answer (reasoning and decision block, in the format the instructions give); "
    "this ends the episode.")


class RulebookEnvConfig(BaseModel):
    """Configuration of a rulebook environment.

    ``chat``: the prompt as a system message plus the record as the user message (``True``), or
    one user message holding both. ``seed_offset`` is added to every seed (disjoint offsets give
    disjoint record sets, e.g. for held-out evaluation). ``max_turns`` above 1 lets the agent retry
    after a malformed tool call (a format failure in the answer itself still ends the episode).
    ``run_config``: a run config file whose reward path scores the answers, instead of the
    domain's default.

    ``split`` / ``index`` (read by :func:`~proofgym.envs.make` for every environment) pick train / val / test
    seeds by whole balance periods (:attr:`RulebookEnv.seed_partition`), so each split is as balanced over
    decisions and rule branches as the generator. ``split: test`` is this environment's held-out set: no test
    seed is a train seed. The training loop's and the demo's held-out rows (``heldout.seed``,
    ``HELDOUT_SEED``) are drawn from the generator with their own seed, not from these seeds, and are held out
    from their training rows by fact set; the two are separate notions.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    chat: bool = True
    seed_offset: int = Field(0, ge=0, le=1 << 62)
    max_turns: int = Field(1, ge=1, le=100)
    run_config: str | None = Field(None, min_length=1)


def default_run_config(domain: str | Domain) -> RunConfig:
    """The domain's default reward path: its own output contract, the embedded kernel, the default shaping.

    Read from the domain's one run config file, :attr:`~proofgym.domains.Domain.run_config_path` (for the shipped
    domains ``configs/run/<domain>.yaml`` links to it). A domain folder (``proofgym domain init``) without that
    file gets :func:`folder_run_config`.
    """
    domain = get_domain(domain) if isinstance(domain, str) else domain
    path = domain.run_config_path
    if not path.is_file():
        if (domain.rulebook_path.parent / "domain.yaml").is_file():
            return parse_run_config(folder_run_config(domain))
        raise ConfigError(f"domain {domain.name!r} has no default run config: {path} not found")
    return load_run_config(path)


def folder_run_config(domain: Domain) -> dict[str, Any]:
    """The default reward path of a domain folder, as run config data: the folder's output contract (its
    decisions, facts required), the embedded kernel on the folder's rulebook, and the shipped domains' runtime,
    shaping and error budget (``src/proofgym/domains/grant_eligibility.run.yaml``)."""
    spec = domain.spec
    return {
        "kind": "run",
        "name": domain.name,
        "parser": {"kind": "json_block", "answer_key": spec.answer_key, "facts_key": spec.facts_key,
                   "decisions": list(spec.decisions), "require_facts": True},
        "verifier": {"kind": "rulebook", "domain": str(domain.rulebook_path.parent.resolve())},
        "runtime": {"max_concurrency": 16, "timeout_s": 10, "batch_size": 32, "retries": 2, "cache_size": 100_000,
                    "cache_max_mb": 64},
        "reward": {"weights": {"format": 0.1, "certified": 0.5, "correct": 1.0, "grounded": 0.3, "graded": 0.2},
                   "graded_from": "rule_mentions", "penalties": {"rejected": 0.3}, "floor": -1.0,
                   "on_invalid": "abstain"},
        "error_budget": {"max_invalid_share": 0.2, "action": "warn"},
    }


class RulebookEnv(SingleAnswerEnv):
    """Answer one record of a rulebook domain; the answer is scored by the domain's reward path.

    The observation's ``text`` is the user prompt and its ``data`` holds ``system`` (the system
    prompt, ``None`` when ``chat`` is off), ``messages`` (the chat prompt), ``domain``, ``seed`` and
    ``record_id`` -- never the gold decision. The action is ``{"tool": "answer", "args":
    {"completion": ...}}`` or the completion as plain text (any text that is not a JSON tool call).
    The answer step's reward is the shaped reward, its ``info`` carries ``verdict``, ``outcome``,
    ``reward_components`` (the shaper's contributions, which sum to the reward), ``claimed_decision``,
    ``correct`` (the claimed decision is the gold one), ``passed`` (and certified, on the record's
    own facts: the top outcome), ``gold``, ``branch``, ``reason`` and ``abstained``; an invalid verification
    abstains: reward 0.0 and ``abstained`` true, a sample to drop rather than score. An episode that
    ends without an answer (malformed tool calls until the turn limit) scores the floor, as a format
    failure does, so a malformed call never beats a wrong answer.

    By default all instances of a domain in the process share one reward function per run config
    (building one loads and compiles the rulebook; sharing also shares its verification cache); it
    is thread-safe and outlives the instances. ``reward_function`` gives an instance its own, which
    the caller closes.
    """

    @property
    def blocking(self) -> bool:
        """``False`` when answers are checked by the in-process rule kernel (short CPU work, no waiting),
        so a rollout loop may run this environment's calls on its event loop."""
        runtime = self.reward_function.runtime
        return not (isinstance(runtime.verifier, RulebookVerifier) and isinstance(runtime.executor, InProcessExecutor)
                    and runtime.persistent_cache is None)

    def __init__(self, domain: str | Domain, *, config: RulebookEnvConfig | None = None,
                 reward_function: RewardFunction | None = None) -> None:
        self.domain = get_domain(domain) if isinstance(domain, str) else domain
        self.config = config or RulebookEnvConfig()
        if reward_function is None:
            reward_function = shared_reward_function(self.domain.name, self.config.run_config)
        super().__init__(reward_function, tool=ANSWER_TOOL, max_turns=self.config.max_turns)
        self._period = balance_period(self.domain)
        self._record: Record | None = None
        # A domain folder is a finite task set: its train split's records, then its held-out split's.
        split_records = getattr(self.domain, "split_records", None)
        self._tasks: tuple[Record, ...] | None = None
        self._task_splits: tuple[str, ...] = ()
        if split_records is not None:
            train, heldout = split_records("train"), split_records("heldout")
            self._tasks = (*train, *heldout)
            self._task_splits = ("train",) * len(train) + ("test",) * len(heldout)

    @property
    def seed_partition(self) -> BlockPartition | TaskPartition:
        """Train / val / test in blocks of one balance period ``P``: seeds ``kP .. kP+P-1`` (before
        ``seed_offset``) are in train when ``k mod 10 < 8``, val when it is 8, test when it is 9. A domain folder's
        records are a finite task set instead: its train split is ``train``, its held-out split ``test`` (no
        ``val``)."""
        if self._tasks is not None:
            return TaskPartition(self._task_splits)
        return BlockPartition(self._period)

    @property
    def record(self) -> Record:
        """The current episode's record (for tests and tooling such as an oracle; never shown to the agent)."""
        if self._record is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._record

    def record_for(self, seed: int) -> Record:
        """The record ``reset(seed)`` draws: record ``s mod P`` of ``domain.generate(s // P, P)``.

        ``s`` is ``seed + seed_offset`` and ``P`` the period of the generator's balance schedule,
        so seeds ``0 .. P-1`` are exactly the records of ``build_dataset(domain, 0, P)`` and any
        ``P`` consecutive seeds from a multiple of ``P`` cover every decision and rule branch evenly. A domain
        folder's: record ``s mod n`` of its ``n`` records, its train split's and then its held-out split's.
        """
        shifted = seed + self.config.seed_offset
        if self._tasks is not None:  # a domain folder: record s mod n of its train, then held-out, records
            return self._tasks[shifted % len(self._tasks)]
        block, index = divmod(shifted, self._period)
        return _records(self.domain.generate, block, self._period)[index]

    def oracle_actions(self, seed: int) -> list[Any]:
        """The known-good answer to episode ``seed``: the gold completion of its record (resets the episode)."""
        self.reset(seed)
        return [{"tool": ANSWER_TOOL.name, "args": {"completion": gold_completion(self.domain, self.record)}}]

    def _pose(self, seed: int) -> AnswerTask:
        self._record = self.record_for(seed)
        example = build_example(self.domain, self._record, chat=self.config.chat)
        prompt = example["prompt"]
        if self.config.chat:
            messages = [dict(message) for message in prompt]
            system, text = messages[0]["content"], messages[-1]["content"]
        else:
            messages, system, text = [{"role": "user", "content": prompt}], None, prompt
        data = {"system": system, "messages": messages, "domain": self.domain.name, "seed": seed,
                "record_id": self._record.id}
        return AnswerTask(Observation(text, data), prompt, example, info={"record_id": example["id"]})

    def _judge(self, item: Any) -> dict[str, Any]:
        # The default (claimed decision, correct, passed, gold), and the rule branch the record exercises.
        example = cast(Mapping[str, Any], self.task.reference)  # the record's example: always set
        return {**super()._judge(item), "branch": example["branch"]}


def balance_period(domain: Domain) -> int:
    """How many consecutive records of the domain's generator cover every decision and branch evenly.

    Record ``i`` targets decision ``i mod D`` and then that decision's branches in turn, so the
    schedule repeats every ``D x lcm(branch counts)`` records.
    """
    by_decision: dict[str, int] = {}
    for decision in domain.branches.values():
        by_decision[decision] = by_decision.get(decision, 0) + 1
    if not by_decision:
        return 1
    return len(by_decision) * math.lcm(*by_decision.values())


def shared_reward_function(domain: str, run_config: str | None = None) -> RewardFunction:
    """The process's reward function for ``domain`` and a run config file (``None``: the domain's default).

    Built once per domain and config file version (path, size, modification time), then shared.
    """
    return _reward_function(domain, run_config_version(run_config))


@functools.lru_cache(maxsize=32)
def _reward_function(domain: str, run_config: tuple[str, int, int] | None) -> RewardFunction:
    run = default_run_config(domain) if run_config is None else load_run_config(run_config[0])
    reward_function = answer_reward_function(run)
    _SHARED[(domain, run_config)] = reward_function
    return reward_function


# The reward functions _reward_function holds, to report on: weak, so one its cache drops is not kept alive here.
_SHARED: weakref.WeakValueDictionary[tuple[str, tuple[str, int, int] | None], RewardFunction] = \
    weakref.WeakValueDictionary()


def _verification_cache_usage() -> list[dict[str, Any]]:
    """The memory verdict cache of each reward function the rulebook environments of this process share:
    ``domain``, ``run_config`` (the file, or ``None`` for the default), ``entries``, ``approx_bytes``
    (estimated), ``max_bytes`` and ``evictions``. What a task app reports in ``/info``."""
    usage = []
    for (domain, run_config), reward_function in list(_SHARED.items()):
        metrics = cast(VerificationRuntime, reward_function.runtime).metrics()
        usage.append({"domain": domain, "run_config": None if run_config is None else run_config[0],
                      "entries": metrics.cache_entries, "approx_bytes": metrics.cache_bytes,
                      "max_bytes": metrics.cache_max_bytes, "evictions": metrics.cache_evictions})
    return usage


report_verification_caches(_verification_cache_usage)


@functools.lru_cache(maxsize=16)
def _records(generate: Callable[[int, int], list[Record]], block: int, period: int) -> tuple[Record, ...]:
    # One generator call per block of seeds; records are immutable, so blocks can be shared.
    return tuple(generate(block, period))


def make_rulebook_env(domain: str, *, reward_function: RewardFunction | None = None,
                      **config: Any) -> RulebookEnv:
    """``make(domain, **config)``: the config's fields as keyword arguments, plus ``reward_function``; validated
    strictly (``max_turns=True`` is not a number)."""
    return RulebookEnv(domain, config=validated_env_config(RulebookEnvConfig, domain, config),
                       reward_function=reward_function)

