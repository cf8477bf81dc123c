"""``vf-eval proofgym-grant-eligibility``: proofgym's grant_eligibility environment as a verifiers taskset."""

from proofgym.integrations.vf import taskset_for

GrantEligibilityTaskset = taskset_for("grant_eligibility", module=__name__)

__all__ = ["GrantEligibilityTaskset"]
