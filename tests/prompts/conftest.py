import pytest

from proofgym.prompts import DomainSpec


@pytest.fixture
def spec():
    return DomainSpec(
        name="permits",
        description="Decide whether the applicant described in the record gets a residence permit.",
        decisions=("permit", "deny", "refer"),
        facts={"age": "integer, the applicant's age in years", "resident": "boolean, lives in the city"},
    )
