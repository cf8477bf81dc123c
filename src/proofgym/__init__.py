"""proofgym: auditable, hack-resistant verifiable rewards for LLM post-training."""

from proofgym.core import Claim, ErrorKind, Outcome, RejectedFact, Verdict

__version__ = "0.1.0"

__all__ = ["Claim", "ErrorKind", "Outcome", "RejectedFact", "Verdict", "__version__"]
