"""Each domain's rulebook, spec and generated records agree: same facts, same decisions, valid values."""

from proofgym.rules import gate, load_rulebook

from ._support import kernel_for

_PYTHON_TYPES = {"integer": (int,), "number": (int, float), "boolean": (bool,), "enum": (str,), "string": (str,)}


def test_spec_states_the_rulebooks_facts_and_decisions(domain):
    rulebook = load_rulebook(domain.rulebook_path)
    assert [f.name for f in rulebook.facts] == list(domain.spec.facts)
    assert tuple(rulebook.decisions) == domain.spec.decisions
    assert rulebook.posture == "deny" and rulebook.default_decision in rulebook.decisions
    assert rulebook.min_confidence == 0.8
    assert rulebook.constraints and rulebook.derive_rules and len(rulebook.decision_rules) > 1


def test_generated_values_have_the_declared_types_and_ranges(domain):
    rulebook = load_rulebook(domain.rulebook_path)
    for record in domain.generate(0, 2000):
        for spec in rulebook.facts:
            value = record.facts[spec.name]
            assert isinstance(value, _PYTHON_TYPES[spec.type]), (spec.name, value)
            assert spec.type == "boolean" or not isinstance(value, bool), (spec.name, value)
            if spec.minimum is not None:
                assert value >= spec.minimum, (spec.name, value)
            if spec.maximum is not None:
                assert value <= spec.maximum, (spec.name, value)
            if spec.type == "enum":
                assert value in spec.values, (spec.name, value)


def test_generated_values_always_pass_the_fact_gate(domain):
    rulebook = load_rulebook(domain.rulebook_path)
    kernel = kernel_for(domain)
    for seed in range(3):
        for record in domain.generate(seed, 2000):
            accepted, rejected, _ = gate(rulebook, record.facts)
            assert rejected == [] and accepted == dict(record.facts), rejected
            report = kernel.query(dict(record.facts))
            assert report["status"] == "decided" and report["proof_checked"], dict(record.facts)
