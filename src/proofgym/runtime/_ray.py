"""The Ray executor: verifier calls on a Ray cluster, under the same contract as the process pool.

Ray is imported only here, and only when a :class:`RayExecutor` is built (``pip install 'proofgym[ray]'``).
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import os
import pickle
import socket
import threading
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, cast

from proofgym.core import Claim, ConfigError
from proofgym.runtime._config import RayConfig, RayPlacement, RayRuntimeEnv
from proofgym.runtime._executors import _portable
from proofgym.verifiers import TransientVerifierError, Verifier

RayMode = Literal["actors", "tasks"]
_INSTALL_HINT = "pip install 'proofgym[ray]'"
_connect_lock = threading.Lock()
_LOG = logging.getLogger("proofgym.runtime")


class RayWorkerLost(TransientVerifierError):
    """The Ray actor, worker or node serving a call was lost before it answered (node down, worker
    crashed or killed by Ray's memory monitor, object lost). Transient: the runtime retries the call,
    which Ray places on a live node, and an item that never gets an answer ends ``INVALID`` (outage),
    never scored."""


def import_ray() -> Any:
    """The ``ray`` module, or an ``ImportError`` that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"the ray executor needs Ray ({_INSTALL_HINT}): {exc}") from None
    return ray


def connect_ray(address: str | None = None, runtime_env: RayRuntimeEnv | None = None) -> Any:
    """Join the Ray cluster at ``address`` once per process (``ray.init``) and return the ``ray`` module.

    ``None`` joins ``$RAY_ADDRESS`` when set, else starts a local Ray for this process, without the dashboard (never
    a cluster ``ray start`` began on this machine, which Ray's own default would join).
    ``runtime_env`` is the job's: Ray ships and installs it on every node (:func:`ray_runtime_env`). An address
    ``host:port`` (or ``ray://host:port``) nothing answers on raises a ``ConnectionError`` naming it within
    :data:`PROBE_TIMEOUT_S`, instead of Ray's minute-long retries. An existing connection is reused whatever its
    address and runtime_env (a process joins one cluster): when it is to another address than ``address``, or
    ``runtime_env`` would be left out, one warning line says so.
    """
    ray = import_ray()
    # First, connected or not: what cannot be shipped is a config problem, named before anything is dialled.
    resolved = None if runtime_env is None else ray_runtime_env(runtime_env)
    with _connect_lock:
        if ray.is_initialized():
            _warn_if_reused_differently(ray, address, runtime_env)
            return ray
        options: dict[str, Any] = {"address": address, "logging_level": "warning", "log_to_driver": False}
        if resolved is not None:
            options["runtime_env"] = resolved
            logging.getLogger("ray._private.worker").addFilter(_without_default_excludes_notice)
        if address is not None and address.startswith("ray://"):
            _require_ray_client()
        if address is not None and address != "auto":
            _probe(address)
        if address is None:
            options["include_dashboard"] = False
            if not os.environ.get("RAY_ADDRESS"):
                # a Ray of this process's own: without "local", ray.init joins the last cluster `ray start` began on
                # this machine (its /tmp/ray/ray_current_cluster), stopped or not
                options["address"] = "local"
        try:
            ray.init(**options)
        except ConnectionError as exc:
            raise ConnectionError(f"cannot join the Ray cluster at {address or '$RAY_ADDRESS'}: "
                                  f"{_first_line(exc)}") from None
        _joined_with[_current_address(ray)] = runtime_env
    return ray


#: The runtime_env this module joined each cluster with (by GCS address), so that joining again with the same one
#: warns of nothing.
_joined_with: dict[str | None, RayRuntimeEnv | None] = {}


def _without_default_excludes_notice(record: logging.LogRecord) -> bool:
    """Drop Ray 2.60's notice, one line per folder on every upload of a working_dir that holds ``.git`` or ``.venv``,
    that it now leaves those out by default (docs/ray.md says so once)."""
    return not str(record.msg).startswith("Directory %r is now ignored by default")


#: How long :func:`connect_ray` waits for a TCP answer from a Ray address before calling it unreachable.
PROBE_TIMEOUT_S = 5.0


def _probe(address: str) -> None:
    """Raise ``ConnectionError`` naming ``address`` when nothing accepts a TCP connection on it."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = "no answer within {:g} s".format(PROBE_TIMEOUT_S) if isinstance(exc, TimeoutError) else \
            (exc.strerror or str(exc) or type(exc).__name__)
        raise ConnectionError(f"cannot reach the Ray cluster at {address}: {reason}") from None


def _require_ray_client() -> None:
    if importlib.util.find_spec("grpc") is None:  # Ray Client's transport, in ray[client] only
        raise ImportError("a ray:// address needs Ray Client: pip install 'proofgym[ray-client]' (ray[client])")


def _warn_if_reused_differently(ray: Any, address: str | None, runtime_env: RayRuntimeEnv | None) -> None:
    current = _current_address(ray)
    if address not in (None, "auto") and current is not None and not _same_address(address, current):
        _LOG.warning("warning: this process is already connected to the Ray cluster at %s; reusing it, not %s "
                     "(call ray.shutdown() first to join %s)", current, address, address)
    elif runtime_env is not None and runtime_env != _joined_with.get(current):
        _LOG.warning("warning: this process is already connected to Ray (%s); its connection's runtime_env "
                     "stays, the configured one is not applied (call ray.shutdown() first)", current or "?")


def _current_address(ray: Any) -> str | None:
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # a Ray Client connection, or one being torn down
        return None


def _same_address(configured: str, current: str) -> bool:
    """Whether ``configured`` (``host:port`` or ``ray://host:port``) names the cluster whose GCS is at ``current``
    (``ip:port``; Ray records a loopback host as the machine's address). A ``ray://`` port is Ray Client's, not
    the GCS's: only hosts are compared then."""
    host, _, port = configured.removeprefix("ray://").rpartition(":")
    current_host, _, current_port = current.rpartition(":")
    if not configured.startswith("ray://") and port != current_port:
        return False
    hosts = _addresses(host.strip("[]"))
    if hosts & {"127.0.0.1", "::1"}:
        hosts |= _addresses(socket.gethostname())
    return current_host.strip("[]") in hosts


def _addresses(host: str) -> set[str]:
    try:
        return {str(info[4][0]) for info in socket.getaddrinfo(host, None)} | {host}
    except OSError:
        return {host}


def ray_runtime_env(env: RayRuntimeEnv) -> dict[str, Any]:
    """``env`` as ``ray.init(runtime_env=...)`` takes it: the keys given, and each ``py_modules`` entry that names
    an importable package (not a path) replaced by that package's folder and, when it is an installed
    distribution's, its metadata folder (whose entry points register what the package provides)."""
    out: dict[str, Any] = env.model_dump(exclude_none=True)
    if env.working_dir is not None and "://" not in env.working_dir and not Path(env.working_dir).is_dir():
        raise ConfigError(f"runtime_env.working_dir: {env.working_dir!r} is not a folder")
    if env.py_modules is not None:
        modules: list[str] = []
        for entry in env.py_modules:
            modules.extend(_py_module(entry))
        out["py_modules"] = modules
    return out


def _py_module(entry: str) -> list[str]:
    if "://" in entry or Path(entry).exists():
        return [entry]
    if not entry.isidentifier():
        raise ConfigError(f"runtime_env.py_modules: {entry!r} is neither a file or folder nor a package name")
    spec = importlib.util.find_spec(entry)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"runtime_env.py_modules: {entry!r} is neither a file or folder nor an importable package")
    paths = [str(Path(next(iter(spec.submodule_search_locations))).resolve())]
    for name in dict.fromkeys(metadata.packages_distributions().get(entry, [])):
        folder = getattr(metadata.distribution(name), "_path", None)  # PathDistribution's metadata folder
        if isinstance(folder, Path) and folder.is_dir() and folder.suffix in (".dist-info", ".egg-info"):
            paths.append(str(folder))
    return paths


class RayActorPool:
    """Up to ``size`` Ray actors of one class, spread over the cluster's nodes, each serving one caller at a time.

    ``actor_class`` is a plain class with a ``node_id()`` method; each actor reserves what ``placement`` says (CPUs,
    GPUs, memory, custom resources; default: one CPU), is never restarted by Ray, and is started on demand in the
    background: :meth:`checkout` waits for one that is up (and knows its node), so an actor that cannot be placed
    holds no caller. A caller gives its actor back with :meth:`checkin`, or :meth:`replace` s it when it was lost or
    has to be killed (a call that cannot be stopped otherwise). One pool serves one event loop; :meth:`close`
    may come from any thread.
    """

    def __init__(self, actor_class: type, *, size: int, placement: RayPlacement | None = None,
                 args: tuple[Any, ...] = ()) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self._ray = import_ray()
        self.size = size
        options = (placement or RayPlacement()).actor_options()
        self._remote = self._ray.remote(max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD",
                                        **options)(actor_class)
        self._args = args
        self._lock = threading.Lock()  # guards _actors and _closed
        self._actors: set[PooledActor] = set()
        self._closed = False
        self._alive = 0  # started or starting, on the loop thread only
        self._ready: asyncio.Queue[PooledActor | BaseException] | None = None
        self._starting: set[asyncio.Future[str]] = set()
        self._filled: asyncio.Future[int] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def nodes_used(self) -> set[str]:
        """Ray node ids of the pool's actors that are up now."""
        with self._lock:
            return {actor.node_id for actor in self._actors if actor.node_id is not None}

    async def checkout(self) -> PooledActor:
        """An idle actor that is up, starting one when none is idle and the pool is not full."""
        if self._ready is None:
            self._ready = asyncio.Queue()
        while True:
            if self._closed:
                raise RuntimeError("the Ray actor pool is closed")
            if self._ready.empty() and self._alive < self.size:
                self._start()
            item = await self._ready.get()
            if isinstance(item, BaseException):
                raise item
            if not self._closed:
                return item

    async def fill(self, timeout_s: float) -> int:
        """Start the pool's missing actors and wait up to ``timeout_s`` for all to be up; returns how many are.

        For long calls (rollouts) that should spread over every node from the start, rather than go to
        whichever actor came up first."""
        if self._ready is None:
            self._ready = asyncio.Queue()
        while not self._closed and self._alive < self.size:
            self._start()
        if self._starting:
            await asyncio.wait(set(self._starting), timeout=timeout_s)
        with self._lock:
            return sum(actor.node_id is not None for actor in self._actors)

    async def fill_once(self, timeout_s: float) -> int:
        """:meth:`fill`, started by the first caller; every caller waits for that one fill (a caller cancelled
        while waiting leaves it running for the others)."""
        if self._filled is None:
            self._filled = asyncio.ensure_future(self.fill(timeout_s))
        return await asyncio.shield(self._filled)

    async def call(self, method: str, *args: Any, attempts: int = 3) -> Any:
        """``method(*args)`` on an idle actor of the pool, and its answer.

        An actor, worker or node lost under the call is replaced and the call made again on another actor, up
        to ``attempts`` times in all; then :class:`RayWorkerLost` names each loss. An exception raised by the
        actor's own code (``ray.exceptions.RayTaskError``) is raised as is, the actor kept. A cancelled call's
        actor is replaced (it may still be busy).
        """
        if attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {attempts}")
        lost: list[str] = []
        for _ in range(attempts):
            actor = await self.checkout()
            try:
                answer = await asyncio.wrap_future(getattr(actor.handle, method).remote(*args).future())
            except asyncio.CancelledError:
                self.replace(actor)
                raise
            except self._ray.exceptions.RayTaskError:
                self.checkin(actor)
                raise
            except self._ray.exceptions.RayError as exc:
                self.replace(actor)
                lost.append(f"{type(exc).__name__} on node {actor.node_id}")
                continue
            self.checkin(actor)
            return answer
        raise RayWorkerLost(f"lost its Ray actor {attempts} times: {'; '.join(lost)}")

    def checkin(self, actor: PooledActor) -> None:
        """Give back an actor that served its call."""
        self._ready.put_nowait(actor)  # type: ignore[union-attr]

    def replace(self, actor: PooledActor) -> None:
        """Kill ``actor`` and start its successor now, so that the next caller finds it warming up."""
        self._discard(actor)
        if not self._closed and self._alive < self.size:
            self._start()

    def close(self) -> None:
        """Kill every actor of the pool; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            actors, self._actors = self._actors, set()
        for actor in actors:
            actor.kill(self._ray)

    def _start(self) -> None:
        actor = PooledActor(self._remote.remote(*self._args))
        with self._lock:
            self._actors.add(actor)
        self._alive += 1
        # Start-up runs in the background (like the process pool's): a caller that stops waiting for it
        # leaves it to finish and join the pool.
        started = asyncio.ensure_future(asyncio.wrap_future(actor.handle.node_id.remote().future()))
        self._starting.add(started)
        started.add_done_callback(functools.partial(self._on_started, actor))

    def _on_started(self, actor: PooledActor, started: asyncio.Future[str]) -> None:
        self._starting.discard(started)
        error = None if started.cancelled() else started.exception()
        if started.cancelled() or error is not None or self._closed:
            self._discard(actor)
            if error is not None and self._ready is not None:
                lost = RayWorkerLost(f"Ray actor could not start: {type(error).__name__}: {_first_line(error)}")
                self._ready.put_nowait(lost)
            return
        actor.node_id = started.result()
        self._ready.put_nowait(actor)  # type: ignore[union-attr]

    def _discard(self, actor: PooledActor) -> None:
        with self._lock:
            known = actor in self._actors
            self._actors.discard(actor)
        if known:
            self._alive -= 1
        actor.kill(self._ray)


class PooledActor:
    """One actor of a :class:`RayActorPool`: its handle, its node once up, and what its user put in it."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.node_id: str | None = None
        self.tokens: set[int] = set()  # for the pool's user: e.g. which verifiers this actor holds

    def kill(self, ray: Any) -> None:
        try:
            ray.kill(self.handle, no_restart=True)
        except Exception:  # already dead, or Ray is shutting down
            pass


class RayExecutor:
    """Runs each verifier call on a Ray cluster, for CPU-bound verifiers that outgrow one machine.

    ``mode="actors"`` (the default) keeps up to ``max_workers`` long-lived actors (a
    :class:`RayActorPool`), each holding the verifiers it was sent (unpickled once per actor, so a
    compiled rulebook or a Verilog problem set's reference results are built once, not per call)
    and serving one call at a time. ``mode="tasks"`` runs one Ray task per call, the verifier
    unpickled from the object store each time. Either way each actor or task reserves ``placement``'s resources
    (default ``num_cpus`` CPUs), so the cluster's scheduler bounds concurrency cluster-wide, and placement spreads
    over the nodes. ``runtime_env`` (default ``placement.runtime_env``) is the job's when this builds the connection.

    The contract is :class:`~proofgym.runtime.ProcessExecutor`'s: a call the runtime cancels (its
    timeout) has its actor killed (``ray.kill``) or its task's worker killed (``ray.cancel(force=True)``),
    so a hung verifier never holds a CPU; what the verifier raises comes back as raised (the runtime
    classifies it); a lost actor, worker or node raises :class:`RayWorkerLost`, a transient failure the
    runtime retries. A killed or lost actor is replaced at once, in the background.

    ``max_workers`` defaults to how many actors of the placement the cluster holds when the executor is built.
    Calls waiting for a free actor (for instance while replacements of a lost node's actors cannot be
    placed) wait inside their timeout.
    """

    def __init__(self, address: str | None = None, *, num_cpus: float = 1.0, mode: RayMode = "actors",
                 max_workers: int | None = None, placement: RayPlacement | None = None,
                 runtime_env: RayRuntimeEnv | None = None) -> None:
        if mode not in ("actors", "tasks"):
            raise ValueError(f"mode must be 'actors' or 'tasks', got {mode!r}")
        if not num_cpus > 0:
            raise ValueError(f"num_cpus must be > 0, got {num_cpus!r}")
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        placement = placement or RayPlacement(num_cpus=num_cpus)
        self._ray = ray = connect_ray(address, runtime_env or placement.runtime_env)
        if max_workers is None:
            max_workers = placement.capacity(ray.cluster_resources())
        self.max_workers = max_workers
        self.mode: RayMode = mode
        self.num_cpus = placement.num_cpus
        self._pool = RayActorPool(_VerifierHost, size=max_workers, placement=placement)
        self._task = ray.remote(max_retries=0, scheduling_strategy="SPREAD",
                                **placement.actor_options())(_verify_task)
        self._payloads: dict[int, tuple[Verifier, Any]] = {}  # id(verifier) -> (verifier, object ref of its pickle)

    @classmethod
    def from_config(cls, config: RayConfig | None, max_workers: int | None = None) -> RayExecutor:
        """The executor ``runtime.ray`` describes (defaults: :class:`RayConfig`)."""
        config = config or RayConfig()
        try:
            return cls(config.address, mode=config.mode, max_workers=max_workers, placement=config)
        except ConfigError as exc:  # the runtime_env names what it cannot ship
            raise ConfigError(f"runtime.ray.{exc}") from None

    @property
    def max_concurrency(self) -> int:
        return self.max_workers

    def nodes_used(self) -> set[str]:
        """Ray node ids of the actors that are up now (empty in ``tasks`` mode)."""
        return self._pool.nodes_used()

    async def run(self, verifier: Verifier, claims: list[Claim]) -> list[Any]:
        if self._pool.closed:
            raise RuntimeError("RayExecutor is closed")
        token, payload = self._payload(verifier)
        if self.mode == "tasks":
            status, value = await self._run_task(payload, list(claims))
        else:
            status, value = await self._run_actor(token, payload, list(claims))
        if status != "ok":
            raise value
        return cast("list[Any]", value)  # a task or actor answers ("ok", one result per claim)

    def close(self) -> None:
        """Kill this executor's actors; the process stays connected to Ray (other users may share it)."""
        self._pool.close()
        self._payloads.clear()

    async def _run_task(self, payload: Any, claims: list[Claim]) -> tuple[str, Any]:
        ref = self._task.remote(payload, claims)
        try:
            return await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            self._ray.cancel(ref, force=True)  # kills the worker process running it
            raise
        except self._ray.exceptions.RayTaskError as exc:
            raise RuntimeError(f"verifier task failed outside the verifier: {_first_line(exc)}") from None
        except self._ray.exceptions.RayError as exc:
            raise RayWorkerLost(f"Ray task lost: {type(exc).__name__}: {_first_line(exc)}") from None

    async def _run_actor(self, token: int, payload: Any, claims: list[Claim]) -> tuple[str, Any]:
        actor = await self._pool.checkout()
        try:
            ref = actor.handle.verify.remote(token, None if token in actor.tokens else payload, claims)
            status, value = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            self._pool.replace(actor)  # it may still be busy with this call: it never serves again
            raise
        except self._ray.exceptions.RayTaskError as exc:  # e.g. an answer that cannot be sent back
            self._pool.checkin(actor)  # the actor itself is fine
            raise RuntimeError(f"verifier actor failed outside the verifier: {_first_line(exc)}") from None
        except self._ray.exceptions.RayError as exc:
            self._pool.replace(actor)
            raise RayWorkerLost(f"Ray actor lost on node {actor.node_id}: {type(exc).__name__}: "
                                f"{_first_line(exc)}") from None
        if status == "ok":
            actor.tokens.add(token)
        self._pool.checkin(actor)
        return status, value

    def _payload(self, verifier: Verifier) -> tuple[int, Any]:
        # Keyed by id() and holding the verifier itself, so the id cannot be reused while cached.
        entry = self._payloads.get(id(verifier))
        if entry is None:
            entry = (verifier, self._ray.put(pickle.dumps(verifier, protocol=pickle.HIGHEST_PROTOCOL)))
            self._payloads[id(verifier)] = entry
        return id(verifier), entry[1]


class _VerifierHost:
    """A Ray actor holding verifiers, one call at a time on its own event loop (kept for its life)."""

    def __init__(self) -> None:
        self._verifiers: dict[int, Any] = {}
        self._runner = asyncio.Runner()

    def node_id(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()

    def verify(self, token: int, payload: bytes | None, claims: list[Claim]) -> tuple[str, Any]:
        try:
            if payload is not None:
                self._verifiers[token] = pickle.loads(payload)
            return "ok", self._runner.run(self._verifiers[token].verify_many(claims))
        except BaseException as exc:  # everything the verifier does goes back to the driver as an answer
            return "error", _portable(exc)


def _verify_task(payload: bytes, claims: list[Claim]) -> tuple[str, Any]:
    """A Ray task: one verifier call, the verifier unpickled for it."""
    try:
        return "ok", asyncio.run(pickle.loads(payload).verify_many(claims))
    except BaseException as exc:
        return "error", _portable(exc)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]
