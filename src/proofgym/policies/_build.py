"""Building a policy by name from a config mapping (an eval file's ``[evaluation.policy_config]``, a request body)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proofgym.core import ConfigError, Registry, RegistryError, describe_validation_error
from proofgym.policies._protocol import Policy


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OpenAIPolicyConfig(_Strict):
    """Config of :class:`OpenAIChatPolicy`. The API key comes from the environment variable ``api_key_env``.
    ``use_vision`` sends the observation's frame beside its text, ``image_only_mode`` the frame alone."""

    model: str = Field(min_length=1)
    inference_url: str = Field(min_length=1)
    api_key_env: str | None = Field(None, min_length=1)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    max_tokens: int = Field(1024, ge=1)
    timeout_s: float = Field(60.0, gt=0.0, allow_inf_nan=False)
    max_retries: int = Field(3, ge=0, le=100)
    tool_mode: Literal["auto", "native", "json"] = "auto"
    extra_body: dict[str, Any] | None = None
    backoff_base_s: float = Field(0.5, ge=0.0, allow_inf_nan=False)
    backoff_max_s: float = Field(8.0, ge=0.0, allow_inf_nan=False)
    max_retry_after_s: float = Field(60.0, ge=0.0, allow_inf_nan=False)
    policy_id: str | None = Field(None, min_length=1)
    use_vision: bool = False
    image_only_mode: bool = False


class HFPolicyConfig(_Strict):
    """Config of :class:`HFLocalPolicy`: ``model`` (and optionally ``tokenizer``) is a local path or hub id."""

    model: str = Field(min_length=1)
    tokenizer: str | None = Field(None, min_length=1)
    max_new_tokens: int = Field(256, ge=1)
    temperature: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    seed: int = 0
    device: str = Field("cpu", min_length=1)
    generation_kwargs: dict[str, Any] | None = None
    policy_id: str | None = Field(None, min_length=1)


class ScriptedPolicyConfig(_Strict):
    """Config of :class:`ScriptedPolicy`: the actions to replay, in order."""

    actions: list[Any]
    policy_id: str = Field("scripted", min_length=1)


class OraclePolicyConfig(_Strict):
    """Config of :class:`OraclePolicy`: the environment (and its config) whose known-good answers to play."""

    env_name: str = Field(min_length=1)
    env_config: dict[str, Any] = Field(default_factory=dict)
    policy_id: str = Field("oracle", min_length=1)


def _openai(config: OpenAIPolicyConfig) -> Policy:
    from proofgym.policies._openai import OpenAIChatPolicy

    options = config.model_dump(exclude={"api_key_env"})
    api_key = None
    if config.api_key_env is not None:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise ConfigError(f"api_key_env: the environment variable {config.api_key_env!r} is not set")
    return OpenAIChatPolicy(options.pop("model"), options.pop("inference_url"), api_key=api_key, **options)


def _hf(config: HFPolicyConfig) -> Policy:
    from proofgym.policies._hf import HFLocalPolicy, load_pretrained

    options = config.model_dump(exclude={"model", "tokenizer"})
    tokenizer = None
    if config.tokenizer is not None:
        tokenizer = load_pretrained(config.tokenizer, tokenizer=True)
    return HFLocalPolicy(config.model, tokenizer, **options)


def _scripted(config: ScriptedPolicyConfig) -> Policy:
    from proofgym.policies._scripted import ScriptedPolicy

    return ScriptedPolicy(config.actions, policy_id=config.policy_id)


def _oracle(config: OraclePolicyConfig) -> Policy:
    from proofgym.policies._oracle import OraclePolicy

    return OraclePolicy(config.env_name, config.env_config, policy_id=config.policy_id)


@dataclass(frozen=True)
class PolicyKind:
    """A policy kind: ``config``, the pydantic model of its config (validated strictly), ``build(config) ->
    Policy``, and ``builds_slowly``: true when building does real work (loads a model, builds an environment), so a
    server builds it off its event loop."""

    config: type[BaseModel]
    build: Callable[[Any], Policy]
    builds_slowly: bool = False


#: Policies by name (aliases are names too). Plugins register through the ``proofgym.policies`` entry-point group
#: with a ``"module:attribute"`` target naming a :class:`PolicyKind`.
POLICIES: Registry[PolicyKind] = Registry("policy", "proofgym.policies", check=PolicyKind)


def register_policy(name: str, kind: PolicyKind | str) -> None:
    """Register a policy kind under ``name``: a :class:`PolicyKind`, or a ``"module:attribute"`` string naming one."""
    POLICIES.register(name, kind)


def policy_kind(name: str) -> PolicyKind:
    """The kind registered as ``name``; :class:`~proofgym.core.ConfigError` when unknown or not loadable."""
    try:
        return POLICIES.get(name)
    except RegistryError as exc:
        raise ConfigError(str(exc)) from None


_OPENAI = PolicyKind(OpenAIPolicyConfig, _openai)
_HF = PolicyKind(HFPolicyConfig, _hf, builds_slowly=True)
for _name, _kind in {"openai": _OPENAI, "vllm": _OPENAI, "openai-chat": _OPENAI, "hf": _HF, "local": _HF,
                     "scripted": PolicyKind(ScriptedPolicyConfig, _scripted),
                     "oracle": PolicyKind(OraclePolicyConfig, _oracle, builds_slowly=True)}.items():
    register_policy(_name, _kind)


def policy_names() -> list[str]:
    """Every name ``build_policy`` accepts, aliases and plugins' included, sorted."""
    return POLICIES.names()


#: Config keys asking a policy to show its model the observation's frame (the reference's Crafter policy's).
VISION_KEYS: tuple[str, ...] = ("use_vision", "image_only_mode")


def without_vision_keys(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` without the vision keys (:data:`VISION_KEYS`) that policy ``name``'s config does not take: false
    asks for nothing and is dropped; true is a :class:`~proofgym.core.ConfigError` naming the key, since that
    policy shows its model text only (a vision eval run on it would measure a text-only model)."""
    fields = policy_kind(name).config.model_fields
    out = dict(config)
    for key in VISION_KEYS:
        if key in fields or key not in out:
            continue
        value = out.pop(key)
        if value is False:
            continue
        problem = ("this policy shows its model the observation's text only, not its frame; use the openai "
                   "policy with a vision model, or set it to false") if value is True else "expected true or false"
        raise ConfigError(f"policy {name!r}: {key}: {problem}",
                          problems=[{"loc": (key,), "msg": problem, "input": value, "type": "value_error"}])
    return out


def build_policy(name: str, config: Mapping[str, Any] | None = None) -> Policy:
    """A policy by ``name`` (``openai`` / ``vllm`` / ``openai-chat``, ``hf`` / ``local``, ``scripted``,
    ``oracle``), built from ``config`` validated strictly (types too): :class:`~proofgym.config.ConfigError`
    names an unknown policy, every unknown or invalid key, or a missing API key variable. Every policy accepts
    ``use_vision`` / ``image_only_mode`` false; true only one that shows its model frames (``openai``), see
    :func:`without_vision_keys`."""
    kind = policy_kind(name)
    if config is not None and not isinstance(config, Mapping):
        raise ConfigError(f"policy {name!r}: the config must be a mapping, got {type(config).__name__}")
    data = without_vision_keys(name, config or {})
    if "api_key" in data:
        raise ConfigError(f"policy {name!r}: api_key: secrets must not be stored in configs; "
                          "set api_key_env to the name of an environment variable holding the key")
    try:
        validated = kind.config.model_validate(data, strict=True)  # true is not a number, "3" not an integer
    except ValidationError as exc:
        problems = "; ".join(describe_validation_error(error) for error in exc.errors())
        raise ConfigError(f"policy {name!r}: invalid config: {problems}") from None
    try:
        return kind.build(validated)
    except (ValueError, TypeError, OSError) as exc:  # a bad URL, a model path that does not exist, an env config
        raise ConfigError(f"policy {name!r}: {exc}") from None
