"""Shared helpers for the rule kernel tests: the fixture rulebooks, inline YAML rulebooks, and a gate + engine
run whose proof the independent checker must accept."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Mapping

import pytest
import yaml

from proofgym.rules import Rulebook, RulebookError, check_proof, compile_rulebook, gate, parse_rulebook

FIXTURES = Path(__file__).parent / "fixtures"
GRANT = FIXTURES / "grant.yaml"
LOAN = FIXTURES / "loan.yaml"

GRANT_OK = {"age": 34, "annual_income": 21000, "resident": True, "has_active_grant": False}
LOAN_OK = {"annual_income": 60000, "annual_debt": 6000, "loan_amount": 20000, "credit_band": "good",
           "employment_status": "employed"}


def data_of(path: Path) -> dict[str, Any]:
    """A fixture rulebook as plain data, to mutate."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def book(text: str) -> Rulebook:
    """A rulebook from inline YAML."""
    return parse_rulebook(yaml.safe_load(textwrap.dedent(text)), source="inline.yaml")


def problems(data: Mapping[str, Any], source: str = "rb.yaml") -> list[str]:
    """The problems a rulebook given as data is rejected with (it must be rejected)."""
    with pytest.raises(RulebookError) as info:
        parse_rulebook(data, source=source)
    assert str(info.value) == "\n".join(info.value.problems)
    return list(info.value.problems)


def prove(rulebook: Rulebook, facts: Mapping[str, Any]) -> dict[str, Any]:
    """Gate and evaluate facts the gate must accept; the independent checker must accept the proof."""
    accepted, rejected, _ = gate(rulebook, facts)
    assert rejected == []
    proof = compile_rulebook(rulebook).evaluate(accepted)
    assert check_proof(rulebook, proof) == []
    return proof
