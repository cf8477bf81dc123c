"""Shared by the domain tests."""

from proofgym.rules import RuleKernel, load_rulebook


def kernel_for(domain):
    """A fresh kernel for the domain's rulebook."""
    return RuleKernel(load_rulebook(domain.rulebook_path))
