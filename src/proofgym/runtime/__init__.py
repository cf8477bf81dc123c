"""The verification runtime: how every verifier is run (cached, de-duplicated, batched, bounded,
timed out, retried, isolated from poisoned claims, guarded by a circuit breaker)."""

from proofgym.runtime._breaker import BreakerState, CircuitBreaker
from proofgym.runtime._cache import LRUVerdictCache, SQLiteVerdictCache, VerdictCache
from proofgym.runtime._config import RayConfig, RayPlacement, RayRuntimeEnv, RuntimeConfig
from proofgym.runtime._executors import Executor, InProcessExecutor, ProcessExecutor, WorkerDied
from proofgym.runtime._metrics import RuntimeMetrics
from proofgym.runtime._ray import RayActorPool, RayExecutor, RayWorkerLost, connect_ray, ray_runtime_env
from proofgym.runtime._runtime import VerificationRuntime

__all__ = [
    "BreakerState",
    "CircuitBreaker",
    "Executor",
    "InProcessExecutor",
    "LRUVerdictCache",
    "ProcessExecutor",
    "RayActorPool",
    "RayConfig",
    "RayExecutor",
    "RayPlacement",
    "RayRuntimeEnv",
    "RayWorkerLost",
    "RuntimeConfig",
    "RuntimeMetrics",
    "SQLiteVerdictCache",
    "VerdictCache",
    "VerificationRuntime",
    "WorkerDied",
    "connect_ray",
    "ray_runtime_env",
]
