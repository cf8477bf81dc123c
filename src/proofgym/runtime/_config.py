"""The runtime's settings, as embedded under ``runtime:`` in a run config."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


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
    executor: Literal["in_process", "process"] = "in_process"
    workers: int | None = Field(None, ge=1, description="worker processes of the process executor (default: CPUs)")

    @model_validator(mode="after")
    def _consistent(self) -> RuntimeConfig:
        if self.backoff_max_s < self.backoff_base_s:
            raise ValueError("backoff_max_s must be >= backoff_base_s")
        if self.workers is not None and self.executor != "process":
            raise ValueError("workers is only used with executor='process'")
        return self
