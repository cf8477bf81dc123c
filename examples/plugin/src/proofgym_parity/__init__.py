"""A proofgym plugin in one file: the ``parity`` verifier kind and the ``parity`` environment.

The task: say whether a number is even or odd, restating it as the fact ``n``::

    <decision>{"facts": {"n": 7}, "classification": "odd"}</decision>

The verifier certifies the claimed parity of the asserted ``n`` and refutes a wrong one (or a missing ``n``). The
environment asks about a number per seed and scores the answer through proofgym's own reward path (parser ->
verification runtime -> this verifier -> shaper), so it gets the runtime's cache, breaker and metrics for free.
Nothing in proofgym names this package: ``pyproject.toml``'s entry points register both.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from proofgym.config import parse_run_config
from proofgym.core import Claim, Outcome, RejectedFact, Verdict
from proofgym.envs import Observation, SingleAnswerEnv, ToolResult, answer_tool
from proofgym.verifiers import VerifierExample, VerifierKind

DECISIONS = ("even", "odd")


# --- the verifier kind -------------------------------------------------------------------------------------------
class ParityOptions(BaseModel):
    """The ``verifier:`` keys of a run config with ``kind: parity``."""

    model_config = ConfigDict(extra="forbid")

    max_abs: int = Field(10**9, ge=1, description="numbers past this magnitude are refused as facts")


class ParityVerifier:
    name, version = "parity", "1"
    uses_decision = True

    def __init__(self, options: ParityOptions) -> None:
        self.options = options

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        return [self.verify(claim) for claim in claims]

    def verify(self, claim: Claim) -> Verdict:
        n = claim.fact_value("n") if "n" in claim.facts else None
        if not isinstance(n, int) or isinstance(n, bool) or abs(n) > self.options.max_abs:
            rejected = RejectedFact("n", n, ("must be an integer of magnitude at most "
                                             f"{self.options.max_abs}",))
            return Verdict(Outcome.REFUTED, decision=claim.decision, rejected_facts=(rejected,),
                           reason="no usable fact 'n'")
        parity = DECISIONS[n % 2]
        outcome = Outcome.CERTIFIED if claim.decision == parity else Outcome.REFUTED
        return Verdict(outcome, decision=parity, evidence={"n": n, "parity": parity},
                       reason=f"{n} is {parity}")


def parity_examples() -> list[VerifierExample]:
    """Known cases, which proofgym's test suite checks for every registered kind: right ones certify, wrong ones
    do not."""
    return [VerifierExample({}, Claim("odd", {"n": 7}), Claim("even", {"n": 7})),
            VerifierExample({"max_abs": 10}, Claim("even", {"n": 10}), Claim("even", {"n": 12}))]


PARITY_VERIFIER = VerifierKind(ParityOptions, ParityVerifier, parity_examples)


# --- the environment ---------------------------------------------------------------------------------------------
RUN_CONFIG = {
    "name": "parity",
    "parser": {"kind": "json_block", "decisions": list(DECISIONS), "require_facts": True},
    "verifier": {"kind": "parity"},
}
class ParityEnvConfig(BaseModel):
    """The environment's config (``make("parity", **config)``, a task app's ``env.config``)."""

    model_config = ConfigDict(extra="forbid")

    max_value: int = Field(1000, ge=1, le=10**9, description="the numbers asked about are 0..max_value")


class ParityEnv(SingleAnswerEnv):
    """Single-turn: is the seed's number even or odd? (The answer as a tool call or plain text, and the floor for
    an episode without one, come from :class:`~proofgym.envs.SingleAnswerEnv`.)"""

    def __init__(self, **config: Any) -> None:
        self.config = ParityEnvConfig.model_validate(config, strict=True)
        super().__init__(parse_run_config(RUN_CONFIG).reward_function(),
                         tool=answer_tool("Give your answer: one <decision> block."))
        self.max_value = self.config.max_value
        self.n = 0

    def number(self, seed: int) -> int:
        return random.Random(seed).randint(0, self.max_value)

    def oracle_actions(self, seed: int) -> list[Any]:
        n = self.number(seed)
        answer = f'<decision>{{"facts": {{"n": {n}}}, "classification": "{DECISIONS[n % 2]}"}}</decision>'
        return [{"tool": "answer", "args": {"completion": answer}}]

    def _pose(self, seed: int) -> Observation:
        self.n = self.number(seed)
        text = (f"Is {self.n} even or odd? Answer with "
                '<decision>{"facts": {"n": N}, "classification": "even" or "odd"}</decision>.')
        return Observation(text, {"n": self.n})

    def _score(self, completion: str) -> ToolResult:
        prompt = f"Is {self.n} even or odd?"
        gold = DECISIONS[self.n % 2]
        item = self.reward_function.score([prompt], [completion], [{"gold": gold, "source_facts": {"n": self.n}}])[0]
        # The top outcome: the certified decision is the gold one, on the asked number itself (grounded).
        passed = all(item.components.get(name) == 1.0 for name in ("certified", "correct", "grounded"))
        info = {"tool": "answer", "outcome": item.outcome, "passed": passed,
                "correct": item.components.get("correct") == 1.0, "abstained": item.reward is None,
                "verdict": None if item.verdict is None else item.verdict.to_dict(), "reason": item.reason}
        rewards = {} if item.reward is None else {"answer": item.reward}
        return ToolResult(Observation(f"Answer scored: {item.outcome}.", {"outcome": item.outcome}), rewards,
                          done=True, info=info)

    def _close(self) -> None:
        self.reward_function.close()
