import dataclasses

import pytest

from proofgym.domains import Domain, domain_names, get_domain, register_domain


def test_shipped_domains_are_registered():
    assert {"grant_eligibility", "loan"} <= set(domain_names())
    assert domain_names() == sorted(domain_names())


def test_unknown_domain_error_lists_the_known_names():
    with pytest.raises(KeyError, match="unknown domain 'mortgage'.*grant_eligibility, loan"):
        get_domain("mortgage")


def test_a_name_registers_once():
    with pytest.raises(ValueError, match="already registered"):
        register_domain(get_domain("loan"))


def test_domain_rulebook_ships_beside_its_module(domain):
    assert domain.rulebook_path.is_file()
    assert domain.rulebook_path.parent.name == "domains" and domain.rulebook_path.suffix == ".yaml"


def test_domain_is_frozen(domain):
    with pytest.raises(dataclasses.FrozenInstanceError):
        domain.name = "other"


def test_branches_must_lead_to_the_specs_decisions(domain):
    with pytest.raises(ValueError, match="not in its spec"):
        Domain(name="x", rulebook_path=domain.rulebook_path, spec=domain.spec, generate=domain.generate,
               render=domain.render, branches={"odd": "maybe"})


def test_every_decision_has_a_branch(domain):
    assert set(domain.branches.values()) == set(domain.spec.decisions)

