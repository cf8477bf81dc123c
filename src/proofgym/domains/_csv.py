"""Reading a user's CSV of records: streamed (bounded memory, whatever the file's size), each cell classified, and
every piece of bad data reported as one line naming the file, the row and the column.

Row numbers are the ones a spreadsheet shows: the header is row 1, the first record row 2 (a record whose quoted
cell spans several lines is numbered by the line it starts on). A cell is, in this order:

- **missing**: empty, or only spaces;
- **integer**: optional sign and digits (``-5``, ``+3``, ``0``, ``1``);
- **number**: a finite decimal or exponent number (``2.5``, ``-1e3``); ``nan``, ``inf`` and ``1,000`` are text;
- **boolean**: ``true`` / ``false`` / ``yes`` / ``no``, any case (``0`` and ``1`` are integers: a column of only
  0 and 1 is an integer column, a column mixing them with the words is a boolean one);
- **text**: anything else. A text cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage
  return) is refused as a spreadsheet formula (formula injection); a number such as ``-5`` is never text.

The bad data each gets one line: a row that is not UTF-8 (with its byte offset), a row with too many or too few
cells, a missing value, a formula, a cell whose kind differs from the rest of its column (mixed types), and in
the header an empty, duplicate or ill-formed column name, or one spelled like a keyword of the rulebook language
(:data:`RULE_KEYWORDS`). :class:`CsvDataError` holds them all; its message shows the first
:data:`MAX_PROBLEMS_SHOWN` and counts the rest.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Kind = Literal["missing", "integer", "number", "boolean", "text"]

#: How many problem lines an error message shows; the rest are counted.
MAX_PROBLEMS_SHOWN = 20
#: The longest row read (bytes); a longer one is a problem, not a reason to read the whole file into memory.
MAX_ROW_BYTES = 1 << 20

_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FACT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRUE, _FALSE = frozenset({"true", "yes"}), frozenset({"false", "no"})
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _rule_keywords() -> frozenset[str]:
    """The keys of the rulebook language's conditions and operands (``all``, ``any``, ``not``, ``fact``, ``op``,
    ``value``, ``left``, ``right``, ``add`` ...) and ``when``, read from the kernel's own JSON Schema."""
    from proofgym.rules import rulebook_json_schema

    keys = {"when"}
    for name, definition in rulebook_json_schema().get("$defs", {}).items():
        if name.endswith(("Condition", "Operand")):
            keys.update(definition.get("properties", {}))
    return frozenset(keys)


#: Column names refused because the rulebook language spells its own keys that way.
RULE_KEYWORDS = _rule_keywords()


class CsvDataError(ValueError):
    """The CSV has bad data. ``problems`` holds one line per problem (the first ones, up to a bound) and
    ``total`` how many there were; the message shows the first :data:`MAX_PROBLEMS_SHOWN`."""

    def __init__(self, problems: list[str], total: int | None = None) -> None:
        self.problems = tuple(problems)
        self.total = len(problems) if total is None else total
        super().__init__(problem_lines(self.problems, self.total))


def problem_lines(problems: tuple[str, ...] | list[str], total: int) -> str:
    """The first :data:`MAX_PROBLEMS_SHOWN` problems, one a line, then how many more there are."""
    lines = list(problems[:MAX_PROBLEMS_SHOWN])
    if total > len(lines):
        lines.append(f"... and {total - len(lines)} more problem(s)")
    return "\n".join(lines)


def classify(cell: str) -> tuple[Kind, Any]:
    """The kind of a cell and its value (``int``, ``float``, ``bool``, the stripped text, or ``None``)."""
    text = cell.strip()
    if not text:
        return "missing", None
    if _INTEGER.fullmatch(text):
        return "integer", int(text)
    if _NUMBER.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return "number", number
        return "text", text
    lowered = text.lower()
    if lowered in _TRUE or lowered in _FALSE:
        return "boolean", lowered in _TRUE
    return "text", text


def is_formula(text: str) -> bool:
    """Whether a text cell would run as a formula in a spreadsheet (``=CMD()``, ``@SUM``, ``+A1``, ``-A1``)."""
    return cell_start(text).startswith(_FORMULA_STARTS)


def cell_start(text: str) -> str:
    return text.lstrip(" ")


@dataclass
class _Lines:
    """The file's lines, decoded one at a time; a line that is not UTF-8 is noted and skipped."""

    path: Path
    problems: list[tuple[int, str]] = field(default_factory=list)
    line: int = 0

    def __iter__(self) -> Iterator[str]:
        offset = 0
        with self.path.open("rb") as handle:
            while True:
                raw = handle.readline(MAX_ROW_BYTES + 1)
                if not raw:
                    return
                self.line += 1
                start = offset
                offset += len(raw)
                if len(raw) > MAX_ROW_BYTES and not raw.endswith(b"\n"):
                    self.problems.append((self.line, f"row {self.line}: longer than {MAX_ROW_BYTES} bytes "
                                                     f"(byte offset {start}); rows are read one at a time"))
                    while raw and not raw.endswith(b"\n"):  # skip the rest of the row without keeping it
                        raw = handle.readline(MAX_ROW_BYTES + 1)
                        offset += len(raw)
                    yield "\n"
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    bad = raw[exc.start:exc.start + 1].hex()
                    self.problems.append((self.line, f"row {self.line}: not UTF-8 text: byte 0x{bad} at byte "
                                                     f"offset {start + exc.start}; save the file as UTF-8"))
                    yield "\n"  # an empty line: the reader skips it
                    continue
                if self.line == 1 and text.startswith("\ufeff"):
                    text = text[1:]  # a byte-order mark, as spreadsheets write
                yield text


def header_problems(source: str, header: list[str]) -> list[str]:
    """One line per bad column name: empty, duplicate, not a fact name, or a keyword of the rulebook language."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(header, start=1):
        name = raw.strip()
        where = f"{source}: row 1, column {index}"
        if not name:
            problems.append(f"{where}: the column has no name; every column needs one")
            continue
        if name in seen:
            problems.append(f"{where} {name!r}: duplicate column name (also column {seen[name]})")
            continue
        seen[name] = index
        if not _FACT_NAME.fullmatch(name):
            suggestion = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_").lower() or "column"
            if suggestion[0].isdigit():
                suggestion = f"c_{suggestion}"
            problems.append(f"{where} {name!r}: not a fact name (letters, digits and _, not starting with a digit); "
                            f"rename it, e.g. {suggestion!r}")
        elif name in RULE_KEYWORDS:
            problems.append(f"{where} {name!r}: the rulebook language uses {name!r} as a keyword; rename the column, "
                            f"e.g. {name + '_value'!r}")
    return problems


@dataclass
class CsvRow:
    """One record row: its spreadsheet row number and its cells by column name (stripped text)."""

    row: int
    cells: dict[str, str]


class CsvReader:
    """Streams a CSV's record rows; ``problems`` collects the structural ones (encoding, cell counts) as it goes.

    The header is read on construction (``columns``); a header with a bad name raises :class:`CsvDataError`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.problems: list[str] = []
        self.problem_count = 0
        if not self.path.is_file():
            raise CsvDataError([f"{self.source}: no such file"])
        self._lines = _Lines(self.path)
        self._reader = csv.reader(iter(self._lines), strict=True)
        try:
            header = next(self._reader, None)
        except csv.Error as exc:
            raise CsvDataError([f"{self.source}: row 1: not a CSV header: {exc}"]) from None
        if self._lines.problems:
            raise CsvDataError([f"{self.source}: {text}" for _, text in self._lines.problems])
        if not header or not any(cell.strip() for cell in header):
            raise CsvDataError([f"{self.source}: row 1: no header row (the first row must name the columns)"])
        problems = header_problems(self.source, header)
        if problems:
            raise CsvDataError(problems)
        self.columns = [name.strip() for name in header]

    def note(self, problem: str) -> None:
        """Keep a problem line (the first ones; all are counted)."""
        self.problem_count += 1
        if len(self.problems) < 1000:
            self.problems.append(problem)

    def __iter__(self) -> Iterator[CsvRow]:
        width = len(self.columns)
        end = self._lines.line
        while True:
            try:
                cells = next(self._reader)
            except StopIteration:
                break
            except csv.Error as exc:
                self.note(f"{self.source}: row {end + 1}: not valid CSV: {exc}")
                end = self._lines.line
                continue
            start, end = end + 1, self._lines.line
            for line, text in self._lines.problems:
                self.note(f"{self.source}: {text}")
            self._lines.problems.clear()
            if not cells or (len(cells) == 1 and not cells[0].strip() and width > 1):
                continue  # a blank line, or one dropped above
            if len(cells) != width:
                self.note(f"{self.source}: row {start}: {len(cells)} cells, expected {width} (one per column)")
                continue
            yield CsvRow(start, dict(zip(self.columns, cells)))
        for _, text in self._lines.problems:
            self.note(f"{self.source}: {text}")
        self._lines.problems.clear()
