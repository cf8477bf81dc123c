"""DocumentError: one line, ``line N, column M: key.path: reason``, and it survives pickling (worker processes)."""

import pickle

from proofgym.formats import DocumentError


def test_the_message_has_the_parts_that_are_known():
    error = DocumentError("bad", line=3, column=7, path=("rules", 2, "when"))
    assert str(error) == "line 3, column 7: rules[2].when: bad"
    assert str(DocumentError("bad", path=("a",))) == "a: bad"
    assert str(DocumentError("bad\n  twice")) == "bad twice"


def test_odd_keys_and_long_paths_stay_on_one_line():
    error = DocumentError("deep", path=("key\nwith newline", *range(20), "x" * 500))
    assert "\n" not in str(error) and "…" in str(error) and len(str(error)) < 200


def test_pickling_keeps_every_part():
    error = DocumentError("bad", line=1, column=2, path=("a", 0))
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.reason, copy.line, copy.column, copy.path, str(copy)) == ("bad", 1, 2, ("a", 0), str(error))


def test_an_error_in_a_jsonl_line_keeps_its_column_and_path_but_not_its_own_line():
    assert str(DocumentError("bad", line=1, column=7, path=("a",)).in_jsonl_line()) == "column 7: a: bad"
    assert str(DocumentError("bad", line=2, column=1).in_jsonl_line()) == "bad"
