"""The task app's HTTP contract: ``POST /rollout`` request and response bodies.

The field names follow the reference task-app contract, so a trainer written against it can call a
proofgym app unchanged. Request models forbid unknown keys, so a typo (``max_turn``) is a 422
naming the field instead of a silently ignored setting; response models ignore unknown keys, so a
client parsing a newer app's answer keeps working.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from proofgym.core import model_text


def json_integral(value: Any) -> Any:
    """``value``, or the int it is when it is an integral float (JSON Schema's integer)."""
    # JSON Schema's "integer" is any number with no fractional part: 3.0 is one, 3.5 and "3" are not.
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _url_pattern() -> str:
    h16, dec = "[0-9A-Fa-f]{1,4}", "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
    ls32 = rf"({h16}:{h16}|{dec}\.{dec}\.{dec}\.{dec})"
    ipv6 = "|".join([  # RFC 3986's IPv6address, each of its nine forms
        rf"({h16}:){{6}}{ls32}", rf"::({h16}:){{5}}{ls32}", rf"({h16})?::({h16}:){{4}}{ls32}",
        rf"(({h16}:){{0,1}}{h16})?::({h16}:){{3}}{ls32}", rf"(({h16}:){{0,2}}{h16})?::({h16}:){{2}}{ls32}",
        rf"(({h16}:){{0,3}}{h16})?::{h16}:{ls32}", rf"(({h16}:){{0,4}}{h16})?::{ls32}",
        rf"(({h16}:){{0,5}}{h16})?::{h16}", rf"(({h16}:){{0,6}}{h16})?::"])
    name = r"([A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})+"
    userinfo = r"([A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*@"
    return rf"^[Hh][Tt][Tt][Pp][Ss]?://({userinfo})?({name}|\[({ipv6})\])(:[0-9]*)?([/?#][\x21-\x7e]*)?$"


#: What ``policy.config.inference_url`` must match (published as the schema's ``pattern``): http(s), a host
#: (a name, or an IPv6 literal in brackets), an optional port, then printable ASCII (percent-encode the rest).
HTTP_URL_PATTERN = _url_pattern()
_HTTP_URL = re.compile(HTTP_URL_PATTERN)


def _boolean(value: Any) -> Any:
    if not isinstance(value, bool):  # a Literal[False] alone would take 0 (0 == False)
        raise ValueError("expected a boolean")
    return value


# Ints as JSON Schema means them: strict (no strings, no booleans) but 3.0 is 3.
_Seed = Annotated[int, Field(strict=True, ge=0, le=2**63 - 1), BeforeValidator(json_integral)]
_False = Annotated[Literal[False], BeforeValidator(_boolean)]
_Int = Annotated[int, Field(strict=True), BeforeValidator(json_integral)]
_Positive = Annotated[int, Field(strict=True, ge=1), BeforeValidator(json_integral)]
_Turns = Annotated[int, Field(strict=True, ge=1, le=100_000), BeforeValidator(json_integral)]


def _stored_as_sent(value: str) -> str:
    # An id is stored and looked up as sent: one the store would change (a NUL, see model_text) is refused.
    if model_text(value) != value:
        raise ValueError("an id must not contain NUL (U+0000) or lone surrogates: it is stored as sent")
    return value


_Id = Annotated[str, Field(min_length=1, max_length=256, json_schema_extra={"pattern": "^[^\\x00]*$"}),
                AfterValidator(_stored_as_sent)]
_AGENT_OPS = ("agent", "policy")
_Op = Literal["agent", "policy", "env"]


class _Request(BaseModel):
    # Strict: a value of the wrong JSON type ("3" for 3, 1 for true) is refused, as the published schema says.
    model_config = ConfigDict(extra="forbid", strict=True)


def _op_from_object(value: Any) -> Any:
    # The reference's ops may also be objects: {"type": "agent"} is the op "agent".
    if isinstance(value, dict):
        if set(value) != {"type"} or not isinstance(value["type"], str):
            raise ValueError('an op object is {"type": "agent" | "policy" | "env"} and nothing else')
        return value["type"]
    return value


_OP_NAMES = {"enum": ["agent", "policy", "env"], "type": "string"}
_OpItem = Annotated[_Op, BeforeValidator(_op_from_object), WithJsonSchema({"anyOf": [
    _OP_NAMES, {"type": "object", "properties": {"type": _OP_NAMES}, "required": ["type"],
                "additionalProperties": False}]})]
_AGENT_OP: dict[str, Any] = {"anyOf": [{"enum": list(_AGENT_OPS)},
                       {"type": "object", "required": ["type"], "properties": {"type": {"enum": list(_AGENT_OPS)}}}]}


class EnvSpec(_Request):
    """Which task to run.

    ``env_name`` must name the app's environment (404 otherwise; omitted means the app's);
    ``seed`` determines the task; ``config`` is merged over the app's environment config (a key the
    app's config sets cannot be changed). ``env_id`` is echoed as the trajectory's ``env_id``.
    """

    env_name: str | None = None
    env_id: _Id | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    seed: _Seed = 0


#: What ``policy.config.provider`` may be: a short name (the reference's configs say ``groq``, ``openai``, ``vllm``).
PROVIDER_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]*$"


class PolicyConfig(BaseModel):
    """The policy's settings, passed to the policy, which validates them (``model``, ``inference_url``,
    ``temperature``, ``top_p``, ``max_tokens``, ... for ``openai``; ``actions`` for ``scripted``).

    ``inference_url`` is passed on unchanged; its ``cid`` query parameter is the trace correlation
    id. ``trace_correlation_id`` sets that id explicitly and is not passed on. ``null`` (and, for
    ``inference_url``, ``""``) in one of these fields means "not set". A credential in the config (a password
    or an ``api_key`` parameter in ``inference_url``, a secret-named key such as ``extra_body.authorization``)
    is used as sent, and stored and echoed as ``***``.

    Two keys of the reference's policy configs are the app's, accepted for every policy and passed to
    none: ``provider`` (who serves the model, e.g. ``groq``) is recorded in the session's metadata and
    changes nothing else (requests go to ``inference_url``); ``max_llm_calls`` caps the model calls of
    the rollout (one per turn that calls the model; retries of a failed request are attempts of the
    same call): once that many were made the episode ends, its last step truncated, as at a turn
    limit. A policy that calls no model (oracle, scripted) has them recorded and never reaches the cap.
    """

    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = None
    provider: str | None = Field(None, min_length=1, max_length=64, pattern=PROVIDER_PATTERN,
                                 description="who serves the model (recorded in the session's metadata only)")
    max_llm_calls: _Turns | None = Field(None, description="the most model calls the rollout makes; reached, the "
                                                           "episode ends truncated")
    inference_url: str | None = Field(None, max_length=4096, json_schema_extra={"anyOf": [
        {"type": "string", "maxLength": 4096, "pattern": HTTP_URL_PATTERN}, {"const": ""}, {"type": "null"}]})
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: _Int | None = None
    policy_id: _Id | None = None
    trace_correlation_id: _Id | None = None

    @field_validator("inference_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value  # what clients without a model send (the reference's default)

    @field_validator("inference_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not _HTTP_URL.fullmatch(value):
            raise ValueError("expected an http:// or https:// URL with a host, in printable ASCII")
        try:
            urlsplit(value)
        except ValueError as exc:  # a bracketed host the pattern lets through but Python cannot parse
            raise ValueError(f"expected an http:// or https:// URL with a host: {exc}") from None
        return value


#: PolicyConfig's keys that every policy accepts, passed on only to a policy whose config has them: ``inference_url``
#: carries the correlation id; ``model`` is what the reference's eval client always sends (recorded in the session's
#: metadata for a policy that calls no model); ``provider`` and ``max_llm_calls`` are the app's (see PolicyConfig).
EVERY_POLICY_KEYS: tuple[str, ...] = ("inference_url", "model", "provider", "max_llm_calls")

#: PolicyConfig's own fields (the reference contract's), where ``null`` means "not set".
UNSET_WHEN_NULL: tuple[str, ...] = tuple(name for name in PolicyConfig.model_fields if name != "trace_correlation_id")


class PolicySpec(_Request):
    """Which policy acts: ``policy_name`` as in ``proofgym.policies.build_policy``, and its ``config``.

    ``policy_id`` names the policy in the trajectory and the trace (default: the policy's own id).
    """

    policy_id: _Id | None = None
    policy_name: str = Field("openai", min_length=1, max_length=64)
    config: PolicyConfig = Field(default_factory=PolicyConfig)


#: The trace formats a request may ask for (``record.trace_format``).
TRACE_FORMATS: tuple[str, ...] = ("compact", "structured", "full")


class RecordConfig(_Request):
    """What the response carries: ``trajectories`` (the steps), and the trace when ``return_trace``:
    ``compact`` (a summary), ``structured`` (the summary and the session in the reference's v3 trace
    shape, ``session_trace``) or ``full`` (proofgym's whole session, as its trace store holds it, and
    the same ``session_trace`` as one more top-level key).
    Log-probabilities and values are not produced by this app; asking for them is an error rather
    than a silently missing field."""

    trajectories: bool = True
    logprobs: _False = False
    value: _False = False
    return_trace: bool = False
    trace_format: Literal["compact", "structured", "full"] = "compact"


class SafetyConfig(_Request):
    """Per-rollout limits: ``max_ops`` caps the number of environment steps, ``max_time_s`` the wall
    clock (both capped in turn by the app's own limits)."""

    max_ops: _Positive | None = None
    max_time_s: float | None = Field(None, gt=0, allow_inf_nan=False)


class RolloutRequest(_Request):
    """``POST /rollout``: run one episode of ``env`` with ``policy``.

    The turn limit is the smallest of ``max_turns``, the number of ``"agent"`` (or ``"policy"``)
    entries in ``ops`` and ``safety.max_ops``; with none of them the environment's own limit
    applies. ``mode: rl`` requires a trace correlation id (the ``cid`` of the inference URL or an
    explicit ``trace_correlation_id``). ``on_done``, ``training_session_id`` and ``synth_base_url``
    are accepted for compatibility with the reference contract and have no effect.
    """

    run_id: _Id
    env: EnvSpec = Field(default_factory=EnvSpec)
    policy: PolicySpec = Field(default_factory=PolicySpec)
    ops: list[_OpItem] | None = Field(None, max_length=200_000, json_schema_extra={"contains": _AGENT_OP})
    max_turns: _Turns | None = None
    record: RecordConfig = Field(default_factory=RecordConfig)
    safety: SafetyConfig = Field(default_factory=SafetyConfig)
    mode: Literal["rl", "eval"] = "eval"
    trace_correlation_id: _Id | None = None
    on_done: Literal["reset", "terminate"] = "reset"
    training_session_id: str | None = Field(None, max_length=256)
    synth_base_url: str | None = Field(None, max_length=4096)

    @model_validator(mode="after")
    def _ops_have_an_agent_turn(self) -> RolloutRequest:
        if self.ops is not None and not any(op in _AGENT_OPS for op in self.ops):
            raise ValueError("ops must contain at least one 'agent' op (one per turn)")
        return self

    def turn_limit(self) -> int | None:
        """The most turns this request allows, or ``None`` when it sets no limit of its own."""
        limits = [limit for limit in (self.max_turns, self.safety.max_ops) if limit is not None]
        if self.ops is not None:
            limits.append(sum(op in _AGENT_OPS for op in self.ops))
        return min(limits, default=None)


class RolloutStep(BaseModel):
    """One step of a trajectory: the observation acted on, the action, and what followed."""

    obs: dict[str, Any]
    tool_calls: list[dict[str, Any]]
    reward: float | None = None
    done: bool = False
    truncated: bool | None = None
    info: dict[str, Any] = Field(default_factory=dict)


class RolloutTrajectory(BaseModel):
    """One episode. ``final`` holds the last observation, the return, the outcome score and the verdict."""

    env_id: str
    policy_id: str
    steps: list[RolloutStep]
    final: dict[str, Any] | None = None
    length: int
    inference_url: str | None = None
    trace_correlation_id: str | None = None


class RolloutMetrics(BaseModel):
    """Returns and scores. ``outcome_score`` is the environment's verdict-based score (``None`` when
    the episode produced none); ``invalid_reason`` says why the environment could not judge the
    episode (its toolchain missing, its verifier unavailable), ``None`` when it judged it."""

    episode_returns: list[float]
    mean_return: float
    num_steps: int
    num_episodes: int = 1
    outcome_score: float | None = None
    invalid_reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @field_validator("episode_returns", "mean_return", "outcome_score")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        values = value if isinstance(value, list) else [value]
        if any(v is not None and not math.isfinite(v) for v in values):
            raise ValueError("rewards must be finite")
        return value


class PipelineMetadata(BaseModel):
    """What a trainer's pipeline keys on: the reward, who acted, the (unchanged) inference URL and
    the task. ``reward_score`` is the episode's return."""

    reward_score: float
    policy_id: str
    inference_url: str | None = None
    env_name: str
    task_id: str | None = None
    task_split: str | None = None
    trace_correlation_id: str | None = None
    seed: int | None = None
    session_id: str | None = None


class RolloutResponse(BaseModel):
    """``POST /rollout``'s answer.

    ``status`` is the session's (``ok``, ``error``, ``timeout``, ``cancelled``); ``aborted`` is true
    unless it is ``ok``, and ``error`` then says why. ``trace`` is present when the request asked
    for it, in the format asked (``record.trace_format``): ``compact``, a summary; ``structured``, the
    summary and ``session_trace``, the session in the reference's v3 trace shape; ``full``, proofgym's
    whole session and the same ``session_trace`` beside it. ``trace_correlation_id`` is the id the
    session is stored under.
    """

    run_id: str
    trajectories: list[RolloutTrajectory]
    branches: dict[str, list[str]] = Field(default_factory=dict)
    metrics: RolloutMetrics
    aborted: bool = False
    ops_executed: int = 0
    status: str = "ok"
    error: str | None = None
    trace: dict[str, Any] | None = None
    trace_correlation_id: str | None = None
    pipeline_metadata: PipelineMetadata


class HealthResponse(BaseModel):
    """``GET /health``: ``ok`` (and ``healthy``, the reference's name for it) is false (status 503) while the
    app drains for shutdown."""

    ok: bool
    healthy: bool
    env_name: str
    version: str
    draining: bool


class RootResponse(BaseModel):
    """``GET /``: the reference's liveness probe, without authentication."""

    status: Literal["ok"]
    service: str
