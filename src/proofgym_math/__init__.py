"""``vf-eval proofgym-math``: proofgym's math environment as a verifiers taskset."""

from proofgym.integrations.vf import taskset_for

MathTaskset = taskset_for("math", module=__name__)

__all__ = ["MathTaskset"]
