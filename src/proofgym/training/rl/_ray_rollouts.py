"""The trainer's rollouts on a Ray cluster (``[compute] ray_address`` or ``proofgym train --ray ADDRESS``).

Each rollout actor serves the environment in a task app of its own (``proofgym.serve.create_app`` in a thread of
the actor, behind a key only that actor knows) and rolls out on it against the trainer's policy server, exactly
as the trainer does with ``local:ENV``; the actors spread over the cluster's nodes. The driver is the one writer of
the run's trace store: every session comes back in the rollout's answer, marked with its node (``ray_node``).
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
from typing import Any, Mapping

from proofgym.training.rl._config import ComputeSection
from proofgym.training.rl._task_app import Rollout, RolloutClient
from proofgym.runtime import RayActorPool, RayWorkerLost, connect_ray

#: Tries of one rollout whose actor or node is lost under it; each try is a fresh rollout with the same cid.
MAX_ATTEMPTS = 3
#: How long the first rollout waits for every actor to be up, so that the work spreads over the nodes at once.
_FILL_TIMEOUT_S = 180.0


class RayTaskApps:
    """Rollouts as calls to a pool of :class:`_TaskAppHost` actors (:class:`~proofgym.runtime.RayActorPool`).

    ``compute.workers`` actors at most (default ``concurrency``, capped by the cluster's CPUs divided by
    ``compute.num_cpus``); the caller bounds rollouts in flight, so the rollout concurrency holds cluster-wide. A
    rollout whose actor or node is lost is rolled out again on another actor (up to :data:`MAX_ATTEMPTS` times);
    one lost every time, or one whose actor's code raised, is an invalid rollout saying why, never a zero.
    """

    def __init__(self, env_name: str, *, env_config: Mapping[str, Any], compute: ComputeSection, concurrency: int,
                 timeout_s: float) -> None:
        ray = connect_ray(compute.ray_address)
        self._ray = ray
        capacity = max(1, int(ray.cluster_resources().get("CPU", 1) // compute.num_cpus))
        self.size = compute.workers or max(1, min(concurrency, capacity))
        self._pool = RayActorPool(_TaskAppHost, size=self.size, num_cpus=compute.num_cpus,
                                  args=(env_name, dict(env_config), timeout_s))

    def nodes_used(self) -> set[str]:
        return self._pool.nodes_used()

    async def rollout(self, body: Mapping[str, Any], seed: int, cid: str) -> Rollout:
        await self._pool.fill_once(_FILL_TIMEOUT_S)
        started = time.monotonic()
        try:
            return await self._pool.call("rollout", dict(body), seed, cid, attempts=MAX_ATTEMPTS)
        except self._ray.exceptions.RayTaskError as exc:  # the actor survived; its rollout code did not
            error = f"the rollout failed on its Ray actor: {(str(exc).strip().splitlines() or [''])[0][:300]}"
        except RayWorkerLost as exc:
            error = str(exc)
        return Rollout(seed, cid, error=error, attempts=MAX_ATTEMPTS, seconds=time.monotonic() - started)

    def close(self) -> None:
        self._pool.close()
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
    """A Ray actor: the environment's task app on a loopback port of its node, and a client that rolls out on it
    (one rollout at a time; the actor's own event loop)."""

    def __init__(self, env_name: str, env_config: dict[str, Any], timeout_s: float) -> None:
        import ray

        from proofgym.serve import BackgroundServer, create_app

        self._node = ray.get_runtime_context().get_node_id()
        remove_orphaned_actor_dirs()
        self._dir = Path(tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-"))
        key = secrets.token_urlsafe(24)
        # The node's own store, which the app commits each session to; the driver keeps the run's copy.
        app = create_app(env_name, env_config=env_config, api_key=key, store=self._dir / "traces.db",
                         max_concurrency=1)
        self._server = BackgroundServer(app, name="proofgym-rl-task-app").start(timeout_s=60.0)
        self._runner = asyncio.Runner()
        self._client = RolloutClient(self._server.url, concurrency=1, timeout_s=timeout_s, api_key=key)

    def node_id(self) -> str:
        return self._node

    def rollout(self, body: dict[str, Any], seed: int, cid: str) -> Rollout:
        result = self._runner.run(self._client.rollout(body, seed, cid))
        if result.trace is not None:
            result.trace = dataclasses.replace(result.trace, metadata={**result.trace.metadata,
                                                                       "ray_node": self._node})
        return result

    def __del__(self) -> None:  # a graceful exit; a killed actor's folder is removed by the next actor's start
        server = getattr(self, "_server", None)
        if server is not None:
            server.close(timeout_s=2.0)
        shutil.rmtree(getattr(self, "_dir", ""), ignore_errors=True)
