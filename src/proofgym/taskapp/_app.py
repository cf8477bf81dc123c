"""The task app: one environment behind ``/health``, ``/info``, ``/task_info`` and ``/rollout``."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import uuid
from contextlib import asynccontextmanager
from typing import Annotated, Any, AsyncIterator, Collection, Mapping

from fastapi import FastAPI, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import Field, ValidationError

import proofgym
from proofgym.core import ConfigError, model_text
from proofgym.envs import env_hook, env_names, verification_cache_usage
from proofgym.http import (
    DEFAULT_BODY_TIMEOUT_S,
    RequestGuard,
    SafeJSONResponse,
    api_key_from_env,
    error_responses,
    publish,
    redacted_logs,
    require_key,
)
from proofgym.policies import (
    Policy,
    build_policy,
    policy_kind,
    policy_names,
    without_vision_keys,
)
from proofgym.rollouts import RolloutResult, run_rollout
from proofgym.taskapp._controller import Draining, RolloutCancelled, RolloutController
from proofgym.taskapp._correlation import correlation_id
from proofgym.taskapp._envs import EnvProvider
from proofgym.taskapp._errors import RequestError, shown_errors
from proofgym.taskapp._models import (
    EVERY_POLICY_KEYS,
    TRACE_FORMATS,
    UNSET_WHEN_NULL,
    HealthResponse,
    RolloutRequest,
    RolloutResponse,
    RootResponse,
    json_integral,
)
from proofgym.taskapp._openapi import TASK_APP_SECURITY_SCHEMES, rollout_contract
from proofgym.taskapp._recorder import TraceRecorder
from proofgym.taskapp._response import response_body
from proofgym.taskapp._signals import SignalDrain
from proofgym.taskapp._task_info import MAX_TASK_INFO_SEEDS, TaskDescriber
from proofgym.traces import TraceStore, TraceStoreError

logger = logging.getLogger("proofgym.taskapp")

#: Policies a request may name unless the app says otherwise. A local model is left out: loading
#: one per request is slow, and its ``model`` would let a client load any path on the server.
DEFAULT_POLICIES: tuple[str, ...] = ("openai", "openai-chat", "vllm", "scripted", "oracle")
# Policy config keys a request must not set: the app would read a secret of its own environment
# and send it to a URL the client chose.
_SERVER_ONLY_POLICY_KEYS = ("api_key_env",)
# Policy config keys that become the policy's id in the trace (``openai:<model>``), stored as sent.
_POLICY_NAMING_KEYS = ("policy_id", "model")
# Policy config keys of the contract that every policy accepts, passed on only to those that take them.
_CONTRACT_KEYS = EVERY_POLICY_KEYS
_TaskSeed = Annotated[int, Field(ge=0, le=2**63 - 1)]
#: Paths answered without the API key: liveness probes (``/`` is the reference's).
OPEN_PATHS: tuple[str, ...] = ("/", "/health")


def create_app(
    env_name: str,
    *,
    env_config: Mapping[str, Any] | None = None,
    api_key: str | None = None,
    store: TraceStore | str | os.PathLike[str] | None = None,
    max_concurrency: int = 32,
    max_body_bytes: int = 4 << 20,
    max_time_s: float = 900.0,
    grace_s: float = 30.0,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    env_overrides: Collection[str] = (),
    policies: Collection[str] = DEFAULT_POLICIES,
    drain_on_signal: bool = False,
    judging: Mapping[str, Any] | None = None,
) -> FastAPI:
    """A FastAPI task app serving environment ``env_name``.

    ``env_config`` is the environment's config; a request's ``env.config`` may change only the
    keys listed in ``env_overrides`` (``"*"``: any). ``api_key`` defaults to
    ``ENVIRONMENT_API_KEY`` (or ``PROOFGYM_API_KEY``, ``ENV_API_KEY``); with none, requests are not
    authenticated (``proofgym serve`` allows that on loopback only). ``store`` is a
    :class:`~proofgym.traces.TraceStore` (left open) or a path / SQLAlchemy URL (opened and closed
    by the app; default ``traces/proofgym.db``): every rollout's session is committed to it before
    the response is sent. At most ``max_concurrency`` rollouts run at once (more wait their turn);
    bodies above ``max_body_bytes`` are refused (413), as are bodies that have not arrived within
    ``body_timeout_s`` seconds (408, and the connection is closed); a rollout runs at most ``max_time_s``
    seconds; ``policies`` are the policy names a request may use. On shutdown, running rollouts
    get ``grace_s`` seconds before they are cancelled (and recorded as such).

    With ``drain_on_signal``, the first SIGINT / SIGTERM the serving process receives drains the
    rollouts *before* the server stops: new rollouts get 503 (``Retry-After``) and ``/health``
    reports draining while running ones get their ``grace_s``; only then is the signal handed to
    the handler that was installed before (the server's, e.g. uvicorn's, which stops it). A later
    signal is handed on at once, after the first one if that is still held back (so uvicorn sees
    both, in order: a second Ctrl+C forces the exit). It takes effect only when the lifespan runs
    in the main thread of a process whose event loop supports signal handlers, and only for a
    signal that already has a Python handler; the handlers are put back at shutdown.
    ``proofgym serve`` turns it on in every worker.

    ``judging`` (a :class:`~proofgym.judges.JudgingConfig` as a mapping) turns the judges on: every finished
    rollout is scored with the rubric set it names (default: the environment's own ``rubrics``), and the judged
    session (its decisions' judge event rewards, the blended outcome reward) is what is stored and answered:
    the response's returns are the blended reward, and ``metrics.details.judging`` holds each decision's and the
    outcome's per-criterion verdicts, the blend and its per-decision split.

    Credentials a request carries (``policy.config.inference_url``'s password or ``api_key`` parameter, a
    secret-named key anywhere in ``policy.config`` such as ``extra_body.authorization``) are used where the
    client sent them and written down nowhere: the trace store, the response (the echoed inference URL, the
    trace) and the log have them as ``***``, and a 422 never echoes them; a policy key the policy does not take
    (``api_key``, ``extra_headers``) is a 422 naming its path, as any unknown key is.

    Raises ``ValueError`` for an unknown environment, an invalid config or limit.
    """
    if env_name not in env_names():
        raise ValueError(f"unknown environment {env_name!r}; expected one of {env_names()}")
    if not max_time_s > 0 or not grace_s >= 0:
        raise ValueError(f"max_time_s must be > 0 and grace_s >= 0, got {max_time_s} and {grace_s}")
    if not body_timeout_s > 0:
        raise ValueError(f"body_timeout_s must be > 0, got {body_timeout_s}")
    unknown = sorted(set(policies) - set(policy_names()))
    if unknown:
        raise ValueError(f"unknown policy names {unknown}; expected some of {policy_names()}")
    envs = EnvProvider(env_name, env_config, overridable=env_overrides)
    scorer = None if judging is None else _scorer(judging, envs)
    key = api_key if api_key is not None else api_key_from_env()
    controller = RolloutController(max_concurrency)
    allowed_policies = sorted(policies)
    limits = {"max_concurrency": max_concurrency, "max_body_bytes": max_body_bytes, "max_time_s": max_time_s,
              "grace_s": grace_s, "body_timeout_s": body_timeout_s}
    recorder = TraceRecorder(store, env_name=env_name, run_config={"app": "proofgym serve", **limits,
                                                                   "env_config": envs.base_config})

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        with redacted_logs():  # the server's log lines never hold a credential a request carried
            await recorder.open()
            signals = SignalDrain(controller, grace_s)
            try:
                if drain_on_signal:
                    signals.install()
                yield
            finally:
                signals.uninstall()
                cancelled = await controller.drain(grace_s)
                if cancelled:
                    logger.warning("cancelled %d running rollout(s) at shutdown", cancelled)
                await signals.wait()
                await recorder.close()
                closer = getattr(getattr(scorer, "judge", None), "close", None)
                if closer is not None:
                    await asyncio.to_thread(closer)

    app = FastAPI(title=f"proofgym task app: {env_name}", version=proofgym.__version__, lifespan=lifespan)
    app.state.controller = controller
    app.state.recorder = recorder
    app.add_middleware(RequestGuard, api_key=key, max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s,
                       open_paths=OPEN_PATHS)
    publish(app, rollout_contract(env_name=env_name, policies={name: policy_kind(name).config for name in policies},
                                  base_env_config=envs.base_config, overridable=envs.overridable,
                                  server_only_keys=_SERVER_ONLY_POLICY_KEYS,
                                  refused_selections=_refused_selections(envs), difficulties=envs.difficulties),
            *([require_key(OPEN_PATHS, schemes=TASK_APP_SECURITY_SCHEMES)] if key is not None else []))
    describer = TaskDescriber(env_name, envs.make, envs.base_config, envs.tools, policies=allowed_policies,
                              max_time_s=max_time_s)
    errors = error_responses(keyed=key is not None)

    # Error bodies echo what the client sent (a NaN, a lone surrogate): SafeJSONResponse encodes any of it; a
    # credential in it is not echoed (shown_errors).
    @app.exception_handler(RequestValidationError)
    async def _unparsed(_: Any, exc: RequestValidationError) -> SafeJSONResponse:
        return SafeJSONResponse({"detail": shown_errors(exc.errors())}, status_code=422)

    @app.exception_handler(RequestError)
    async def _invalid(_: Any, exc: RequestError) -> SafeJSONResponse:
        return SafeJSONResponse({"detail": exc.details()}, status_code=422)

    @app.exception_handler(Draining)
    async def _draining(_: Any, exc: Draining) -> SafeJSONResponse:
        return SafeJSONResponse({"detail": "the task app is shutting down; send the rollout to another instance"},
                                status_code=503, headers={"Retry-After": "1"})

    @app.exception_handler(TraceStoreError)
    async def _unstored(_: Any, exc: TraceStoreError) -> SafeJSONResponse:
        return SafeJSONResponse({"detail": f"the rollout ran but its trace could not be stored: {exc}"},
                                status_code=500)

    @app.exception_handler(Exception)
    async def _failed(_: Any, exc: Exception) -> SafeJSONResponse:
        # The last resort: a clear JSON 500, never a traceback (the server logs that).
        return SafeJSONResponse({"detail": f"internal error ({type(exc).__name__}); see the task app's log"},
                                status_code=500)

    @app.get("/", response_model=RootResponse, responses=error_responses(keyed=False))
    async def root() -> dict[str, Any]:
        """The reference's liveness probe: ``{"status": "ok"}``, without authentication."""
        return {"status": "ok", "service": f"proofgym:{env_name}"}

    @app.get("/health", response_model=HealthResponse,
             responses=error_responses(keyed=False, extra={503: {
                 "model": HealthResponse, "description": "Draining for shutdown, or at the connection limit"}}))
    async def health() -> JSONResponse:
        """Liveness, without authentication; 503 while the app drains for shutdown."""
        body = {"ok": not controller.draining, "healthy": not controller.draining, "env_name": env_name,
                "version": proofgym.__version__, "draining": controller.draining}
        return JSONResponse(body, status_code=503 if controller.draining else 200)

    @app.get("/info", responses=errors)
    async def info() -> dict[str, Any]:
        """The environment, its tools and config, the app's limits and what a request may choose; also the
        reference's task-app description (``service``, ``task``, ``environment``, ``dataset``, ``rubric`` /
        ``rubrics``, ``inference``), so that it reads as the reference's ``TaskInfo``."""
        described = describer.base()
        return {
            **described,
            "service": {"task": described["task"], "version": proofgym.__version__},
            "rubrics": described["rubric"],
            "env_name": env_name,
            "version": proofgym.__version__,
            "tools": envs.tools,
            "env_config": envs.base_config,
            "env_overrides": sorted(envs.overridable),
            "policies": allowed_policies,
            "auth": key is not None,
            "limits": {**described["limits"], **limits},
            "modes": ["rl", "eval"],
            "trace_formats": list(TRACE_FORMATS),
            "trace_store": recorder.url,
            "worker_pid": os.getpid(),  # which process answered (``--workers``)
            "rollouts": {"running": controller.running, "waiting": controller.waiting,
                         "started": controller.started, "finished": controller.finished},
            # This worker's verdict caches (the rulebook environments share one per domain): bounded by memory.
            "verification_cache": verification_cache_usage(),
        }

    @app.get("/task_info", responses=errors)
    async def task_info(
        seed: list[_TaskSeed] | None = Query(None, max_length=MAX_TASK_INFO_SEEDS,
                                             description="a task's seed; repeat it for several tasks"),
    ) -> Any:
        """The task of each seed as the agent sees it (the first observation and the tools) in the reference's
        ``TaskInfo`` shape: one object for one seed, a list for several (``?seed=0&seed=1``, at most 64); without
        a seed, the task set's description as ``{"taskset": ...}``."""
        wanted = list(seed or ())
        if not wanted:
            return {"taskset": describer.taskset()}
        tasks = await asyncio.to_thread(describer.tasks, wanted)
        return tasks[0] if len(tasks) == 1 else tasks

    @app.post("/rollout", response_model=RolloutResponse, responses=errors)
    async def rollout(request: RolloutRequest) -> Any:
        """Run one episode and answer with its trajectory, metrics and (on request) its trace."""
        if controller.draining:
            raise Draining()
        if request.env.env_name not in (None, env_name):
            return SafeJSONResponse({"detail": f"this app serves environment {env_name!r}, not "
                                               f"{request.env.env_name!r}; see GET /info"}, status_code=404)
        cid = correlation_id(request)
        env_config = request.env.config
        if isinstance(env_config.get("index"), float):
            # Published as a JSON Schema integer (a position in the split): 3.0 is one, as for the seed.
            env_config = {**env_config, "index": json_integral(env_config["index"])}
        config = envs.known_config(env_config, request.env.seed)
        if config is None:  # a config not seen before: validated by building an environment, off the loop
            config = await asyncio.to_thread(envs.config_for, env_config, request.env.seed)
        # A policy whose construction does real work (an environment, a model) is built off the event loop.
        if request.policy.policy_name in allowed_policies and policy_kind(request.policy.policy_name).builds_slowly:
            policy = await asyncio.to_thread(_build_policy, request, env_name, config, allowed_policies)
        else:
            policy = _build_policy(request, env_name, config, allowed_policies)

        trace_format = request.record.trace_format if request.record.return_trace else None

        async def play() -> tuple[RolloutResult, bytes | None]:
            # Recording is part of the rollout, so a drain waits for it, cancelled rollouts included.
            finished: list[RolloutResult] = []
            try:
                result = await run_rollout(
                    env_name, seed=request.env.seed, policy=policy, env_config=config,
                    max_turns=request.turn_limit(), max_lm_calls=request.policy.config.max_llm_calls,
                    max_time_s=min(max_time_s, request.safety.max_time_s or max_time_s),
                    run_id=request.run_id, session_id=uuid.uuid4().hex, correlation_id=cid,
                    metadata={"mode": request.mode, "policy_name": request.policy.policy_name,
                              "inference_url": request.policy.config.inference_url,
                              "model": request.policy.config.model, "provider": request.policy.config.provider,
                              "max_llm_calls": request.policy.config.max_llm_calls, "source": "proofgym serve"},
                    on_finish=finished.append)
            except asyncio.CancelledError:
                if finished:
                    await _record(recorder, finished[0])
                raise
            judged = None
            if scorer is not None:
                [judged] = await scorer.score([result.session])
                result = dataclasses.replace(result, session=judged.apply(result.session))
            # The answer is built and encoded before the session is committed: once it is stored, only
            # sending bytes is left, so a stored rollout is answered (a client retrying a failed answer
            # would run and store the rollout again).
            body = _answer(request, result, env_name=env_name, policy=policy, correlation_id=cid,
                           trace_format=trace_format, judged=judged)
            await _record(recorder, result)
            return result, body

        try:
            result, body = await controller.run(play())
        except RolloutCancelled:
            raise Draining() from None
        finally:
            await _close(policy)
        if body is None:
            return SafeJSONResponse({"detail": f"the rollout ran and was stored (session {result.session.session_id}"
                                               "), but its response could not be built; see the task app's log. "
                                               "Retrying runs and stores the rollout again."}, status_code=500)
        # Built and validated once; returning a Response spares FastAPI a second validation pass.
        return Response(body, media_type="application/json")

    return app


def _scorer(judging: Mapping[str, Any], envs: EnvProvider) -> Any:
    """The rubric scorer ``judging`` configures; ``ValueError`` naming what is wrong."""
    from proofgym.judges import JudgingConfig, build_scorer

    try:
        config = JudgingConfig.model_validate(dict(judging))
        default = None
        if config.rubric is None:
            env = envs.make(envs.base_config)
            try:
                default = env_hook(env, "rubrics")
            finally:
                env.close()
        return build_scorer(config, default_rubrics=default)
    except ValidationError as exc:
        raise ValueError(f"judging: {exc}") from None


def _answer(request: RolloutRequest, result: RolloutResult, *, env_name: str, policy: Policy,
            correlation_id: str | None, trace_format: Any, judged: Any = None) -> bytes | None:
    """The encoded response to a finished rollout, or ``None`` (logged) when it cannot be built. Bounded
    when it must be (:func:`~proofgym.taskapp._response.response_body`), it always can: ``None`` is a last
    resort, answered with a 500."""
    session = result.session
    try:
        return response_body(request, session, env_name=env_name,
                             policy_id=request.policy.policy_id or session.policy_id or str(policy.policy_id),
                             outcome_score=result.outcome_score, verdict=result.verdict,
                             invalid_reason=result.invalid_reason, correlation_id=correlation_id,
                             trace_format=trace_format,
                             judging=None if judged is None else judged.to_dict(calls=False))
    except Exception:  # noqa: BLE001 - the rollout ran: it is stored and answered whatever failed here
        logger.exception("rollout %s ran, but its response could not be built", session.session_id)
        return None


def _refused_selections(envs: EnvProvider) -> list[dict[str, Any]]:
    """The splits (and, where requests may set it, difficulties within them) a request may choose but the
    environment refuses, having no task there (a split of a pinned problem, Verilog's hard problems in val)."""
    from proofgym.envs import SPLITS

    def settable(key: str) -> bool:
        return key not in envs.forbidden and ("*" in envs.overridable or key in envs.overridable)

    if not settable("split"):
        return []
    levels = list(envs.difficulties) if settable("difficulty") else []
    refused: list[dict[str, Any]] = []
    for split in SPLITS:
        for selection in [{"split": split}, *({"split": split, "difficulty": level} for level in levels)]:
            try:
                envs.config_for(selection)
            except RequestError:
                refused.append(selection)
                if len(selection) == 1:
                    break  # the split has no task at all: every difficulty in it is refused too
    return refused


async def _close(policy: Policy) -> None:
    """Close the request's policy; a failure to do so is logged, not answered (the rollout is over)."""
    try:
        await policy.aclose()
    except Exception:  # noqa: BLE001 - the rollout is over and answered either way
        logger.warning("the policy of a rollout could not be closed", exc_info=True)


async def _record(recorder: TraceRecorder, result: RolloutResult) -> None:
    try:
        await recorder.record(result.session)
    except TraceStoreError as exc:
        logger.error("rollout %s ran but was not stored: %s", result.session.session_id, exc)
        raise


def _build_policy(request: RolloutRequest, env_name: str, env_config: Mapping[str, Any],
                  allowed: Collection[str]) -> Policy:
    """The request's policy; raises :class:`RequestError` naming the field when it cannot be built."""
    name = request.policy.policy_name
    if name not in allowed:
        raise RequestError(("policy", "policy_name"), f"this app accepts the policies {list(allowed)}", name)
    # Only what the client sent; null in a field of the reference contract means "not set".
    config = {key: value for key, value in request.policy.config.model_dump(
        exclude_unset=True, exclude={"trace_correlation_id"}).items()
        if not (value is None and key in UNSET_WHEN_NULL)}
    for key in _SERVER_ONLY_POLICY_KEYS:
        if key in config:
            raise RequestError(("policy", "config", key), "not accepted by a task app: it would send a secret of "
                                                          "the app's environment to the client's inference_url",
                               config[key])
    for key in _POLICY_NAMING_KEYS:
        if isinstance(config.get(key), str) and model_text(config[key]) != config[key]:
            raise RequestError(("policy", "config", key), "must not contain NUL (U+0000) or lone surrogates: it "
                                                          "names the policy in the trace, which stores it as sent",
                               config[key])
    if name == "oracle":
        # The oracle plays this app's environment, with the rollout's own config.
        if config.setdefault("env_name", env_name) != env_name:
            raise RequestError(("policy", "config", "env_name"), f"the oracle plays this app's environment "
                                                                 f"{env_name!r}", config["env_name"])
        if "env_config" in config:
            raise RequestError(("policy", "config", "env_config"), "the oracle uses the rollout's env.config; "
                                                                   "set that instead", config["env_config"])
        config["env_config"] = dict(env_config)
    schema = policy_kind(name).config
    for contract_key in _CONTRACT_KEYS:
        if contract_key not in schema.model_fields:
            # Part of the contract even for a policy that calls no model (see _CONTRACT_KEYS).
            config.pop(contract_key, None)
    try:
        config = without_vision_keys(name, config)  # a text-only policy refuses use_vision = true
    except ConfigError as exc:
        raise RequestError.from_problems(("policy", "config"), exc.problems, str(exc)) from None
    # JSON's types, as the published schema states them: 3.0 is an integer, "3" and true are not numbers.
    config = {key: json_integral(value) for key, value in config.items()}
    try:
        schema.model_validate(config, strict=True)
    except ValidationError as exc:
        raise RequestError.from_validation_error(("policy", "config"), exc) from None
    try:
        return build_policy(name, config)
    except (ConfigError, ValueError, TypeError) as exc:
        raise RequestError(("policy", "config"), str(exc), None) from None
