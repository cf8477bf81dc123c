"""``vf-eval proofgym-loan``: proofgym's loan environment as a verifiers taskset."""

from proofgym.integrations.vf import taskset_for

LoanTaskset = taskset_for("loan", module=__name__)

__all__ = ["LoanTaskset"]
