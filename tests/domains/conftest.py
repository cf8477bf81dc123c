import pytest

from proofgym.domains import DomainSpec, domain_names, get_domain


@pytest.fixture(params=domain_names())
def domain(request):
    """Each shipped domain in turn: every test that takes it runs for all of them."""
    return get_domain(request.param)

@pytest.fixture
def spec():
    return DomainSpec(
        name="permits",
        description="Decide whether the applicant described in the record gets a residence permit.",
        decisions=("permit", "deny", "refer"),
        facts={"age": "integer, the applicant's age in years", "resident": "boolean, lives in the city"},
    )
