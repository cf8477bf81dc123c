"""Deprecated alias of :mod:`proofgym.reference_verifiers.grant_rules` (this package's old name), kept so that run
configs naming ``proofgym.examples.grant_rules:verify`` still load; name ``proofgym.reference_verifiers.grant_rules``
instead."""

from proofgym.reference_verifiers.grant_rules import *  # noqa: F401,F403
