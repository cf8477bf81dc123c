import pytest

from proofgym.domains import domain_names, get_domain


@pytest.fixture(params=domain_names())
def domain(request):
    """Each shipped domain in turn: every test that takes it runs for all of them."""
    return get_domain(request.param)
