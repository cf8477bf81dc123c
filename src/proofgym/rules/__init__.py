"""The embedded rule kernel: rulebooks (YAML) loaded into a canonical AST, a fact gate, a compiled engine that
records a proof, an independent proof checker, and the report. See docs/rulebooks.md."""

from proofgym.rules._ast import Rulebook
from proofgym.rules._checker import check_proof
from proofgym.rules._coverage import (
    CoverageCounter,
    CoverageReport,
    DecisionConflict,
    GateRejection,
    RuleCoverage,
    rulebook_coverage,
)
from proofgym.rules._engine import CompiledRulebook, compile_rulebook
from proofgym.rules._gate import gate
from proofgym.rules._kernel import RuleKernel
from proofgym.rules._loader import RulebookError, load_rulebook, parse_rulebook
from proofgym.rules._schema import rulebook_json_schema

__all__ = [
    "CompiledRulebook",
    "CoverageCounter",
    "CoverageReport",
    "DecisionConflict",
    "GateRejection",
    "RuleCoverage",
    "RuleKernel",
    "Rulebook",
    "RulebookError",
    "check_proof",
    "compile_rulebook",
    "gate",
    "load_rulebook",
    "parse_rulebook",
    "rulebook_coverage",
    "rulebook_json_schema",
]
