import json
from importlib import resources

import pytest

from proofgym.rules import rulebook_json_schema

from kernel_helpers import GRANT, LOAN, data_of


def test_the_shipped_schema_is_the_generated_one():
    shipped = json.loads(resources.files("proofgym.rules").joinpath("rulebook.schema.json").read_text("utf-8"))
    assert shipped == rulebook_json_schema(), (
        "regenerate src/proofgym/rules/rulebook.schema.json from proofgym.rules.rulebook_json_schema()")


def test_the_schema_forbids_unknown_keys_and_describes_the_keys():
    schema = rulebook_json_schema()
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"name", "decisions"}
    assert "posture" in schema["properties"] and schema["properties"]["posture"]["description"]
    for name, definition in schema["$defs"].items():
        if definition.get("type") == "object":
            assert definition["additionalProperties"] is False, name
    assert schema["$defs"]["NotCondition"]["required"] == ["not"]  # the alias, not the Python name
    assert schema["$defs"]["FactDecl"]["properties"]["min_confidence"]["description"]


def test_the_fixtures_validate_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    for path in (GRANT, LOAN):
        jsonschema.validate(data_of(path), rulebook_json_schema())
