"""Eval rollouts on a Ray cluster (``proofgym eval --ray ADDRESS`` or ``[compute] ray_address``): each rollout runs
in a Ray actor with its own environment, the actors spread over the cluster's nodes."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from proofgym.evaluation._config import ComputeSection, EvalSection
from proofgym.evaluation._report import SeedResult
from proofgym.runtime import RayActorPool, RayWorkerLost, connect_ray
from proofgym.traces import SessionTrace

#: Tries of one seed whose actor or node is lost under it; each try is a fresh rollout.
MAX_ATTEMPTS = 3
#: How long the first rollout waits for every actor to be up, so that the work spreads over the nodes at once.
_FILL_TIMEOUT_S = 120.0


def shared_store(traces: str | None) -> bool:
    """Whether every node can write to the trace store itself (a Postgres URL); else the driver is the one writer."""
    return traces is not None and traces.split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


class RayRollouts:
    """Rollouts of one eval as calls to a pool of rollout actors (:class:`~proofgym.runtime.RayActorPool`).

    There are ``compute.workers`` actors (default: ``concurrency``, at most the cluster's CPUs divided by
    ``compute.num_cpus``); the eval's own semaphore bounds rollouts in flight, so ``concurrency`` holds
    cluster-wide. Each actor builds its policy once. With a Postgres trace store each actor writes its
    sessions there itself (:attr:`writes_traces`); otherwise sessions come back to the driver, the one writer.

    A rollout whose actor or node is lost is rolled out again on another actor (up to :data:`MAX_ATTEMPTS`
    times), so a lost node costs time, never a result; only a seed lost every time fails, saying so.
    """

    def __init__(self, section: EvalSection, env_name: str, run_id: str, compute: ComputeSection) -> None:
        self._ray = ray = connect_ray(compute.ray_address)
        capacity = max(1, int(ray.cluster_resources().get("CPU", 1) // compute.num_cpus))
        size = compute.workers or min(section.concurrency, capacity)
        self.writes_traces = shared_store(section.traces)
        store = section.traces if self.writes_traces else None
        self._pool = RayActorPool(_RolloutHost, size=size, num_cpus=compute.num_cpus,
                                  args=(section, env_name, run_id, store))

    def nodes_used(self) -> set[str]:
        return self._pool.nodes_used()

    async def rollout(self, seed: int) -> tuple[SeedResult, SessionTrace | None]:
        await self._pool.fill_once(_FILL_TIMEOUT_S)
        started = time.monotonic()
        try:
            return await self._pool.call("rollout", seed, attempts=MAX_ATTEMPTS)
        except self._ray.exceptions.RayTaskError as exc:  # the actor survived; the rollout code did not
            return SeedResult(seed, "failed", duration_s=time.monotonic() - started,
                              error=f"the rollout failed on its Ray actor: {_first_line(exc)}"), None
        except RayWorkerLost as exc:
            return SeedResult(seed, "failed", duration_s=time.monotonic() - started, error=str(exc)), None

    def close(self) -> None:
        self._pool.close()


class _RolloutHost:
    """A Ray actor that rolls out seeds of one eval with its own policy (and its own trace store connection)."""

    def __init__(self, section: EvalSection, env_name: str, run_id: str, traces: str | None) -> None:
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


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]
