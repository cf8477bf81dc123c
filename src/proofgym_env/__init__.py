"""Any proofgym environment as a verifiers taskset, plugins' included: ``vf-eval proofgym-env --env.taskset.env loan``
(see docs/verifiers.md)."""

from proofgym.integrations.vf import ProofgymTaskset

__all__ = ["ProofgymTaskset"]
