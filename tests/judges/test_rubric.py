"""Rubrics: both accepted forms, strict errors naming the file and the key, and the aggregation rules."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from proofgym.core import ConfigError
from proofgym.judges import Rubric, RubricSet, load_rubric_set, rubric_set_from_data

REFERENCE_TOML = """
[rubric]
enabled = true
model = "openai/gpt-oss-120b"

[rubric.weights]
env = 0.2
event = 0.4
outcome = 0.4

[rubric.event]
rubric_id = "crafter/event@v1"
criteria = [
  { key = "progress.unique_achievements", weight = 0.9, description = "unlocks", aggregation = "weighted_sum" },
  { key = "process.intent_alignment", weight = 0.1, description = "aligned", aggregation = "weighted_sum" },
]

[rubric.outcome]
rubric_id = "crafter/outcome@v1"
criteria = [
  { key = "outcome.goal_completion", weight = 0.6, description = "goal", aggregation = "weighted_sum" },
  { key = "outcome.achievement_depth", weight = 0.4, description = "depth", aggregation = "weighted_sum" },
]
"""

OURS_YAML = """
version: 2
goal_text: Write a correct adder.
aggregation: weighted_sum
criteria:
  - id: compiles
    description: It compiles.
    weight: 3
    required: true
    scale: binary
  - id: style
    description: Readable.
    weight: 1
    scale: {kind: bounded, min: 0, max: 10}
  - id: grade
    description: A letter grade.
    scale: [0, 1, 2]
"""


def test_the_reference_form_is_read(tmp_path):
    path = tmp_path / "rl.toml"
    path.write_text(REFERENCE_TOML)
    rubrics = load_rubric_set(path)
    assert rubrics.weights.model_dump() == {"env": 0.2, "event": 0.4, "outcome": 0.4}
    assert rubrics.event.label == "crafter/event@v1"
    assert [c.id for c in rubrics.outcome.criteria] == ["outcome.goal_completion", "outcome.achievement_depth"]
    assert rubrics.event.total({"progress.unique_achievements": 1.0, "process.intent_alignment": 0.3}) == \
        pytest.approx((0.9 + 0.03) / 1.0)


def test_our_form_is_read_as_an_outcome_rubric(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(OURS_YAML)
    rubrics = load_rubric_set(path)
    assert rubrics.event is None and rubrics.outcome.version == "2"
    rubric = rubrics.outcome
    assert rubric.criterion("style").scale.normalise(5) == 0.5
    # (1*3 + 0.5*1 + 1.0*1) / 5
    assert rubric.total({"compiles": 1, "style": 5, "grade": 2}) == pytest.approx(4.5 / 5)
    # a required criterion that fails caps the total at 0
    assert rubric.total({"compiles": 0, "style": 10, "grade": 2}) == 0.0
    # an invalid (missing) or off-scale score abstains, never counts as 0
    assert rubric.total({"compiles": 1, "style": None, "grade": 2}) is None
    assert rubric.total({"compiles": 1, "style": 11, "grade": 2}) is None
    assert rubric.total({"compiles": 1, "style": 5, "grade": 1.5}) is None


@pytest.mark.parametrize("body, where", [
    ({"criteria": [{"id": "a", "description": "d", "weight": 0}]}, "outcome.criteria[0].weight"),
    ({"criteria": [{"id": "a", "description": "d", "wieght": 1}]}, "outcome.criteria[0].wieght"),
    ({"criteria": [{"id": "a", "description": "d"}], "aggregation": "mean"}, "outcome.aggregation"),
    ({"criteria": [{"id": "a", "description": "d", "scale": {"kind": "bounded", "min": 2, "max": 1}}]},
     "outcome.criteria[0].scale"),
    ({"criteria": [{"id": "a", "description": "d"}, {"id": "a", "description": "e"}]}, "outcome"),
    ({"criteria": []}, "outcome.criteria"),
    ({"rubric": {"weights": {"env": -1}, "outcome": {"criteria": [{"id": "a", "description": "d"}]}}},
     "rubric.weights.env"),
    ({"weights": {"env": 1}}, "rubric set"),
])
def test_errors_name_the_file_and_the_key(body, where):
    with pytest.raises(ConfigError) as caught:
        rubric_set_from_data(body, source="my/rubric.yaml")
    message = str(caught.value)
    assert message.startswith("my/rubric.yaml: ")
    if where != "rubric set":
        assert where in message, message


def test_a_missing_file_and_a_wrong_suffix_are_named(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_rubric_set(tmp_path / "nope.yaml")
    (tmp_path / "r.txt").write_text("x")
    with pytest.raises(ConfigError, match="r.txt"):
        load_rubric_set(tmp_path / "r.txt")


def test_programmatic_only_keeps_the_computed_criteria():
    rubrics = rubric_set_from_data({"event": {"criteria": [{"id": "a", "description": "d", "function": "f"}]},
                                    "outcome": {"criteria": [{"id": "b", "description": "d"},
                                                             {"id": "c", "description": "d", "function": "g"}]}},
                                   source="x")
    assert rubrics.needs_llm() == ["outcome.b"]
    only = rubrics.programmatic_only()
    assert [c.id for c in only.outcome.criteria] == ["c"] and only.needs_llm() == []


scores = st.floats(0, 1, allow_nan=False)


@given(st.lists(st.tuples(st.floats(0.01, 100), scores), min_size=1, max_size=8))
def test_weighted_sum_is_the_weighted_mean_and_stays_in_0_1(pairs):
    rubric = Rubric(criteria=[{"id": f"c{i}", "description": "d", "weight": w} for i, (w, _) in enumerate(pairs)])
    total = rubric.total({f"c{i}": s for i, (_, s) in enumerate(pairs)})
    expected = sum(w * s for w, s in pairs) / sum(w for w, _ in pairs)
    assert math.isclose(total, expected, rel_tol=1e-9, abs_tol=1e-12) and -1e-12 <= total <= 1 + 1e-12


@pytest.mark.parametrize("aggregation, expected", [("sum", 0.3 * 1 + 0.7 * 0.5), ("min", 0.5), ("all_required", 0.0)])
def test_other_aggregations(aggregation, expected):
    rubric = Rubric(aggregation=aggregation, criteria=[{"id": "a", "description": "d", "weight": 0.3},
                                                       {"id": "b", "description": "d", "weight": 0.7}])
    assert rubric.total({"a": 1.0, "b": 0.5}) == pytest.approx(expected)
    assert Rubric(aggregation="all_required", criteria=[{"id": "a", "description": "d"}]).total({"a": 1.0}) == 1.0


def test_a_rubric_set_needs_a_rubric():
    with pytest.raises(ValueError):
        RubricSet()
