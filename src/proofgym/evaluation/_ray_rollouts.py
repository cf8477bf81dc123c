"""The one Ray rollout module: rollouts on a Ray cluster as calls to a pool of actors spread over its nodes
(:class:`~proofgym.runtime.RayActorPool`), for eval and for the RL trainer.

- :class:`RayRollouts`, an eval's (``proofgym eval --ray ADDRESS`` or ``[compute] ray_address``): each actor rolls
  out seeds with its own environment and policy.
- :class:`RayTaskApps`, the RL trainer's (``[compute] ray_address`` or ``proofgym train --ray ADDRESS``): each actor
  serves the environment in a task app of its own (``proofgym.taskapp.create_app`` in a thread of the actor, behind
  a key only that actor knows) and rolls out on it through the one task-app client against the trainer's policy
  server, exactly as the trainer does with ``local:ENV``. The driver is the one writer of the run's trace store:
  every session comes back in the rollout's answer, marked with its node (``ray_node``).

Both size the pool alike (``compute.workers`` actors, default: the rollout concurrency, at most as many as the
cluster holds with each actor's ``num_cpus`` / ``num_gpus`` / ``memory`` / ``resources``; the caller bounds rollouts
in flight, so the concurrency holds cluster-wide), ship ``compute.runtime_env`` to the nodes, wait once for every
actor to be up so that the work spreads over the nodes at once, and roll a rollout whose actor or node is lost under
it out again on another actor (up to :data:`MAX_ATTEMPTS` times): a lost node costs time, never a result; one lost
every time, or one whose actor's code raised, fails saying why, never a zero.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, cast

from proofgym.core import ConfigError
from proofgym.evaluation._config import ComputeSection, EvaluationSection
from proofgym.evaluation._report import SeedResult
from proofgym.http import RL_ROLLOUT_TRIES, TaskAppClient, TaskAppRollout
from proofgym.runtime import RayActorPool, RayWorkerLost, connect_ray
from proofgym.traces import SessionTrace

#: Tries of one rollout whose actor or node is lost under it; each try is a fresh rollout (the RL's: same cid).
MAX_ATTEMPTS = 3
#: How long an eval's first rollout waits for every actor to be up.
_EVAL_FILL_TIMEOUT_S = 120.0
#: How long the trainer's first rollout waits for every actor (each starting a task app) to be up.
_TASK_APP_FILL_TIMEOUT_S = 180.0


class _ActorRollouts:
    """A pool of rollout actors of ``host``, each called with ``rollout(...)``, placed as ``compute`` says (its
    resources per actor; its ``runtime_env`` is the job's when this process joins the cluster here)."""

    def __init__(self, host: type, args: tuple[Any, ...], *, compute: ComputeSection, concurrency: int,
                 fill_timeout_s: float) -> None:
        try:
            self._ray = ray = connect_ray(compute.ray_address, compute.runtime_env)
        except ConfigError as exc:  # the runtime_env names what it cannot ship
            raise ConfigError(f"compute.{exc}") from None
        capacity = compute.capacity(ray.cluster_resources())
        self.size = compute.workers or max(1, min(concurrency, capacity))
        self._fill_timeout_s = fill_timeout_s
        self._pool = RayActorPool(host, size=self.size, placement=compute, args=args)

    def nodes_used(self) -> set[str]:
        return self._pool.nodes_used()

    async def _call(self, *args: Any) -> tuple[Any, str | None, float]:
        """The actor's result, or ``None`` and why there is none; and when the call started (every actor up)."""
        await self._pool.fill_once(self._fill_timeout_s)
        started = time.monotonic()
        try:
            return await self._pool.call("rollout", *args, attempts=MAX_ATTEMPTS), None, started
        except self._ray.exceptions.RayTaskError as exc:  # the actor survived; its rollout code did not
            return None, f"the rollout failed on its Ray actor: {_first_line(exc)}", started
        except RayWorkerLost as exc:
            return None, str(exc), started

    def close(self) -> None:
        self._pool.close()


# -- eval ------------------------------------------------------------------------------------------------------------

def shared_store(traces: str | None) -> bool:
    """Whether every node can write to the trace store itself (a Postgres URL); else the driver is the one writer."""
    return traces is not None and traces.split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


class RayRollouts(_ActorRollouts):
    """Rollouts of one eval on a pool of :class:`_RolloutHost` actors. Each actor builds its policy once. With a
    Postgres trace store each actor writes its sessions there itself (:attr:`writes_traces`); otherwise sessions
    come back to the driver, the one writer."""

    def __init__(self, section: EvaluationSection, env_name: str, run_id: str, compute: ComputeSection) -> None:
        self.writes_traces = shared_store(section.traces)
        store = section.traces if self.writes_traces else None
        super().__init__(_RolloutHost, (section, env_name, run_id, store), compute=compute,
                         concurrency=section.concurrency, fill_timeout_s=_EVAL_FILL_TIMEOUT_S)

    async def rollout(self, seed: int) -> tuple[SeedResult, SessionTrace | None]:
        result, error, started = await self._call(seed)
        if error is not None:
            return SeedResult(seed, "failed", duration_s=time.monotonic() - started, error=error), None
        return cast("tuple[SeedResult, SessionTrace | None]", result)  # what _RolloutHost.rollout returns


class _RolloutHost:
    """A Ray actor that rolls out seeds of one eval with its own policy (and its own trace store connection)."""

    def __init__(self, section: EvaluationSection, env_name: str, run_id: str, traces: str | None) -> None:
        import ray

        from proofgym.evaluation._runner import _build_policy
        from proofgym.traces import TraceStore

        self._section, self._env_name, self._run_id = section, env_name, run_id
        self._node = ray.get_runtime_context().get_node_id()
        self._runner = asyncio.Runner()
        self._policy = _build_policy(section, env_name)
        self._store = TraceStore(traces) if traces is not None else None

    def node_id(self) -> str:
        return self._node

    def rollout(self, seed: int) -> tuple[SeedResult, SessionTrace | None]:
        from proofgym.evaluation._runner import _rollout_here

        result, session = self._runner.run(_rollout_here(self._section, self._env_name, self._policy, seed,
                                                         self._run_id))
        if session is None:
            return result, None
        session = dataclasses.replace(session, metadata={**session.metadata, "ray_node": self._node})
        if self._store is not None:
            try:
                self._store.write_session(session)
            except Exception as exc:  # noqa: BLE001 - a session that was not stored fails its seed, saying why
                result = dataclasses.replace(result, status="failed", error=f"the trace was not stored: {exc}")
        return result, session


# -- the RL trainer --------------------------------------------------------------------------------------------------

class RayTaskApps(_ActorRollouts):
    """The RL trainer's rollouts on a pool of :class:`_TaskAppHost` actors (a task app each)."""

    def __init__(self, env_name: str, *, env_config: Mapping[str, Any], compute: ComputeSection, concurrency: int,
                 timeout_s: float, ports: range | None = None) -> None:
        super().__init__(_TaskAppHost, (env_name, dict(env_config), timeout_s, ports), compute=compute,
                         concurrency=concurrency, fill_timeout_s=_TASK_APP_FILL_TIMEOUT_S)

    async def rollout(self, body: Mapping[str, Any], seed: int, cid: str) -> TaskAppRollout:
        result, error, started = await self._call(dict(body), seed, cid)
        if error is not None:
            return TaskAppRollout(seed, cid, error=error, attempts=MAX_ATTEMPTS, seconds=time.monotonic() - started)
        return cast(TaskAppRollout, result)  # what _TaskAppHost.rollout returns

    def close(self) -> None:
        super().close()
        remove_orphaned_actor_dirs()  # this node's actors that are already gone (the rest: at the next start)


_DIR_PREFIX = "proofgym-rl-actor-"


def remove_orphaned_actor_dirs(parent: str | Path | None = None) -> list[Path]:
    """Remove the folders of rollout actors whose process is gone (a killed actor never runs ``__del__``), in
    ``parent`` (the temporary folder by default); the folders removed. Each actor names its folder after its
    process id; one whose process still runs, or whose name carries none, is left alone."""
    removed = []
    for path in Path(parent or tempfile.gettempdir()).glob(f"{_DIR_PREFIX}*"):
        pid = path.name[len(_DIR_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or not path.is_dir() or _process_runs(int(pid)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _process_runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process, or not a pid at all: leave it
        return True
    return True


class _TaskAppHost:
    """A Ray actor: the environment's task app on a loopback port of its node (the first free one of ``ports`` when
    given, else any), and the task-app client rolling out on it (one rollout at a time; the actor's own event
    loop)."""

    def __init__(self, env_name: str, env_config: dict[str, Any], timeout_s: float,
                 ports: range | None = None) -> None:
        import ray

        from proofgym.http import BackgroundServer
        from proofgym.taskapp import create_app

        self._node = ray.get_runtime_context().get_node_id()
        remove_orphaned_actor_dirs()
        self._dir = Path(tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-"))
        key = secrets.token_urlsafe(24)
        # The node's own store, which the app commits each session to; the driver keeps the run's copy.
        app = create_app(env_name, env_config=env_config, api_key=key, store=self._dir / "traces.db",
                         max_concurrency=1)
        self._server = BackgroundServer(app, name="proofgym-rl-task-app", ports=ports).start(timeout_s=60.0)
        self._runner = asyncio.Runner()
        self._client = TaskAppClient(self._server.url, api_key=key, concurrency=1, timeout_s=timeout_s,
                                     tries=RL_ROLLOUT_TRIES)

    def node_id(self) -> str:
        return self._node

    def rollout(self, body: dict[str, Any], seed: int, cid: str) -> TaskAppRollout:
        result = self._runner.run(self._client.rollout(body, seed, cid))
        if result.trace is not None:
            result.trace = dataclasses.replace(result.trace, metadata={**result.trace.metadata, "ray_node": self._node,
                                                                       "ray_task_app_port": self._server.port})
        return result

    def __del__(self) -> None:  # a graceful exit; a killed actor's folder is removed by the next actor's start
        server = getattr(self, "_server", None)
        if server is not None:
            server.close(timeout_s=2.0)
        shutil.rmtree(getattr(self, "_dir", ""), ignore_errors=True)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]
