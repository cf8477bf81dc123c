"""``vf-eval proofgym-fact-finding``: proofgym's fact_finding environment as a verifiers taskset."""

from proofgym.integrations.vf import taskset_for

FactFindingTaskset = taskset_for("fact_finding", module=__name__)

__all__ = ["FactFindingTaskset"]
