"""The environment contract: what ``reset`` and ``step`` return, and the protocol every environment meets."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Iterator, Mapping, Protocol, Self, runtime_checkable


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


@dataclass(frozen=True)
class StepResult:
    """The result of one step.

    ``done`` is true when the episode is over, for whatever reason; ``truncated`` is true when it
    ended because the turn limit was reached rather than by a terminal action (``done`` is then
    true as well, so a loop that only reads ``done`` still stops). ``info`` is JSON-native and is
    for the trainer and the trace, not for the agent. A terminal step that the environment could not
    judge (its toolchain missing, its sandbox or verifier unavailable) says so with ``info["outcome"] =
    "invalid"`` and the reason in ``info["reason"]`` (or its ``info["verdict"]``'s): the episode is then
    neither passed nor failed, and an evaluation reports it as not judged.

    Unpacks as the classic four-tuple: ``observation, reward, done, info = env.step(action)``.
    """

    observation: Observation
    reward: float
    done: bool
    truncated: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)

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

    An environment may also set ``blocking = False`` when ``reset``, ``step`` and ``close`` are short
    CPU work that never waits (no I/O, subprocesses or remote calls): a rollout loop may then call
    them on its event loop instead of handing each call to a worker thread. Without it, calls are
    assumed to block.
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
