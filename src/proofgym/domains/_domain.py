"""What a shipped domain is, the registry of domains, and the balanced record schedule they share."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from proofgym.core import Registry, RegistryError
from proofgym.domains._spec import DomainSpec


@dataclass(frozen=True, slots=True)
class Record:
    """One generated case of a domain.

    ``facts`` are exactly the rulebook's input facts (the source record the model reads, rendered as
    text, and the values its answer must repeat). ``branch`` names the rule branch the record was
    built to exercise; it is a label for balance and analysis, never the gold answer (the gold
    decision comes from the rule kernel).
    """

    id: str
    facts: Mapping[str, Any]
    branch: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))


@dataclass(frozen=True, slots=True)
class Domain:
    """A shipped classification domain: its rulebook, its prompt contract and its data.

    ``spec`` is the prompt contract (decisions, fact descriptions, the policy in plain words);
    ``generate(seed, n)`` returns ``n`` records, the same for the same seed; ``render(record)`` is the
    user-facing text of a record, stating every fact in plain words; ``branches`` maps each branch
    label the generator uses to the decision that branch leads to.
    """

    name: str
    rulebook_path: Path
    spec: DomainSpec
    generate: Callable[[int, int], list[Record]]
    render: Callable[[Record], str]
    branches: Mapping[str, str] = field(default_factory=dict)

    @property
    def run_config_path(self) -> Path:
        """The domain's one default run config (its reward path), beside its rulebook: ``<rulebook>.run.yaml``
        (``configs/run/<domain>.yaml`` links to the shipped ones)."""
        return self.rulebook_path.with_name(f"{self.rulebook_path.stem}.run.yaml")

    def __post_init__(self) -> None:
        object.__setattr__(self, "rulebook_path", Path(self.rulebook_path))
        object.__setattr__(self, "branches", MappingProxyType(dict(self.branches)))
        unknown = sorted({d for d in self.branches.values() if d not in self.spec.decisions})
        if unknown:
            raise ValueError(f"domain {self.name!r}: branches lead to decisions {unknown} not in its spec")


#: Domains by name; plugins register through the ``proofgym.domains`` entry-point group with a
#: ``"module:attribute"`` target naming a :class:`Domain`.
DOMAINS: Registry[Domain] = Registry("domain", "proofgym.domains", check=Domain)


def register_domain(domain: Domain) -> Domain:
    """Add ``domain`` to the registry under its name; a name can be registered once."""
    DOMAINS.register(domain.name, domain)
    return domain


def get_domain(name: str) -> Domain:
    """The registered domain called ``name``; ``KeyError`` lists the known names otherwise."""
    if name not in DOMAINS:
        raise KeyError(f"unknown domain {name!r}; known domains: {', '.join(domain_names())}")
    try:
        return DOMAINS.get(name)
    except RegistryError as exc:  # a plugin's target that cannot be loaded
        raise KeyError(str(exc)) from None


def domain_names() -> list[str]:
    """The names of all registered domains, sorted."""
    return DOMAINS.names()


def balanced_records(
    name: str,
    seed: int,
    n: int,
    branches: Mapping[str, str],
    make: Callable[[random.Random, str], dict[str, Any]],
) -> list[Record]:
    """``n`` records whose target branches cycle so that decisions, then branches, are balanced.

    Record ``i`` targets decision ``i mod D`` (in the order decisions first appear in ``branches``),
    then the next branch of that decision in turn: every decision gets an equal share, so a policy
    that always gives one answer is right on at most ``1/D`` of them, and every branch of a decision
    an equal part of that share. ``make(rng, branch)`` builds the facts; ``rng`` depends only on
    ``(name, seed, i)``, so a record never changes when ``n`` grows.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    by_decision: dict[str, list[str]] = {}
    for branch, decision in branches.items():
        by_decision.setdefault(decision, []).append(branch)
    cycles = list(by_decision.values())
    records = []
    for i in range(n):
        targets = cycles[i % len(cycles)]
        branch = targets[(i // len(cycles)) % len(targets)]
        # A string seed is hashed with SHA-512 by random.Random: stable across runs and platforms.
        rng = random.Random(f"{name}:{seed}:{i}")
        records.append(Record(id=f"{name}-{seed}-{i}", facts=make(rng, branch), branch=branch))
    return records
