import re
from pathlib import Path

import yaml

from proofgym.rules import RuleKernel, parse_rulebook

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rulebooks.md"


def test_the_documented_example_is_a_valid_rulebook_that_certifies():
    block = re.search(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S).group(1)
    rulebook = parse_rulebook(yaml.safe_load(block), source=str(DOCS))
    report = RuleKernel(rulebook).query({"age": 34, "annual_income": 21000, "resident": True,
                                         "has_active_grant": False, "employment_status": "employed"})
    assert (report["decision"], report["proof_checked"]) == ("permit", True)
