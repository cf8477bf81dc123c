"""inspect_ai's model API ``proofgym``: OpenAI chat completions to ``proofgym serve-model`` or any OpenAI-compatible
server, through proofgym's own :class:`~proofgym.http.ChatClient` (no ``openai`` package: verifiers 0.4 pins
``openai<3`` and inspect's own OpenAI provider refuses anything below 3.4, so this one shares a venv with both)::

    inspect eval proofgym/loan --model proofgym/tiny --model-base-url http://127.0.0.1:8000/v1

- the base URL: ``--model-base-url``, else ``$PROOFGYM_BASE_URL``, else ``http://127.0.0.1:8000/v1`` (serve-model's
  default); the server is asked for ``GET /models`` when the model is made, and one that cannot be reached stops the
  eval there, in one line;
- the API key: ``$PROOFGYM_API_KEY``, or the variable ``-M api_key_env=NAME`` names (sent as ``Authorization:
  Bearer``);
- ``temperature``, ``top_p``, ``max_tokens``, ``seed`` and ``stop_seqs`` from inspect's ``GenerateConfig``
  (``--temperature`` ...), tools and ``tool_choice`` as OpenAI function tools, the server's tool calls back as
  inspect's, and its ``usage`` (zero counts when it sends none: inspect then never reaches for tiktoken, whose
  encoding file is downloaded);
- ``-M timeout_s=60 -M max_retries=3``: each attempt's wall-clock bound and the client's retries (inspect does not
  retry on top of them).
"""

from __future__ import annotations

import os
from typing import Any

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolFunction, ToolInfo

from proofgym.core import redact_url
from proofgym.http import ChatClient, RetryPolicy, chat_completions_url
from proofgym.integrations._inspect_messages import model_output, openai_messages, openai_tool

#: The environment variables read for the base URL and, by default, the API key.
BASE_URL_ENV = "PROOFGYM_BASE_URL"
API_KEY_ENV = "PROOFGYM_API_KEY"
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
_MODEL_ARGS = ("api_key_env", "timeout_s", "max_retries")


class ModelServerError(RuntimeError):
    """The model server did not answer a chat completion (after the client's retries), or answered nonsense."""


class ProofgymChatAPI(ModelAPI):
    """The ``proofgym`` model API (see the module's documentation)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        unknown = sorted(set(model_args) - set(_MODEL_ARGS))
        if unknown:
            raise PrerequisiteError(f"proofgym model API: unknown model arg(s) {', '.join(unknown)} (-M); expected "
                                    f"{', '.join(_MODEL_ARGS)}")
        key_env = str(model_args.get("api_key_env") or API_KEY_ENV)
        super().__init__(model_name, base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL, api_key,
                         [key_env], config)
        try:
            self.url = chat_completions_url(str(self.base_url), name="--model-base-url")
            timeout_s = float(model_args.get("timeout_s", 60.0))
            max_retries = int(model_args.get("max_retries", 3))
            if timeout_s <= 0 or max_retries < 0:
                raise ValueError(f"-M timeout_s must be > 0 and -M max_retries >= 0, got {timeout_s:g} and "
                                 f"{max_retries}")
        except ValueError as exc:
            raise PrerequisiteError(f"proofgym model API: {exc}") from None
        key = self.api_key or os.environ.get(key_env) or None
        self._check_reachable(min(timeout_s, 10.0), key)
        self._chat = ChatClient(self.url, api_key=key, timeout_s=timeout_s, retry=RetryPolicy(max_retries=max_retries))

    def _check_reachable(self, timeout_s: float, key: str | None) -> None:
        """Stop now, in one line, when nothing answers at the base URL (any HTTP answer will do: ``/models`` is
        asked, but a server without it is still a server)."""
        import httpx

        models = self.url.split("?", 1)[0].removesuffix("/chat/completions") + "/models"
        try:
            response = httpx.get(models, timeout=timeout_s, headers={"Authorization": f"Bearer {key}"} if key else None)
        except httpx.HTTPError as exc:
            raise PrerequisiteError(f"proofgym model API: cannot reach the model server at {redact_url(models)} "
                                    f"({type(exc).__name__}: {exc}); start one (proofgym serve-model ...) or pass "
                                    f"--model-base-url") from None
        served = _served_models(response)
        if served and self.model_name not in served:
            raise PrerequisiteError(f"proofgym model API: the server at {redact_url(models)} does not serve "
                                    f"{self.model_name!r}; it serves {', '.join(served)} (--model "
                                    f"proofgym/{served[0]})")

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        body: dict[str, Any] = {"model": self.model_name, "messages": openai_messages(input)}
        for key, value in (("temperature", config.temperature), ("max_tokens", config.max_tokens),
                           ("top_p", config.top_p), ("seed", config.seed), ("stop", config.stop_seqs)):
            if value is not None:
                body[key] = value
        if tools:
            body["tools"] = [openai_tool(tool) for tool in tools]
            if isinstance(tool_choice, ToolFunction):
                body["tool_choice"] = {"type": "function", "function": {"name": tool_choice.name}}
            elif tool_choice in ("none", "any"):
                body["tool_choice"] = "none" if tool_choice == "none" else "required"
        answer = await self._chat.complete(body)
        if answer.error is not None or answer.payload is None:
            raise ModelServerError(f"the model server at {redact_url(self.url)} did not answer: {answer.error}")
        try:
            return model_output(answer.payload, self.model_name)
        except ValueError as exc:
            raise ModelServerError(f"the model server at {redact_url(self.url)}: {exc}") from None

    async def aclose(self) -> None:
        await self._chat.aclose()

    def close(self) -> None:
        self._chat.close()

    def should_retry(self, ex: Exception) -> bool:
        return False  # the client retried already (RetryPolicy)

    def connection_key(self) -> str:
        return self.url


def _served_models(response: Any) -> list[str]:
    """The model ids a ``GET /models`` answer lists (none when it is not an OpenAI model list)."""
    try:
        data = response.json().get("data") if response.status_code == 200 else None
    except (ValueError, AttributeError):
        return []
    return [str(item["id"]) for item in data or [] if isinstance(item, dict) and item.get("id")] \
        if isinstance(data, list) else []


@modelapi(name="proofgym")
def proofgym_model_api() -> type[ModelAPI]:
    return ProofgymChatAPI
