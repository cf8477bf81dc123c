"""inspect_ai tools that call a proofgym environment's tools, and the solver loop over them (``-T solver=tools``).

One environment instance per sample: :class:`EnvToolbox` resets it with the sample's seed and offers each of its
tools as an inspect ``ToolDef`` whose call is one ``env.step``. :func:`proofgym_tool_loop` is the loop in inspect's
own terms: ``model.generate`` with those tools, inspect's ``execute_tools`` running the calls (each a
``ToolEvent`` in the transcript, shown by ``inspect view``), until the environment says the episode is over or the
turn limit is reached. Composable: ``EnvToolbox(...).tools()`` can be handed to any inspect agent.

What the model is shown and what its replies do follow proofgym's rollout loop (the default ``episode`` solver) so
that the two score the same replies the same: one tool call runs per turn (a second one in the same reply is answered
"not run"); a reply with no tool call is read as ``proofgym eval``'s ``openai`` policy reads it (the answer itself
where the environment takes text, a JSON-in-text call, else an error the model is shown), and a turn whose reply was
unusable still counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from inspect_ai.model import ChatMessageTool, ChatMessageUser, execute_tools, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams

from proofgym.envs import Environment, StepResult, env_hook, make
from proofgym.integrations._inspect_messages import OPENAI_KEY, chat_completion
from proofgym.integrations._inspect_scorer import EPISODE_KEY, action_text, episode_summary
from proofgym.policies import PolicyReply, PolicyRequest, read_chat_reply

_NOT_RUN = "Error: not run; call one tool per turn"


class EnvToolbox:
    """A live environment for one sample: its tools as inspect ``ToolDef`` objects, each call one ``env.step``; the
    steps taken (``results``, ``actions``) and whether the episode is over (``done``)."""

    def __init__(self, env: Environment, seed: int) -> None:
        self.env, self.seed = env, seed
        self.results: list[StepResult] = []
        self.actions: list[Any] = []
        self._calls_this_turn = 0

    @property
    def done(self) -> bool:
        return bool(self.results) and self.results[-1].done

    def new_turn(self) -> None:
        self._calls_this_turn = 0

    async def step(self, action: Any) -> str:
        """Step the environment with ``action`` (on a worker thread: a step may compile, simulate or wait)."""
        if self.done:
            return "Error: the episode is over"
        result: StepResult = await anyio.to_thread.run_sync(self.env.step, action)
        self.results.append(result)
        self.actions.append(action)
        return result.observation.text

    def tools(self) -> list[ToolDef]:
        return [self._tool(dict(spec)) for spec in self.env.tools]

    def _tool(self, spec: dict[str, Any]) -> ToolDef:
        function = spec["function"]
        name = str(function["name"])

        async def call(**arguments: Any) -> str:
            self._calls_this_turn += 1
            if self._calls_this_turn > 1:
                return _NOT_RUN
            return await self.step({"tool": name, "args": arguments})

        parameters = ToolParams.model_validate(function.get("parameters") or {"type": "object", "properties": {}})
        for key, param in parameters.properties.items():
            param.description = param.description or key  # inspect requires one (the model is sent the original)
        return ToolDef(call, name=name, description=str(function.get("description") or ""), parameters=parameters,
                       parallel=False, options={OPENAI_KEY: spec})

    def summary(self, *, truncated: bool) -> dict[str, Any]:
        """The episode for the scorer (the same shape the episode solver leaves)."""
        last = self.results[-1] if self.results else None
        components: dict[str, float] = {}
        for result in self.results:
            for key, value in (result.components or {}).items():
                components[key] = components.get(key, 0.0) + float(value)
        cut = truncated and not self.done
        score = 0.0 if cut else (last.outcome_score if last is not None else None)
        return episode_summary(dict(last.info) if last is not None else {},
                               total=float(sum(result.reward for result in self.results)), score=score,
                               steps=len(self.results), components=components, truncated=cut,
                               answer=action_text(self.actions[-1]) if self.actions else "")


@solver
def proofgym_tool_loop(env: str, env_config: Mapping[str, Any] | None = None, max_turns: int | None = None) -> Solver:
    """The sample's episode as an inspect tool loop (see the module's documentation); the episode is left in the
    state's store for the scorer. ``max_turns``: the turn limit (default: the environment's own)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = int(state.metadata["seed"])
        instance = await anyio.to_thread.run_sync(lambda: make(env, **dict(env_config or {})))
        try:
            await anyio.to_thread.run_sync(instance.reset, seed)
            box = EnvToolbox(instance, seed)
            tools = box.tools()
            state.tools = list(tools)
            request = PolicyRequest(messages=[], tools=[dict(spec) for spec in instance.tools], seed=seed,
                                    accepts_text=bool(env_hook(instance, "accepts_text")))
            model, turn = get_model(), 0
            while not box.done and (max_turns is None or turn < max_turns):
                turn += 1
                box.new_turn()
                output = await model.generate(state.messages, tools=tools)
                state.output = output
                state.messages.append(output.message)
                calls = output.message.tool_calls or []
                if len(calls) > 1:  # proofgym's loop runs none of them and charges the turn
                    await box.step(None)
                    error = f"Error: the reply has {len(calls)} tool calls; call exactly one tool per turn"
                    state.messages.extend(ChatMessageTool(content=error, tool_call_id=call.id, function=call.function)
                                          for call in calls)
                    continue
                if calls:
                    executed = await execute_tools(state.messages, tools)
                    state.messages.extend(executed.messages)
                    continue
                reply: PolicyReply = read_chat_reply(chat_completion(output), request)
                if reply.error is None:
                    text = await box.step(reply.action)
                else:
                    await box.step(None)  # the environment charges the turn, as in proofgym's loop
                    text = f"Error: {reply.error}"
                state.messages.append(ChatMessageUser(content=text))
            state.store.set(EPISODE_KEY, box.summary(truncated=not box.done))
        finally:
            await anyio.to_thread.run_sync(instance.close)
        state.completed = True
        return state

    return solve
