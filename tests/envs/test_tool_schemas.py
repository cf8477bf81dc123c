import pytest

from proofgym.envs import Tool


@pytest.mark.parametrize(
    "parameters, complaint",
    [
        ({"type": "array"}, "type 'object'"),
        ({"type": "object", "oneOf": []}, "unsupported schema keywords"),
        ({"type": "object", "properties": {"x": {"type": "number"}}}, "string, integer or boolean"),
        ({"type": "object", "properties": {"x": {"type": "string", "pattern": "a+"}}}, "unsupported keywords"),
        ({"type": "object", "properties": {"x": {"type": "integer", "maxLength": 3}}}, "unsupported keywords"),
        ({"type": "object", "properties": {"x": {"type": "string", "maxLength": -1}}}, "maxLength"),
        ({"type": "object", "properties": {}, "required": ["x"]}, "'required'"),
    ],
)
def test_a_schema_outside_the_supported_subset_is_refused_at_definition(parameters, complaint):
    with pytest.raises(ValueError, match=complaint):
        Tool("t", "a tool", parameters)
