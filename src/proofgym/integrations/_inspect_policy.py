"""A proofgym policy whose model is inspect_ai's: what lets an inspect task run proofgym's own rollout loop.

Each turn the loop's request (the OpenAI-shaped conversation and the environment's tools) goes to inspect's
``Model.generate`` (whatever ``--model`` names: ``proofgym/<model>`` or any other inspect provider), and the answer is
read back into an action exactly as ``proofgym eval``'s ``openai`` policy reads its server's answer
(:func:`proofgym.policies.read_chat_reply`), so the same completion is the same action and gets the same reward.
"""

from __future__ import annotations

import time
from inspect_ai.model import GenerateConfig, Model, ModelOutput

from proofgym.core import model_text
from proofgym.integrations._inspect_messages import chat_completion, inspect_messages, inspect_tool
from proofgym.policies import PolicyReply, PolicyRequest, read_chat_reply
from proofgym.traces import LMCallEvent


class InspectModelPolicy:
    """``act`` through ``model`` (inspect's). ``outputs`` keeps every :class:`ModelOutput` in order (the episode's
    last one is the sample's output). An exception from the model (its server unreachable after retries) is a reply
    marked ``unavailable``: the loop ends the episode as an error, never as a wrong answer."""

    def __init__(self, model: Model, config: GenerateConfig | None = None) -> None:
        self.model = model
        self.config = config or GenerateConfig()
        self.policy_id = f"inspect:{model}"
        self.outputs: list[ModelOutput] = []

    async def act(self, request: PolicyRequest) -> PolicyReply:
        messages = inspect_messages(request.messages)
        tools = [inspect_tool(tool) for tool in request.tools]
        started = time.perf_counter()
        try:
            output = await self.model.generate(messages, tools=tools, config=self.config)
        except Exception as exc:
            error = model_text(f"{type(exc).__name__}: {exc}")
            call = LMCallEvent(model=str(self.model), error=error, latency_s=time.perf_counter() - started)
            return PolicyReply(None, {"role": "assistant", "content": ""}, [call], error=error, unavailable=True)
        self.outputs.append(output)
        payload = chat_completion(output)
        usage = output.usage
        call = LMCallEvent(model=str(self.model), request={"messages": list(request.messages)}, response=payload,
                           prompt_tokens=usage.input_tokens if usage else None,
                           completion_tokens=usage.output_tokens if usage else None,
                           latency_s=time.perf_counter() - started, error=output.error)
        if output.error:
            return PolicyReply(None, {"role": "assistant", "content": ""}, [call], error=output.error,
                               unavailable=True)
        reply: PolicyReply = read_chat_reply(payload, request, [call])
        return reply

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"InspectModelPolicy({self.policy_id!r})"
