"""The runtime's settings, as embedded under ``runtime:`` in a run config."""

from __future__ import annotations

from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# "auto", "host:port" or "ray://host:port" (Ray Client); None starts (or joins $RAY_ADDRESS) as ``ray.init()`` does.
_RAY_ADDRESS = r"^(auto|(ray://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5})$"


class RayRuntimeEnv(BaseModel):
    """``runtime_env``: what Ray sets up on every node for the actors (``ray.init(runtime_env=...)``), so a cluster
    without proofgym (or without the run's files) installed works. The keys are Ray's own, read strictly:

    - ``working_dir``: a local folder (relative to the current directory) that Ray zips, uploads and unpacks on each
      node as the actors' current folder, first on their ``sys.path``; or a remote ``.zip`` URI.
    - ``py_modules``: local package folders, ``.whl`` files or remote ``.zip`` URIs, each importable on every node;
      an entry that is no path but the name of an importable package (``"proofgym"``) ships that package's folder
      and, when it was installed, its distribution metadata (the entry points that register environments and
      verifiers).
    - ``pip`` / ``uv``: requirements installed on each node into a virtual environment of Ray's (a list of
      requirement strings, or the path of a ``requirements.txt``); the nodes need a package index.
    - ``env_vars``: environment variables of the actors.
    - ``excludes``: gitignore-style patterns left out of ``working_dir`` and ``py_modules`` uploads (Ray itself
      leaves ``.git``, ``.venv``, ``venv`` and ``__pycache__`` out of a ``working_dir`` and honours the
      ``.gitignore`` files it finds).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    working_dir: str | None = Field(None, min_length=1, description="folder (or .zip URI) shipped as the actors' "
                                                                    "current folder")
    py_modules: list[str] | None = Field(None, description="package folders, .whl files, .zip URIs or names of "
                                                           "importable packages shipped to every node")
    pip: list[str] | str | None = Field(None, description="requirements (or a requirements.txt path) installed "
                                                          "on each node with pip")
    uv: list[str] | str | None = Field(None, description="requirements (or a requirements.txt path) installed on "
                                                         "each node with uv")
    env_vars: dict[str, str] | None = Field(None, description="environment variables of the actors")
    excludes: list[str] | None = Field(None, description="gitignore-style patterns not uploaded")

    def __hash__(self) -> int:  # frozen, and hashable like the other runtime settings despite its lists
        return hash(self.model_dump_json())

    @model_validator(mode="after")
    def _one_installer(self) -> RayRuntimeEnv:
        if self.pip is not None and self.uv is not None:
            raise ValueError("pip and uv cannot both be given (Ray installs with one of them)")
        return self


class RayPlacement(BaseModel):
    """What each Ray actor reserves on its node, and the ``runtime_env`` set up for it. Ray schedules an actor only
    on a node with all of it free, so these also bound how many actors run at once."""

    num_cpus: float = Field(1.0, gt=0, le=1024, allow_inf_nan=False, description="CPUs each actor reserves")
    num_gpus: float = Field(0.0, ge=0, le=64, allow_inf_nan=False, description="GPUs each actor reserves")
    memory: int | None = Field(None, gt=0, description="memory each actor reserves, in bytes (Ray's "
                                                       "scheduling only: not a limit on what it uses)")
    resources: dict[str, float] = Field(default_factory=dict, description="custom resources each actor reserves, "
                                                                          "as the nodes declare them "
                                                                          "(ray start --resources)")
    runtime_env: RayRuntimeEnv | None = Field(None, description="what Ray ships to and installs on every node")

    @field_validator("resources")
    @classmethod
    def _custom_resources(cls, value: dict[str, float]) -> dict[str, float]:
        for name, amount in value.items():
            if name in ("CPU", "GPU", "memory", "object_store_memory"):
                raise ValueError(f"{name!r} is not a custom resource: use num_cpus, num_gpus or memory")
            if not name or not amount > 0 or amount != amount or amount == float("inf"):
                raise ValueError(f"resource {name!r}: expected a name and an amount > 0, got {amount!r}")
        return value

    def actor_options(self) -> dict[str, Any]:
        """The placement as ``ray.remote`` options (``num_cpus``, ``num_gpus``, ``memory``, ``resources``)."""
        options: dict[str, Any] = {"num_cpus": self.num_cpus}
        if self.num_gpus:
            options["num_gpus"] = self.num_gpus
        if self.memory is not None:
            options["memory"] = self.memory
        if self.resources:
            options["resources"] = dict(self.resources)
        return options

    def capacity(self, cluster: Mapping[str, float]) -> int:
        """How many actors of this placement the cluster's resources ``cluster`` (``ray.cluster_resources()``) hold
        at once, at least 1."""
        wanted = {"CPU": self.num_cpus, "GPU": self.num_gpus, "memory": float(self.memory or 0), **self.resources}
        fits = [int(cluster.get(name, 0.0) // amount) for name, amount in wanted.items() if amount > 0]
        return max(1, min(fits, default=1))


class RayConfig(RayPlacement):
    """``runtime.ray``: where and how the ``ray`` executor runs verifier calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str | None = Field(None, pattern=_RAY_ADDRESS,
                                description="cluster to join: 'auto', 'host:port' or 'ray://host:port' (Ray "
                                            "Client: pip install 'proofgym[ray-client]'); null: $RAY_ADDRESS, else "
                                            "a local Ray started for this process")
    mode: Literal["actors", "tasks"] = Field(
        "actors", description="actors: long-lived workers that keep the verifier (its compiled state) between "
                              "calls; tasks: one Ray task per call, the verifier unpickled each time")

    def __hash__(self) -> int:  # frozen, and hashable as a RuntimeConfig's part despite its resources mapping
        return hash(self.model_dump_json())


class RuntimeConfig(BaseModel):
    """How a :class:`~proofgym.runtime.VerificationRuntime` schedules its verifier.

    Frozen, so one instance can be shared as a default (a run config embeds it under ``runtime:``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_concurrency: int = Field(16, ge=1, description="verifier calls in flight at most")
    timeout_s: float = Field(30.0, gt=0, description="wall-clock limit on one call's execution (queueing excluded)")
    batch_size: int = Field(32, ge=1, description="claims per verifier call at most")
    retries: int = Field(2, ge=0, le=100, description="extra attempts after a transient failure")
    backoff_base_s: float = Field(0.05, ge=0, description="delay before the first retry (doubles per retry)")
    backoff_max_s: float = Field(2.0, ge=0, description="cap on one retry delay")
    breaker_failure_threshold: int = Field(5, ge=1, description="consecutive failed calls that open the breaker")
    breaker_reset_after_s: float = Field(30.0, gt=0, description="how long the breaker stays open before a trial")
    cache_size: int = Field(100_000, ge=0, description="in-memory cache entries; 0 disables the memory cache")
    cache_max_mb: float | None = Field(
        256.0, gt=0, description="in-memory cache memory in MiB, estimated (a rulebook verdict takes about 9 KB); "
                                 "fewer entries are kept to stay within it; null: entries only")
    cache_path: str | None = Field(None, min_length=1, description="SQLite file of the persistent cache")
    executor: Literal["in_process", "process", "ray"] = "in_process"
    workers: int | None = Field(None, ge=1, description="worker processes of the process executor, or Ray actors "
                                                        "/ tasks in flight of the ray executor (default: CPUs)")
    ray: RayConfig | None = Field(None, description="the ray executor's cluster and placement (default: RayConfig())")

    @model_validator(mode="after")
    def _consistent(self) -> RuntimeConfig:
        if self.backoff_max_s < self.backoff_base_s:
            raise ValueError("backoff_max_s must be >= backoff_base_s")
        if self.workers is not None and self.executor not in ("process", "ray"):
            raise ValueError("workers is only used with executor='process' or executor='ray'")
        if self.ray is not None and self.executor != "ray":
            raise ValueError("ray is only used with executor='ray'")
        return self
