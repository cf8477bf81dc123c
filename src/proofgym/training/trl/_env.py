"""proofgym environments inside TRL's GRPOTrainer, through its ``environment_factory`` hook (TRL 1.16).

TRL creates one environment object per rollout from the factory, calls its ``reset(**row)`` before
generation, exposes its public methods to the model as tools (rendered into the prompt by the
tokenizer's chat template, parsed back from the model's tool calls, executed, their results fed
back until the model stops calling tools) and passes the objects to the reward functions as
``environments``. :func:`trl_environment` makes such a class for any registered proofgym environment:
one method per tool of the environment, with the tool's JSON schema turned into a typed signature
and a docstring TRL can render. The episode's return (the sum of its step rewards) is the reward:
:class:`TRLEnvironment` ``.reward_func`` reports it, first sending the completion's final text as the
answer to an environment that takes plain-text answers and has not ended yet (the single-turn
rulebook environments), so a model that answers without calling the ``answer`` tool is scored too.
An episode with an invalid verification abstains (``None``).

TRL requires a chat template that can render tool calls (and whose tool-call format TRL can parse:
Qwen 2.5 / 3, Llama 3.1 / 3.2, ...); plain-text prompts cannot use this hook.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from proofgym.envs import Environment, env_hook, make

_TYPES = {"string": str, "integer": int, "boolean": bool}
_OVER = "The episode is over: no more tool calls are accepted."


class EnvironmentAdapter:
    """Base of the classes :func:`trl_environment` makes: one proofgym environment per instance.

    Only ``reset`` and the generated tool methods are public, since TRL exposes every other public
    method to the model as a tool.
    """

    _env_name: str = ""
    _env_config: Mapping[str, Any] = {}

    def __init__(self) -> None:
        self._env: Environment = make(self._env_name, **dict(self._env_config))
        # Closed when the adapter is collected; not at interpreter exit, where the runtimes' own
        # finalizers have already stopped their threads.
        weakref.finalize(self, self._env.close).atexit = False
        self._started = False
        self._done = False
        self._return = 0.0
        self._abstained = False

    def reset(self, **row: Any) -> None:
        """Start the episode of the row's ``seed``; the row's prompt already shows its first observation."""
        seed = row.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"environment {self._env_name!r}: every dataset row needs an integer 'seed' column "
                             f"(see TRLEnvironment.rows), got {seed!r}")
        self._env.reset(seed)
        self._started, self._done, self._return, self._abstained = True, False, 0.0, False

    def _act(self, action: Any) -> str:
        if not self._started:
            return "The episode has not started."
        if self._done:
            return _OVER
        result = self._env.step(action)
        self._return += float(result.reward)
        self._abstained = self._abstained or bool(result.abstained) or result.outcome == "invalid"
        self._done = bool(result.done)
        return result.observation.text

    def _finish(self, completion: Any) -> float | None:
        """The episode's return, after answering with ``completion``'s final text where the environment
        takes plain-text answers and is still running; ``None`` when a verification was invalid."""
        if self._started and not self._done and env_hook(self._env, "accepts_text"):
            # An empty answer is still an answer: the environment scores it as a format failure.
            self._act(_final_text(completion) or "")
        if not self._started or self._abstained:
            return None
        return self._return


class TRLEnvironment:
    """A proofgym environment wired for GRPOTrainer: ``factory`` for ``environment_factory=``,
    ``reward_func`` for ``reward_funcs=`` (named ``<env>_return``), and :meth:`rows` for the dataset.

    An environment that exposes a ``reward_function`` (the rulebook environments) gets one built
    once and shared by every instance, with its verification cache; :meth:`close` releases it.
    """

    def __init__(self, env_name: str, env_config: Mapping[str, Any], factory: type[EnvironmentAdapter],
                 reward_func: Callable[..., list[float | None]], owner: Environment | None) -> None:
        self.env_name = env_name
        self.env_config = dict(env_config)
        self.factory = factory
        self.reward_func = reward_func
        self._owner = owner

    def rows(self, seeds: Sequence[int]) -> list[dict[str, Any]]:
        """Dataset rows ``{"prompt": chat messages, "seed": s}``, the prompt being the observation
        ``reset(s)`` shows (the environment's own chat messages when its observation carries them)."""
        env = make(self.env_name, **self.factory._env_config)
        try:
            rows = []
            for seed in seeds:
                observation = env.reset(seed)
                messages = observation.data.get("messages") if isinstance(observation.data, Mapping) else None
                if not (isinstance(messages, list) and messages):
                    messages = [{"role": "user", "content": observation.text}]
                rows.append({"prompt": [dict(message) for message in messages], "seed": seed})
            return rows
        finally:
            env.close()

    def close(self) -> None:
        """Release the shared reward function, if this bridge built one."""
        if self._owner is not None:
            self._owner.close()
            self._owner = None


def trl_environment(env_name: str, **env_config: Any) -> TRLEnvironment:
    """Wire the registered environment ``env_name`` (built with ``env_config``) for TRL's GRPOTrainer."""
    probe = make(env_name, **env_config)
    instance_config = dict(env_config)
    try:
        tools = probe.tools
        shared = getattr(probe, "reward_function", None)
        if shared is not None and "reward_function" not in instance_config:
            instance_config["reward_function"] = shared
    except BaseException:
        probe.close()
        raise
    owner: Environment | None = probe if "reward_function" in instance_config and shared is not None else None
    if owner is None:
        probe.close()
    methods: dict[str, Any] = {"_env_name": env_name, "_env_config": instance_config}
    for tool in tools:
        method = _tool_method(tool)
        if method.__name__.startswith("_") or hasattr(EnvironmentAdapter, method.__name__):
            raise ValueError(f"environment {env_name!r}: TRL cannot expose a tool named {method.__name__!r} "
                             "(private, or taken by the adapter)")
        methods[method.__name__] = method
    class_name = "".join(part.capitalize() for part in env_name.replace("-", "_").split("_")) + "Environment"
    factory = type(class_name, (EnvironmentAdapter,), methods)

    def reward_func(prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (),
                    environments: Sequence[EnvironmentAdapter] | None = None, **_: Any) -> list[float | None]:
        if environments is None or len(environments) != len(completions):
            raise ValueError(f"{env_name}_return needs TRL's 'environments' (one per completion): pass the "
                             "TRLEnvironment's factory as environment_factory")
        return [env._finish(completion) for env, completion in zip(environments, completions)]

    reward_func.__name__ = f"{_identifier(env_name)}_return"
    reward_func.__qualname__ = reward_func.__name__
    return TRLEnvironment(env_name, env_config, factory, reward_func, owner)


def _tool_method(tool: Mapping[str, Any]) -> Callable[..., str]:
    """A method calling ``tool``, with a typed signature and a Google-style docstring (which TRL's
    chat template rendering turns back into the tool's JSON schema)."""
    function = tool["function"]
    name = function["name"]
    schema = function.get("parameters") or {}
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    if not name.isidentifier():
        raise ValueError(f"tool name {name!r} is not a Python identifier")

    def method(self: EnvironmentAdapter, **arguments: Any) -> str:
        return self._act({"tool": name, "args": {k: v for k, v in arguments.items() if v is not None}})

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    doc_args = []
    # Required parameters first: a parameter with a default cannot precede one without.
    for pname in sorted(properties, key=lambda p: p not in required):
        kind = _TYPES.get(properties[pname].get("type"))
        if kind is None or not pname.isidentifier():
            raise ValueError(f"tool {name!r}: parameter {pname!r} has a type TRL cannot render")
        annotation = kind if pname in required else Optional[kind]
        default = inspect.Parameter.empty if pname in required else None
        parameters.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))
        annotations[pname] = annotation
        description = " ".join(str(properties[pname].get("description") or pname).split())
        doc_args.append(f"    {pname}: {description}")
    annotations["return"] = str
    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    description = " ".join(str(function.get("description") or name).split())
    args = ("\n\nArgs:\n" + "\n".join(doc_args)) if doc_args else ""
    method.__doc__ = f"{description}{args}\n\nReturns:\n    What the environment shows after the call."
    return method


def _final_text(completion: Any) -> str | None:
    """The text of the last assistant message of a chat completion, or the completion itself."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        for message in reversed(list(completion)):
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                content = message.get("content")
                if isinstance(content, str) and content.strip():
                    return content
                if isinstance(content, list):
                    text = "".join(part.get("text", "") for part in content
                                   if isinstance(part, Mapping) and part.get("type") == "text")
                    if text.strip():
                        return text
    return None


def _identifier(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return cleaned if cleaned.isidentifier() else f"env_{cleaned}"
