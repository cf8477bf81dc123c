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
from proofgym.envs import AnswerTask, Observation, SingleAnswerEnv, answer_tool
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
    """Single-turn: is the seed's number even or odd? (The answer as a tool call or plain text, its scoring and
    the floor for an episode without one come from :class:`~proofgym.envs.SingleAnswerEnv`.)"""

    def __init__(self, **config: Any) -> None:
        self.config = ParityEnvConfig.model_validate(config, strict=True)
        super().__init__(parse_run_config(RUN_CONFIG).reward_function(),
                         tool=answer_tool("Give your answer: one <decision> block."))

    def number(self, seed: int) -> int:
        return random.Random(seed).randint(0, self.config.max_value)

    def oracle_actions(self, seed: int) -> list[Any]:
        n = self.number(seed)
        answer = f'<decision>{{"facts": {{"n": {n}}}, "classification": "{DECISIONS[n % 2]}"}}</decision>'
        return [{"tool": "answer", "args": {"completion": answer}}]

    def _pose(self, seed: int) -> AnswerTask:
        n = self.number(seed)
        text = (f"Is {n} even or odd? Answer with "
                '<decision>{"facts": {"n": N}, "classification": "even" or "odd"}</decision>.')
        # What the answer is scored against: the gold parity, and the asked number as the fact it must restate.
        return AnswerTask(Observation(text, {"n": n}), f"Is {n} even or odd?",
                          {"gold": DECISIONS[n % 2], "source_facts": {"n": n}})

    def _close(self) -> None:
        self.reward_function.close()
