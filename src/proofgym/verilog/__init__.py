"""Verilog: judging model-written hardware designs against testbenches, safely.

A :class:`Problem` is a spec, a reference design and a testbench (the VerilogEval layout). :func:`judge`
compiles and simulates a design in a bubblewrap sandbox, hardened against the known reward hacks, and
returns a :class:`~proofgym.core.Verdict`; :class:`VerilogVerifier` wraps it for the verification
runtime (verifier kind ``verilog``), and :class:`VerilogParser` with :func:`build_verilog_prompt` make
it a single-turn reward. Needs Icarus Verilog and bubblewrap: ``apt-get install -y iverilog bubblewrap``.
"""

from proofgym.verilog._difficulty import DIFFICULTIES, problem_difficulty, problem_splits
from proofgym.verilog._extract import VERILOG_FORMAT_ERROR_KINDS, VerilogParser, build_verilog_prompt
from proofgym.verilog._judge import REFUTATION_REASONS, ReferenceRunError, judge, reference_samples
from proofgym.verilog._judge_config import JUDGE_VERSION, JudgeConfig
from proofgym.verilog._lint import ALLOWED_SYSTEM_FUNCTIONS, forbidden_constructs
from proofgym.verilog._problem import Problem
from proofgym.verilog._problem_loader import builtin_problems, get_problem, interface, load_problem, load_verilogeval
from proofgym.verilog._sandbox import Sandbox, SandboxLimits, SandboxResult, SandboxUnavailable
from proofgym.verilog._toolchain import VERILOG_INSTALL_HINT, Toolchain, ToolchainError, detect_toolchain
from proofgym.verilog._verifier import (
    VerilogVerifier,
    VerilogVerifierOptions,
    build_verilog_verifier,
    canonical_design,
    design_claim,
    recommended_runtime_config,
)
from proofgym.verilog._env import VerilogEnv, VerilogEnvConfig, VerilogRewards

__all__ = [
    "ALLOWED_SYSTEM_FUNCTIONS",
    "DIFFICULTIES",
    "VERILOG_INSTALL_HINT",
    "JUDGE_VERSION",
    "REFUTATION_REASONS",
    "VERILOG_FORMAT_ERROR_KINDS",
    "JudgeConfig",
    "Problem",
    "ReferenceRunError",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "Toolchain",
    "ToolchainError",
    "VerilogParser",
    "VerilogVerifier",
    "VerilogVerifierOptions",
    "build_verilog_prompt",
    "build_verilog_verifier",
    "builtin_problems",
    "canonical_design",
    "design_claim",
    "detect_toolchain",
    "forbidden_constructs",
    "get_problem",
    "interface",
    "judge",
    "load_problem",
    "load_verilogeval",
    "problem_difficulty",
    "problem_splits",
    "recommended_runtime_config",
    "reference_samples",
    "VerilogEnv", "VerilogEnvConfig", "VerilogRewards",
]
