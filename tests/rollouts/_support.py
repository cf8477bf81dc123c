"""A small environment for the rollout-loop tests, and policy doubles."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, ClassVar

from _judge import requires_judge  # noqa: F401  (the one check, re-exported)

from proofgym.envs import Observation, Tool, ToolCall, ToolEnv, ToolResult
from proofgym.policies import PolicyReply, PolicyRequest

ADD = Tool("add", "Add n to the counter.", {"type": "object", "properties": {"n": {"type": "integer"}},
                                            "required": ["n"], "additionalProperties": False})
WAIT = Tool("wait", "Block for a while.", {"type": "object", "properties": {"s": {"type": "integer"}},
                                           "required": ["s"], "additionalProperties": False})
FINISH = Tool("finish", "End the episode; solved when the counter equals the seed.")


class CounterEnv(ToolEnv):
    """Reach the seed with ``add``, then ``finish``. Records every instance and when it was closed."""

    instances: ClassVar[list[CounterEnv]] = []

    def __init__(self, *, max_turns: int = 5, step_penalty: float = 0.0) -> None:
        super().__init__([ADD, WAIT, FINISH], max_turns=max_turns, step_penalty=step_penalty)
        self.closed_at: float | None = None
        self.step_threads: set[str] = set()
        CounterEnv.instances.append(self)

    def _reset(self, seed: int) -> Observation:
        self._target, self._count = seed, 0
        return Observation(f"Reach {seed}.", {"system": "You are a counter.", "target": seed})

    def _call_tool(self, call: ToolCall) -> ToolResult:
        self.step_threads.add(threading.current_thread().name)
        if call.name == "add":
            self._count += call.args["n"]
            return ToolResult(Observation(f"counter = {self._count}"), {"progress": 0.1}, info={"tool": "add"})
        if call.name == "wait":
            time.sleep(call.args["s"] / 10)
            return ToolResult(Observation("waited"), info={"tool": "wait"})
        solved = self._count == self._target
        return ToolResult(Observation("finished"), {"finish": float(solved)}, done=True,
                          info={"tool": "finish", "outcome": "certified" if solved else "refuted",
                                "verdict": {"outcome": "certified" if solved else "refuted", "verifier": "counter@1",
                                            "decision": None, "evidence": {"count": self._count}}})

    def _close(self) -> None:
        self.closed_at = time.monotonic()


class RecordingPolicy:
    """Replies from a list of ``PolicyReply`` objects (or callables / exceptions), recording each request."""

    def __init__(self, replies: list[Any], policy_id: str = "recording") -> None:
        self.replies = replies
        self.policy_id = policy_id
        self.requests: list[PolicyRequest] = []

    async def act(self, request: PolicyRequest) -> PolicyReply:
        self.requests.append(request)
        reply = self.replies[min(request.turn, len(self.replies)) - 1]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return await reply(request)
        return reply

    async def aclose(self) -> None:
        pass


def call(action: Any, content: str = "") -> PolicyReply:
    return PolicyReply(action, {"role": "assistant", "content": content or str(action)})


async def sleep_forever(request: PolicyRequest) -> PolicyReply:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")
