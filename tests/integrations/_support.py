"""Shared helpers for the trainer-adapter tests: rows, gold completions and scripted reward paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from proofgym.core import Claim, ErrorKind, Verdict
from proofgym.domains import build_dataset, get_domain, gold_completion
from proofgym.parsers import ParseResult
from proofgym.rewards import ErrorBudget, RewardFunction
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified, invalid_verdict, refuted

DOMAIN = "grant_eligibility"


def rows_and_gold(n: int, *, seed: int = 0, chat: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """``n`` dataset rows of the grant domain and the gold completion of each."""
    domain = get_domain(DOMAIN)
    rows = build_dataset(domain, seed=seed, n=n, chat=chat)
    return rows, [gold_completion(domain, record) for record in domain.generate(seed, n)]


def flip_decision(completion: str) -> str:
    """The completion with its decision swapped (permit <-> deny): certified facts, wrong answer."""
    if '"permit"' in completion:
        return completion.replace('"permit"', '"deny"')
    return completion.replace('"deny"', '"permit"')


def outage(claim: Claim) -> Verdict:
    """A verifier function that can never reach its backend."""
    return invalid_verdict(ErrorKind.OUTAGE, "backend unavailable")


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def outage_config(path: Path) -> Path:
    """A run config whose verifier always fails (every verification invalid)."""
    return write_config(path, {
        "name": "outage",
        "parser": {"kind": "json_block", "decisions": ["permit", "deny"], "require_facts": True},
        "verifier": {"kind": "python", "function": "integrations._support:outage"},
        "runtime": {"retries": 0},
        "error_budget": {"max_invalid_share": 1.0},
    })


class LengthParser:
    """Reads any non-empty text as a claim whose decision is the text's length class; empty text is a
    format error. Lets a randomly initialised model produce claims with varied outcomes."""

    def parse(self, completion: Any, prompt: Any = None) -> ParseResult:
        from proofgym.parsers import FormatError, response_text

        text = response_text(completion, prompt)
        if not text.strip():
            return ParseResult(error=FormatError("empty", "the response is empty"))
        return ParseResult(claim=Claim(decision="long" if len(text) % 3 else "short", payload={"text": text}))


def scripted_reward_function(*, invalid_every: int = 4) -> tuple[RewardFunction, FakeVerifier]:
    """Long answers certified, short ones refuted, every ``invalid_every``-th distinct text invalid."""

    def decide(claim: Claim) -> Verdict:
        return certified(claim.decision) if claim.decision == "long" else refuted("too short")

    def fault(claim: Claim) -> Fault | None:
        return Fault.INVALID if sum(map(ord, claim.payload["text"])) % invalid_every == 0 else None

    verifier = FakeVerifier(decide, fault=fault)
    runtime = VerificationRuntime(verifier, RuntimeConfig(retries=0, breaker_failure_threshold=1000))
    return RewardFunction(LengthParser(), runtime, error_budget=ErrorBudget(max_invalid_share=1.0)), verifier
