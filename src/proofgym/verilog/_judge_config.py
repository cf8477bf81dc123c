"""The judge's limits and options (:class:`JudgeConfig`) and the version of its rules (``JUDGE_VERSION``).

Both identify a judging setup: every field that can change a verdict enters the verifier's version and the
key under which a problem's reference sample count is remembered (:mod:`._reference_counts`).
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field, model_validator

from proofgym.verilog._reference_cache import ReferenceCache, default_reference_cache_dir
from proofgym.verilog._sandbox import Sandbox, SandboxLimits
from proofgym.verilog._toolchain import Toolchain, detect_toolchain

JUDGE_VERSION = "2"
"""Bump when the same design could be judged differently (new checks, new outcome rules)."""


class JudgeConfig(BaseModel):
    """Limits and options of the judge; every field that can change a verdict enters the verifier's version.

    ``timeout_s`` bounds one sandbox launch (wall clock); ``cpu_s``, ``memory_mib`` (address space),
    ``file_size_mib`` and ``open_files`` are rlimits of every process in it; ``output_kib`` caps
    stdout+stderr (the job is killed beyond it). ``partial_credit`` adds ``components["graded"] =
    1 - N/M`` to verdicts of complete runs (1.0 on a pass); the default reward shaper weighs graded
    credit below every pass tier, so a failing design never outscores a passing one.
    ``allow_unsandboxed`` lets the judge run designs *without* bubblewrap when it cannot start
    (logged loudly); ``bwrap=None`` never uses it (requires ``allow_unsandboxed``).
    ``reference_cache_dir`` keeps reference sample counts across processes (``"default"``:
    ``$XDG_CACHE_HOME/proofgym/verilog``, else ``~/.cache/proofgym/verilog``; ``None``: in memory only).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(30.0, gt=0, le=3600, description="wall-clock limit of one sandbox launch")
    cpu_s: int = Field(20, ge=1, le=3600, description="CPU seconds per process")
    memory_mib: int = Field(2048, ge=64, description="address space per process")
    file_size_mib: int = Field(16, ge=1, description="largest file a process may write")
    open_files: int = Field(64, ge=16, description="open files per process")
    output_kib: int = Field(64, ge=4, description="stdout+stderr kept per launch; more kills the job")
    max_design_chars: int = Field(100_000, ge=1, description="longest design accepted")
    max_log_chars: int = Field(4000, ge=200, description="longest log excerpt kept in a verdict's evidence")
    partial_credit: bool = Field(False, description="add components['graded'] = 1 - mismatches/samples")
    allow_unsandboxed: bool = Field(False, description="run without bubblewrap when it cannot start (unsafe)")
    bwrap: str | None = Field("bwrap", description="bubblewrap program; None: no sandbox (unsafe)")
    iverilog: str = "iverilog"
    vvp: str = "vvp"
    reference_cache_dir: str | None = Field(
        "default", min_length=1,
        description="where reference sample counts are kept across processes ('default': "
                    "$XDG_CACHE_HOME/proofgym/verilog or ~/.cache/proofgym/verilog; null: in memory only)")

    @model_validator(mode="after")
    def _explicit_opt_out(self) -> JudgeConfig:
        if self.bwrap is None and not self.allow_unsandboxed:
            raise ValueError("bwrap=None runs model-written code without a sandbox; set allow_unsandboxed=True too")
        return self

    def sandbox(self) -> Sandbox:
        """The sandbox these limits describe."""
        limits = SandboxLimits(
            wall_s=self.timeout_s, cpu_s=self.cpu_s, memory_bytes=self.memory_mib << 20,
            file_size_bytes=self.file_size_mib << 20, open_files=self.open_files, output_bytes=self.output_kib << 10,
        )
        return Sandbox(bwrap=self.bwrap, limits=limits, allow_unsandboxed=self.allow_unsandboxed)

    def toolchain(self) -> Toolchain:
        return detect_toolchain(self.iverilog, self.vvp, self.bwrap)

    def fingerprint(self) -> str:
        """A short hash of the fields that can change a verdict (not the sandbox choice, tool paths or cache)."""
        fields = self.model_dump(exclude={"allow_unsandboxed", "bwrap", "iverilog", "vvp", "reference_cache_dir"})
        return hashlib.sha256(repr(sorted(fields.items())).encode()).hexdigest()[:12]

    def reference_cache(self) -> ReferenceCache | None:
        """Where reference sample counts persist, or ``None`` (``reference_cache_dir`` is ``None``)."""
        if self.reference_cache_dir is None:
            return None
        return ReferenceCache(default_reference_cache_dir() if self.reference_cache_dir == "default"
                              else self.reference_cache_dir)
