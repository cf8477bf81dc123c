"""A tiny environment for testing the shared tool-environment machinery."""

from __future__ import annotations

from proofgym.envs import Observation, Tool, ToolCall, ToolEnv, ToolResult

ADD = Tool(
    "add",
    "Add n to the counter.",
    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": False},
)
ECHO = Tool(
    "echo",
    "Echo a short text.",
    {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 10}, "loud": {"type": "boolean"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
FINISH = Tool("finish", "End the episode; pays 1.0 when the counter equals the seed.")


class CounterEnv(ToolEnv):
    """Reach the seed with ``add`` calls, then ``finish``."""

    def __init__(self, *, max_turns: int = 5, step_penalty: float = 0.0) -> None:
        super().__init__([ADD, ECHO, FINISH], max_turns=max_turns, step_penalty=step_penalty)
        self.closed_count = 0

    def _reset(self, seed: int) -> Observation:
        self._target, self._count = seed, 0
        return Observation(f"Reach {seed}.", {"target": seed})

    def _call_tool(self, call: ToolCall) -> ToolResult:
        if call.name == "add":
            self._count += call.args["n"]
            return ToolResult(Observation(f"counter = {self._count}", {"counter": self._count}))
        if call.name == "echo":
            text = call.args["text"].upper() if call.args.get("loud") else call.args["text"]
            return ToolResult(Observation(text))
        return ToolResult(Observation("finished"), {"finish": float(self._count == self._target)}, done=True)

    def _close(self) -> None:
        self.closed_count += 1
