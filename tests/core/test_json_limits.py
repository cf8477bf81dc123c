import json

import pytest

from proofgym.core import json_limit_problem
from proofgym.core._limits import MAX_DEPTH, MAX_INT_DIGITS
from _bounds import LINEAR_SCAN_CPU_S, cpu_seconds


def nested(depth, open_="[", close="]"):
    return open_ * depth + close * depth


@pytest.mark.parametrize("text", [
    "", "{}", "[1, 2, 3]", nested(MAX_DEPTH), '{"a": ' + nested(MAX_DEPTH - 1, "{", "}") + "}",
    '{"s": "' + "[" * 10_000 + '"}', '{"s": "' + "9" * 10_000 + '"}',  # inside strings, nothing counts
    "9" * MAX_INT_DIGITS, "-" + "9" * MAX_INT_DIGITS, "1." + "9" * 5000, "1e" + "9" * 5000, "9" * 5000 + ".5",
    "9" * 5000 + "e1", '"\\"[[[" ', "not json at all",
])
def test_text_within_the_limits_passes(text):
    assert json_limit_problem(text) is None
    assert json_limit_problem(text.encode()) is None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1000, 10_000])
@pytest.mark.parametrize("brackets", [("[", "]"), ("{\"k\":", "}")])
def test_nesting_past_the_limit_is_named_with_its_path(depth, brackets):
    open_, close = brackets
    body = '{"query": ["q"], "labels": [1, ' + open_ * depth + "0" + close * depth + "]}"
    problem = json_limit_problem(body.encode())
    assert problem.kind == "json_too_deep"
    assert problem.path[:2] == ("labels", 1) and len(problem.path) >= MAX_DEPTH - 2
    assert f"the limit is {MAX_DEPTH} levels" in problem.message and "at labels[1]" in problem.message
    assert json_limit_problem(body.encode(), max_depth=depth + 2) is None


def test_an_integer_past_the_limit_is_named_with_its_path_and_its_size():
    problem = json_limit_problem(b'{"a": {"b\\"c": [0, -' + b"7" * 5000 + b"]}}")
    assert problem.kind == "json_integer_too_long" and problem.path == ("a", 'b"c', 1)
    assert problem.message == 'an integer of 5000 digits at a.b"c[1]; the limit is 1000 digits'
    assert json_limit_problem("9" * (MAX_INT_DIGITS + 1)).path == ()


def test_the_first_problem_in_the_text_is_the_one_named():
    text = '{"x": ' + "1" * 2000 + ', "y": ' + nested(100) + "}"
    assert json_limit_problem(text).path == ("x",)
    text = '{"y": ' + nested(100) + ', "x": ' + "1" * 2000 + "}"
    assert json_limit_problem(text).kind == "json_too_deep"


def test_keys_with_escapes_and_lone_surrogates_are_named_as_text():
    problem = json_limit_problem(b'{"\\ud800\\u00e9": ' + nested(70).encode() + b"}")
    assert problem.path[0] == "\ufffd\u00e9"
    json.dumps(problem.path, allow_nan=False).encode("utf-8")


def test_a_large_body_within_the_limits_is_checked_quickly():
    items = [{"gold": "permit", "source_facts": {"age": 50, "note": "[" * 80}}] * 16_000
    body = json.dumps({"query": ["x" * 1000] * 16_000, "labels": items}).encode()
    problem, cpu_s = cpu_seconds(lambda: json_limit_problem(body))
    assert problem is None and cpu_s < LINEAR_SCAN_CPU_S


@pytest.mark.parametrize("before", ['\\"', "\\\\", '\\\\\\"', "\\n\\u0022"])
def test_escapes_in_strings_are_read_as_json_reads_them(before):
    inside = '{"s": "' + before + "[" * 100 + '"}'  # the brackets are in the string, whatever the escapes before
    assert json.loads(inside) and json_limit_problem(inside) is None
    after = '{"s": "' + before + '", "t": ' + nested(100) + "}"  # the string ends: the brackets are outside
    assert json.loads(after) and json_limit_problem(after).path[:1] == ("t",)


def test_has_digit_run_bounds_long_integers_cheaply():
    from proofgym.core._limits import has_digit_run

    assert has_digit_run(b'{"x": "' + b"1" * 11 + b'"}', 10) and has_digit_run(b"1" * 11, 10)
    assert not has_digit_run(b"1" * 10 + b"." + b"1" * 10, 10) and not has_digit_run(b"12", 1000)


def test_has_digit_run_agrees_with_a_full_scan_on_generated_bytes():
    import random
    import re

    from proofgym.core._limits import has_digit_run

    rng = random.Random(7)
    for _ in range(20_000):
        limit = rng.randint(1, 9)
        data = bytes(rng.choice(b"0123456789" * 3 + b'a"[ ,.') for _ in range(rng.randint(0, 40)))
        assert has_digit_run(data, limit) == bool(re.search(rb"[0-9]{%d}" % (limit + 1), data)), (data, limit)
    for length in (999, 1000, 1001, 1002, 1999, 2001, 2002):
        for offset in (0, 1, 500, 1000, 1001):
            data = b" " * offset + b"7" * length + b" "
            assert has_digit_run(data) == (length > 1000), (length, offset)
