"""Shipped classification domains: each a rulebook, a prompt contract (``DomainSpec``, and the prompts that state it
exactly), a record generator and a renderer.

To add a domain, write one module of the shape of ``_grant_eligibility.py`` (a ``DomainSpec``, a
generator, a renderer and a ``Domain``), its rulebook YAML and its default run config (``<rulebook>.run.yaml``)
beside it, and one ``register_domain`` line below; a plugin's domain comes in through the ``proofgym.domains``
entry-point group instead.
"""

from proofgym.domains import _grant_eligibility, _loan
from proofgym.domains._dataset import (
    build_dataset,
    build_example,
    gold_completion,
    gold_decision,
    to_hf_dataset,
    write_jsonl,
)
from proofgym.domains._messages import build_messages, build_prompt_text
from proofgym.domains._spec import DomainSpec
from proofgym.domains._system_prompt import build_system_prompt, check_system_prompt
from proofgym.domains._domain import DOMAINS, Domain, Record, domain_names, get_domain, register_domain
# The grant domain's income limit (inclusive): the boundary its records probe, and the demo reports apart.
from proofgym.domains._grant_eligibility import INCOME_THRESHOLD as GRANT_INCOME_THRESHOLD

register_domain(_grant_eligibility.DOMAIN)
register_domain(_loan.DOMAIN)

__all__ = [
    "DOMAINS",
    "GRANT_INCOME_THRESHOLD",
    "Domain",
    "DomainSpec",
    "Record",
    "build_dataset",
    "build_example",
    "build_messages",
    "build_prompt_text",
    "build_system_prompt",
    "check_system_prompt",
    "domain_names",
    "get_domain",
    "gold_completion",
    "gold_decision",
    "register_domain",
    "to_hf_dataset",
    "write_jsonl",
]
