"""Bad data in a user's CSV: one line per problem, naming the file, the row (as a spreadsheet numbers it: the header
is row 1) and the column, through the real reader (``infer_schema``, what ``proofgym domain init`` runs)."""

import csv
import tracemalloc

import pytest

from proofgym.domains import RULE_KEYWORDS, CsvDataError, infer_schema
from proofgym.domains._csv import MAX_ROW_BYTES

HEADER = ["age", "income", "status", "member"]
GOOD = [[34, 52000.5, "employed", "yes"], [17, 0, "student", "no"], [70, 18000, "retired", "yes"]]


def write(tmp_path, rows, header=HEADER, name="records.csv"):
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def problems(path, **kwargs):
    with pytest.raises(CsvDataError) as info:
        infer_schema(path, **kwargs).raise_for_problems()
    return list(info.value.problems), str(info.value)


def test_good_data_is_typed(tmp_path):
    schema = infer_schema(write(tmp_path, GOOD))
    assert schema.problem_count == 0 and schema.rows == 3
    types = {column.name: column.type for column in schema.columns}
    assert types == {"age": "integer", "income": "number", "status": "enum", "member": "boolean"}
    age = schema.column("age")
    assert (age.min, age.max) == (17, 70)
    assert schema.column("status").values == ("employed", "retired", "student")
    assert schema.facts_section()["member"] == {"type": "boolean", "description": "member"}


def test_a_missing_value_is_one_line_with_row_and_column(tmp_path):
    path = write(tmp_path, [*GOOD, [40, "", "employed", "no"]])
    lines, _ = problems(path)
    assert lines == [f"{path}: row 5, column 'income': missing value (empty cell)"]


def test_mixed_types_name_each_odd_cell(tmp_path):
    path = write(tmp_path, [*GOOD, [40, "n/a", "employed", "no"], [41, 100, "employed", "no"]])
    lines, _ = problems(path)
    assert lines == [f"{path}: row 5, column 'income': 'n/a' is text, but the column's other 4 values are numbers "
                     f"(mixed types)"]


def test_non_utf8_bytes_give_the_row_and_byte_offset(tmp_path):
    path = write(tmp_path, GOOD)
    data = path.read_bytes()
    first_row_end = data.index(b"\n") + 1
    second_row_end = data.index(b"\n", first_row_end) + 1
    bad = data[:second_row_end] + "40,100,caf\u00e9,no\n".encode("latin-1") + data[second_row_end:]
    path.write_bytes(bad)
    lines, _ = problems(path)
    offset = second_row_end + len(b"40,100,caf")
    assert lines == [f"{path}: row 3: not UTF-8 text: byte 0xe9 at byte offset {offset}; save the file as UTF-8"]


@pytest.mark.parametrize("cell", ["=CMD()", "@SUM(A1)", "+A1+B1", "-2+3+cmd|' /C calc'!A0", "=1+1"])
def test_a_formula_is_refused_with_row_and_column(tmp_path, cell):
    path = write(tmp_path, [*GOOD, [40, 100, cell, "no"]])
    lines, _ = problems(path)
    assert len(lines) == 1
    assert lines[0].startswith(f"{path}: row 5, column 'status': {cell!r} starts with {cell[0]!r}")
    assert "formula injection" in lines[0]


def test_signed_numbers_are_numbers_not_formulas(tmp_path):
    schema = infer_schema(write(tmp_path, [[-5, "+3", "a", "no"], [7, "-2.5", "b", "yes"], [0, "1e3", "a", "no"]]))
    assert schema.problem_count == 0
    assert schema.column("age").min == -5
    assert (schema.column("income").type, schema.column("income").min) == ("number", -2.5)


@pytest.mark.parametrize("keyword", ["when", "all", "any", "not", "fact", "op", "value"])
def test_a_column_named_like_a_rule_keyword_is_refused(tmp_path, keyword):
    assert keyword in RULE_KEYWORDS
    path = write(tmp_path, GOOD, header=["age", "income", keyword, "member"])
    lines, _ = problems(path)
    assert lines == [f"{path}: row 1, column 3 {keyword!r}: the rulebook language uses {keyword!r} as a keyword; "
                     f"rename the column, e.g. {keyword + '_value'!r}"]


def test_duplicate_empty_and_ill_formed_column_names(tmp_path):
    path = write(tmp_path, [[1, 2, 3, 4]], header=["age", "", "age", "Annual Income"])
    lines, _ = problems(path)
    assert lines == [
        f"{path}: row 1, column 2: the column has no name; every column needs one",
        f"{path}: row 1, column 3 'age': duplicate column name (also column 1)",
        f"{path}: row 1, column 4 'Annual Income': not a fact name (letters, digits and _, not starting with a "
        f"digit); rename it, e.g. 'annual_income'",
    ]


def test_a_row_with_the_wrong_number_of_cells(tmp_path):
    path = write(tmp_path, [*GOOD, [40, 100, "employed"]])
    lines, _ = problems(path)
    assert lines == [f"{path}: row 5: 3 cells, expected 4 (one per column)"]


def test_free_text_is_flagged_not_typed(tmp_path):
    rows = [[20 + i, 100 * i, f"note number {i}", "no"] for i in range(30)]
    schema = infer_schema(write(tmp_path, rows))
    assert schema.problem_count == 0
    status = schema.column("status")
    assert status.type is None and "free text" in status.flag
    assert [column.name for column in schema.facts] == ["age", "income", "member"]


def test_only_the_first_problems_are_shown_then_a_count(tmp_path):
    path = write(tmp_path, [*GOOD, *([40, "", "employed", "no"] for _ in range(30))])
    lines, message = problems(path)
    assert len(lines) == 30
    shown = message.splitlines()
    assert len(shown) == 21 and shown[-1] == "... and 10 more problem(s)"


def test_a_large_file_is_streamed_in_bounded_memory(tmp_path):
    path = tmp_path / "big.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for i in range(60_000):
            writer.writerow([18 + i % 60, 1000 + i, ("employed", "retired")[i % 2], ("yes", "no")[i % 3 == 0]])
    assert path.stat().st_size > 1_200_000
    tracemalloc.start()
    try:
        schema = infer_schema(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert schema.rows == 60_000 and schema.problem_count == 0
    assert peak < 1_000_000, peak  # the file is 1.3 MB; the reader holds a row at a time


def test_a_row_longer_than_the_bound_is_one_line_and_not_held(tmp_path):
    path = write(tmp_path, GOOD)
    with path.open("ab") as handle:
        handle.write(b"40," + b"9" * (MAX_ROW_BYTES + 10) + b",employed,no\n")
        handle.write(b"41,100,employed,no\n")
    offset = path.stat().st_size - len(b"41,100,employed,no\n") - (MAX_ROW_BYTES + 26)
    lines, _ = problems(path)
    assert lines == [f"{path}: row 5: longer than {MAX_ROW_BYTES} bytes (byte offset {offset}); rows are read one "
                     f"at a time"]
