"""``vf-eval proofgym-crafter``: proofgym's crafter environment as a verifiers taskset."""

from proofgym.integrations.vf import taskset_for

CrafterTaskset = taskset_for("crafter", module=__name__)

__all__ = ["CrafterTaskset"]
