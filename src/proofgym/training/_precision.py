"""The numeric precision of a training run's matrix products: fp32, bf16 autocast, or bf16 where the CPU has it.

bf16 autocast keeps the weights, the optimiser state and the losses in fp32 and runs the matrix
products in bf16. On a CPU with native bf16 instructions (AVX512-BF16 or AMX) that makes the tiny
model's training updates about 20 % faster; on one without, oneDNN emulates bf16 and it is slower,
so ``"auto"`` picks bf16 only where the CPU reports those instructions (and on a CUDA device that
supports bf16).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

Precision = Literal["auto", "fp32", "bf16"]
PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16")


def check_precision(value: Any, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` unless ``value`` is one of :data:`PRECISIONS`."""
    if value not in PRECISIONS:
        raise ValueError(f"{where} must be one of {', '.join(PRECISIONS)}, got {value!r}")


def resolve_precision(precision: Precision, device_type: str = "cpu") -> Literal["fp32", "bf16"]:
    """``"fp32"`` or ``"bf16"``: ``"auto"`` is bf16 where ``device_type`` computes bf16 natively."""
    check_precision(precision, "precision")
    if precision != "auto":
        return precision
    if device_type == "cuda":
        import torch

        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    return "bf16" if device_type == "cpu" and cpu_has_native_bf16() else "fp32"


@functools.lru_cache(maxsize=1)
def cpu_has_native_bf16() -> bool:
    """Whether this CPU reports bf16 instructions (``avx512_bf16`` or ``amx_bf16`` in /proc/cpuinfo)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


@contextlib.contextmanager
def autocast(precision: Precision, model: Any) -> Iterator[None]:
    """bf16 autocast on ``model``'s device inside the block when ``precision`` resolves to bf16."""
    import torch

    device_type = next(model.parameters()).device.type
    enabled = resolve_precision(precision, device_type) == "bf16"
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=enabled):
        yield
