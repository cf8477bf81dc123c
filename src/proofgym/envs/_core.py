"""The environment contract: what ``reset`` and ``step`` return, the protocol every environment meets, and its
optional hooks, each declared here with its default (:class:`EnvironmentHooks`, read through :func:`env_hook`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence  # isinstance against typing's aliases is slower
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, overload, runtime_checkable

if TYPE_CHECKING:
    from proofgym.envs._splits import SeedPartition
    from proofgym.judges import RubricSet


@dataclass(frozen=True)
class Observation:
    """What the agent sees after ``reset`` or a step.

    ``text`` is the message to show the agent; ``data`` holds the same content structured, JSON-native
    (for tool-calling loops, traces and tests). Neither ever holds anything the agent must not see.
    """

    text: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "data": dict(self.data)}


#: The typed fields of :class:`StepResult` and the keys of its ``info`` that mirror them (``components`` is
#: ``info["reward_components"]``): the typed field is what a rollout loop and an evaluation read; the key is what a
#: trace and the HTTP contract carry.
TYPED_INFO_KEYS: dict[str, str] = {"outcome": "outcome", "verdict": "verdict", "components": "reward_components",
                                   "correct": "correct", "passed": "passed", "abstained": "abstained"}


@dataclass(frozen=True)
class StepResult:
    """The result of one step.

    ``done`` is true when the episode is over, for whatever reason; ``truncated`` is true when it
    ended because the turn limit was reached rather than by a terminal action (``done`` is then
    true as well, so a loop that only reads ``done`` still stops). ``info`` is JSON-native and is
    for the trainer and the trace, not for the agent.

    What a loop needs to know about a step is typed (each ``None`` when the environment does not say):

    - ``outcome``: how the step's answer was judged: ``certified``, ``refuted``, ``format_error``, ``invalid``
      (the environment could not judge: its toolchain missing, its sandbox or verifier unavailable; the reason in
      ``info["reason"]`` or the verdict's), ``no_answer``, or an environment's own word;
    - ``verdict``: the verifier's verdict as a dict (:meth:`proofgym.core.Verdict.to_dict`);
    - ``components``: the reward components the step earned, summing to ``reward``;
    - ``correct``: the answer is the right one; ``passed``: the episode reached the environment's top outcome;
    - ``abstained``: the step's answer could not be verified, so it carries no reward signal.

    The typed fields are the only way a step reports these: an environment sets them, and each one set is also
    written into ``info`` under its key (``components`` as ``reward_components``) unless ``info`` has it already,
    which is what traces and the HTTP contract carry. ``info`` is never read back into them.
    An invalid terminal step is neither passed nor failed, and an evaluation reports it as not judged.

    Unpacks as the classic four-tuple: ``observation, reward, done, info = env.step(action)``.
    """

    observation: Observation
    reward: float
    done: bool
    truncated: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)
    outcome: str | None = None
    verdict: Mapping[str, Any] | None = None
    components: Mapping[str, float] | None = None
    correct: bool | None = None
    passed: bool | None = None
    abstained: bool | None = None

    def __post_init__(self) -> None:
        info = dict(self.info)
        for name, key in TYPED_INFO_KEYS.items():
            value = getattr(self, name)
            if value is not None and key not in info:
                info[key] = dict(value) if isinstance(value, Mapping) else value
        object.__setattr__(self, "info", info)

    @property
    def outcome_score(self) -> float | None:
        """1.0 / 0.0 when this (terminal) step ended the episode solved / unsolved; ``None`` when it is not
        terminal or was not judged (abstained, or ``invalid``): never scored as a wrong answer, nor as a right one.
        A truncated episode is unsolved. ``passed``, then ``correct``, then the outcome decide."""
        if self.truncated:
            return 0.0
        if not self.done or self.abstained is True or self.outcome == "invalid":
            return None
        for flag in (self.passed, self.correct):
            if flag is not None:
                return float(flag)
        if self.outcome == "certified":
            return 1.0
        if self.outcome in ("refuted", "format_error", "no_answer"):
            return 0.0
        return None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.observation, self.reward, self.done, self.info))

    def to_dict(self) -> dict[str, Any]:
        return {
            "observation": self.observation.to_dict(),
            "reward": self.reward,
            "done": self.done,
            "truncated": self.truncated,
            "info": dict(self.info),
        }


@runtime_checkable
class Environment(Protocol):
    """A multi-step, tool-calling environment; one instance per rollout.

    ``tools`` lists the tools in the OpenAI tool format
    (``{"type": "function", "function": {"name", "description", "parameters"}}``). ``reset(seed)``
    starts an episode and is deterministic: the same seed gives the same task and, for the same
    actions, the same observations. ``step(action)`` takes one tool call and never raises on what
    the agent sent: a malformed call becomes an error observation with ``info["error"]``.
    ``close()`` releases everything the instance holds; it is idempotent, and the environment is a
    context manager that closes on exit.

    The optional hooks (``accepts_text``, ``blocking``, ``seed_partition``, ``oracle_actions``, ``rubrics``) are
    declared with their defaults by :class:`EnvironmentHooks`, which :class:`~proofgym.envs.ToolEnv` derives from;
    read them with :func:`env_hook`, which gives the default for an environment that does not have one.
    """

    @property
    def tools(self) -> list[dict[str, Any]]: ...

    def reset(self, seed: int) -> Observation: ...

    def step(self, action: Any) -> StepResult: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class EnvironmentHooks:
    """The optional part of the environment contract: each hook with its default. An environment overrides what it
    has (a class attribute, a property or, for ``oracle_actions``, a method); a loop reads them with
    :func:`env_hook`, so that an environment that does not derive from this class gets the same defaults.

    - ``accepts_text``: the environment also takes the answer as plain text, not only as a tool call (a policy
      may then reply with text alone);
    - ``blocking``: ``False`` when ``reset``, ``step`` and ``close`` are short CPU work that never waits (no I/O,
      subprocesses or remote calls): a rollout loop may then call them on its event loop instead of handing each
      call to a worker thread. By default calls are assumed to block;
    - ``seed_partition``: how the seeds fall into train / val / test (a :class:`~proofgym.envs.SeedPartition`);
      ``None``: the default partition (:func:`~proofgym.envs.seed_partition`);
    - ``oracle_actions(seed)``: known-good actions for episode ``seed`` (resets the episode); ``None``: no oracle;
    - ``rubrics``: the :class:`~proofgym.judges.RubricSet` the environment declares, a task app's default for
      judging its rollouts; ``None``: none.

    A factory registered with :func:`~proofgym.envs.register_env` has one optional hook of its own,
    ``builds_quickly(**config) -> bool`` (default: ``False``), read by :func:`~proofgym.envs.quick_to_make`.
    """

    oracle_actions: Callable[[int], Sequence[Any]] | None = None

    @property
    def accepts_text(self) -> bool:
        return False

    @property
    def blocking(self) -> bool:
        return True

    @property
    def seed_partition(self) -> SeedPartition | None:
        return None

    @property
    def rubrics(self) -> RubricSet | None:
        return None


#: Every optional hook of an environment and its default (:class:`EnvironmentHooks`).
HOOK_DEFAULTS: Mapping[str, Any] = {"accepts_text": False, "blocking": True, "seed_partition": None,
                                    "oracle_actions": None, "rubrics": None}


@overload
def env_hook(env: Any, name: Literal["accepts_text", "blocking"]) -> bool: ...
@overload
def env_hook(env: Any, name: Literal["seed_partition"]) -> SeedPartition | None: ...
@overload
def env_hook(env: Any, name: Literal["oracle_actions"]) -> Callable[[int], Sequence[Any]] | None: ...
@overload
def env_hook(env: Any, name: Literal["rubrics"]) -> RubricSet | None: ...
def env_hook(env: Any, name: str) -> Any:
    """The environment's optional hook ``name`` (one of :data:`HOOK_DEFAULTS`), or its declared default when the
    environment has none. The one way any loop, server or trainer reads a hook."""
    try:
        default = HOOK_DEFAULTS[name]
    except KeyError:
        raise ValueError(f"{name!r} is no environment hook: expected one of {', '.join(HOOK_DEFAULTS)}") from None
    return getattr(env, name, default)
