"""The runtime's settings, as embedded under ``runtime:`` in a run config."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# "auto", "host:port" or "ray://host:port" (Ray Client); None starts (or joins $RAY_ADDRESS) as ``ray.init()`` does.
_RAY_ADDRESS = r"^(auto|(ray://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5})$"


class RayConfig(BaseModel):
    """``runtime.ray``: where and how the ``ray`` executor runs verifier calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str | None = Field(None, pattern=_RAY_ADDRESS,
                                description="cluster to join: 'auto', 'host:port' or 'ray://host:port'; "
                                            "null: $RAY_ADDRESS, else a local Ray started for this process")
    num_cpus: float = Field(1.0, gt=0, le=1024, allow_inf_nan=False,
                            description="CPUs Ray reserves for each verifier actor or task")
    mode: Literal["actors", "tasks"] = Field(
        "actors", description="actors: long-lived workers that keep the verifier (its compiled state) between "
                              "calls; tasks: one Ray task per call, the verifier unpickled each time")


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
