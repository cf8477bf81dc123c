"""The fact schema of a CSV, inferred in one streamed pass: a type per column, with its range or its values.

A column's type, from the kinds of its cells (see :mod:`proofgym.domains._csv`):

- every cell an integer: ``integer`` (``min`` / ``max``: the smallest and largest value seen);
- integers and decimals: ``number`` (the same range);
- booleans, or booleans mixed with 0 and 1: ``boolean`` (a column of only 0 and 1 stays ``integer``; declare it
  ``type: boolean`` in your rulebook to read it as one);
- text with at most :data:`MAX_ENUM_VALUES` distinct values: ``enum`` (its values, sorted);
- anything else is mixed types (one problem line per cell of the minority kind), or a column left out of the
  facts (flagged, with why): free text with more distinct values, or a column with no value at all.

The inferred range is the data's: the fact gate then refuses a value outside what the CSV holds. Widen it in
``rulebook.yaml`` where the policy allows more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proofgym.domains._csv import CsvDataError, CsvReader, Kind, classify, is_formula

#: The most distinct values a text column may have to be typed as an enum.
MAX_ENUM_VALUES = 20
_KEPT = 20  # cells of each kind a column remembers for its problem lines


@dataclass
class Column:
    """One column's inferred fact: ``type`` (``integer``, ``number``, ``boolean``, ``enum``, or ``None`` when the
    column cannot be a fact: ``flag`` says why), its range or values, and a description made from its name."""

    name: str
    type: str | None
    min: float | None = None
    max: float | None = None
    values: tuple[str, ...] = ()
    flag: str = ""

    @property
    def description(self) -> str:
        return self.name.replace("_", " ")

    def fact_decl(self) -> dict[str, Any]:
        """The rulebook's declaration of this fact (its ``facts:`` entry)."""
        decl: dict[str, Any] = {"type": self.type}
        if self.type in ("integer", "number"):
            decl["min"], decl["max"] = self.min, self.max
        if self.type == "enum":
            decl["values"] = list(self.values)
        decl["description"] = self.description
        return decl

    def value(self, kind: Kind, value: Any) -> Any:
        """A cell's value as this column's type (``None`` where it does not fit)."""
        if self.type == "integer":
            return value if kind == "integer" else None
        if self.type == "number":
            return value if kind in ("integer", "number") else None
        if self.type == "boolean":
            if kind == "boolean":
                return value
            return bool(value) if kind == "integer" and value in (0, 1) else None
        if self.type in ("enum", "string"):
            return value if kind == "text" else None
        return None


@dataclass
class _Stats:
    counts: dict[str, int] = field(default_factory=dict)
    cells: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    low: float | None = None
    high: float | None = None
    texts: set[str] = field(default_factory=set)
    ints_01_only: bool = True

    def add(self, row: int, raw: str, kind: Kind, value: Any) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        kept = self.cells.setdefault(kind, [])
        if len(kept) < _KEPT:
            kept.append((row, raw.strip()))
        if kind in ("integer", "number"):
            self.low = value if self.low is None or value < self.low else self.low
            self.high = value if self.high is None or value > self.high else self.high
            if kind == "number" or value not in (0, 1):
                self.ints_01_only = False
        elif kind == "text" and len(self.texts) <= MAX_ENUM_VALUES:
            self.texts.add(value)


_KIND_WORDS = {"integer": "integers", "number": "numbers", "boolean": "booleans (true/false/yes/no)",
               "text": "text", "numeric": "numbers"}


@dataclass
class InferredSchema:
    """What one pass over a CSV found: the columns in order, how many record rows it read, the bad data (one line
    each, the first ones; ``problem_count`` counts them all)."""

    source: str
    columns: list[Column]
    rows: int
    problems: list[str]
    problem_count: int

    @property
    def facts(self) -> list[Column]:
        """The columns typed as facts."""
        return [column for column in self.columns if column.type is not None]

    @property
    def flagged(self) -> list[Column]:
        return [column for column in self.columns if column.type is None]

    def facts_section(self) -> dict[str, dict[str, Any]]:
        """The rulebook's ``facts:`` section for the typed columns (type, range or values, description)."""
        return {column.name: column.fact_decl() for column in self.facts}

    def column(self, name: str) -> Column | None:
        return next((column for column in self.columns if column.name == name), None)

    def raise_for_problems(self) -> None:
        if self.problem_count:
            raise CsvDataError(self.problems, self.problem_count)


def infer_schema(path: str | Path, *, id_column: str | None = None) -> InferredSchema:
    """Read the CSV once (streamed) and infer each column's type; bad data is collected, not raised
    (:meth:`InferredSchema.raise_for_problems`). ``id_column`` is kept as text and never typed as a fact."""
    reader = CsvReader(path)
    if id_column is not None and id_column not in reader.columns:
        raise CsvDataError([f"{reader.source}: row 1: no column {id_column!r} (the id column); the columns are "
                            f"{', '.join(reader.columns)}"])
    stats = {name: _Stats() for name in reader.columns}
    rows = 0
    for record in reader:
        rows += 1
        for name, raw in record.cells.items():
            kind, value = classify(raw)
            if name == id_column:
                if kind == "missing":
                    reader.note(f"{reader.source}: row {record.row}, column {name!r}: missing value (the id column)")
                continue
            if kind == "missing":
                reader.note(f"{reader.source}: row {record.row}, column {name!r}: missing value (empty cell)")
            elif kind == "text" and is_formula(raw):
                reader.note(f"{reader.source}: row {record.row}, column {name!r}: {raw.strip()[:40]!r} starts with "
                            f"{raw.strip()[0]!r}, as a spreadsheet formula does (formula injection); refused")
                continue
            stats[name].add(record.row, raw, kind, value)
    if rows == 0:
        reader.note(f"{reader.source}: no record rows below the header")
    columns = []
    for name in reader.columns:
        if name == id_column:
            columns.append(Column(name, None, flag="the id column (names records, never a fact)"))
            continue
        column, problems = _type(reader.source, name, stats[name])
        columns.append(column)
        for problem in problems:
            reader.note(problem)
    return InferredSchema(reader.source, columns, rows, reader.problems, reader.problem_count)


def _type(source: str, name: str, stats: _Stats) -> tuple[Column, list[str]]:
    counts = {kind: n for kind, n in stats.counts.items() if kind != "missing"}
    if not counts:
        return Column(name, None, flag="no cell has a value"), []
    kinds = set(counts)
    if kinds == {"integer"}:
        return Column(name, "integer", stats.low, stats.high), []
    if kinds == {"integer", "number"} or kinds == {"number"}:
        return Column(name, "number", stats.low, stats.high), []
    if kinds == {"boolean"} or (kinds == {"boolean", "integer"} and stats.ints_01_only):
        return Column(name, "boolean"), []
    if kinds == {"text"}:
        if len(stats.texts) > MAX_ENUM_VALUES:
            return Column(name, None, flag=f"free text: more than {MAX_ENUM_VALUES} distinct values, so neither a "
                                           f"number nor an enum; left out of the facts"), []
        return Column(name, "enum", values=tuple(sorted(stats.texts))), []
    # Mixed: the majority kind (integers and decimals counted together) is the column's; each other cell is a line.
    groups: dict[str, int] = {}
    for kind, n in counts.items():
        group = "numeric" if kind in ("integer", "number") else kind
        groups[group] = groups.get(group, 0) + n
    majority = max(groups, key=lambda group: (groups[group], group))
    problems = []
    for kind, n in sorted(counts.items()):
        group = "numeric" if kind in ("integer", "number") else kind
        if group == majority:
            continue
        for row, raw in stats.cells.get(kind, []):
            problems.append(f"{source}: row {row}, column {name!r}: {raw[:40]!r} is {_a(kind)}, but the column's "
                            f"other {groups[majority]} values are {_KIND_WORDS[majority]} (mixed types)")
        if n > len(stats.cells.get(kind, [])):
            problems.append(f"{source}: column {name!r}: {n - len(stats.cells[kind])} more cells of {kind} among "
                            f"{_KIND_WORDS[majority]} (mixed types)")
    return Column(name, None, flag=f"mixed types ({', '.join(sorted(groups))})"), problems


def _a(kind: str) -> str:
    return {"integer": "an integer", "number": "a number", "boolean": "a boolean", "text": "text"}[kind]
