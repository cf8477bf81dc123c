"""A domain brought as a folder: a CSV of records (features only, no labels), a rulebook, and ``domain.yaml``.

``proofgym domain init`` writes the folder (:func:`init_domain`); :func:`load_domain` reads it back into a
:class:`FolderDomain` and registers it under its name. The gold decision of every record is the rule kernel's (no
label column is ever read); a record's branch is the rule that decided it (``(default)`` when the deny posture's
default did). ``domain.yaml``::

    kind: domain
    name: my_domain
    description: the plain-English policy paragraph the model reads
    rulebook: rulebook.yaml          # relative to the folder, or absolute
    data: ../records.csv             # the CSV, relative to the folder, or absolute
    id_column: applicant_id          # optional: the column naming records (never a fact); init takes a column
                                     # named id or ending in _id unless --id-column names one
    heldout_share: 0.2
    split_seed: 0

With ``--rules``, the user's rulebook decides; a fact it declares without a ``type`` gets the inferred type, range
or values (and a fact with no ``description`` the inferred one); a fact whose type conflicts with the CSV column,
or that the CSV lacks, is one problem line each. Without ``facts:`` at all, every typed column is a fact. CSV
columns the rulebook does not name are not facts (the summary lists them).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from proofgym.domains._csv import CsvDataError, CsvReader, classify, is_formula
from proofgym.domains._domain import DOMAINS, Domain, Record
from proofgym.domains._schema_infer import Column, InferredSchema, infer_schema
from proofgym.domains._spec import DomainSpec
from proofgym.domains._splits import Split, SplitPlan, near_key
from proofgym.formats import DocumentError, load_yaml
from proofgym.rules import Rulebook, RuleKernel, RulebookError, parse_rulebook

#: The branch of a record no rule decided (the deny posture's default decision).
DEFAULT_BRANCH = "(default)"
_DOMAIN_KEYS = {"kind", "name", "description", "rulebook", "data", "id_column", "heldout_share", "split_seed"}


@dataclass(frozen=True, slots=True)
class FolderDomain(Domain):
    """A :class:`Domain` read from a folder: its records are the CSV's rows, decided by the kernel.

    ``generate(seed, n)`` draws ``n`` records of the train split (decisions, then branches, in turn, as the
    shipped generators balance them; record ``i`` depends only on ``(name, seed, i)``).
    """

    folder: Path = Path(".")
    data_path: Path = Path(".")
    heldout_share: float = 0.2
    split_seed: int = 0
    records: tuple[Record, ...] = ()
    sides: tuple[Split, ...] = ()

    def split_records(self, split: Split) -> list[Record]:
        """Every record of ``split`` (``train`` or ``heldout``), in CSV order."""
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        return [record for record, side in zip(self.records, self.sides) if side == split]


def read_domain_file(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """The folder and its ``domain.yaml`` (a folder or the file itself may be given), checked; one line per
    problem (``ValueError``)."""
    path = Path(folder)
    file = path if path.is_file() else path / "domain.yaml"
    if not file.is_file():
        raise ValueError(f"{file}: no domain.yaml (write one with: proofgym domain init NAME --data records.csv)")
    try:
        data = load_yaml(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, DocumentError) as exc:
        raise ValueError(f"{file}: cannot read: {exc}") from None
    problems = []
    if not isinstance(data, dict):
        raise ValueError(f"{file}: expected a mapping with kind: domain")
    if data.get("kind") != "domain":
        problems.append(f"{file}: kind: expected 'domain', got {data.get('kind')!r}")
    for key in sorted(set(data) - _DOMAIN_KEYS):
        problems.append(f"{file}: {key}: unknown key (expected one of {', '.join(sorted(_DOMAIN_KEYS))})")
    for key in ("name", "description", "rulebook", "data"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(f"{file}: {key}: expected a non-empty string")
    share = data.get("heldout_share", 0.2)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
        problems.append(f"{file}: heldout_share: expected a number at least 0 and below 1, got {share!r}")
    seed = data.get("split_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        problems.append(f"{file}: split_seed: expected an integer, got {seed!r}")
    if data.get("id_column") is not None and not isinstance(data["id_column"], str):
        problems.append(f"{file}: id_column: expected a column name")
    if problems:
        raise ValueError("\n".join(problems))
    return file.parent, data


def _resolve(folder: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else (folder / path).resolve()


def typed_records(data_path: Path, rulebook: Rulebook, id_column: str | None = None,
                  ) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Stream ``(row, id, facts)`` for each CSV row, its cells typed by the rulebook's facts; raises
    :class:`CsvDataError` (every problem, one line each) at the end when a cell did not fit."""
    reader = CsvReader(data_path)
    missing = [fact.name for fact in rulebook.facts if fact.name not in reader.columns]
    if missing:
        raise CsvDataError([f"{reader.source}: row 1: no column {name!r} (a fact of {rulebook.source})"
                            for name in missing])
    columns = [(fact.name, Column(fact.name, fact.type)) for fact in rulebook.facts]
    for record in reader:
        facts: dict[str, Any] = {}
        for name, column in columns:
            raw = record.cells[name]
            kind, value = classify(raw)
            typed = column.value(kind, value)
            if kind == "missing":
                reader.note(f"{reader.source}: row {record.row}, column {name!r}: missing value (empty cell)")
            elif kind == "text" and is_formula(raw):
                reader.note(f"{reader.source}: row {record.row}, column {name!r}: {raw.strip()[:40]!r} starts with "
                            f"{raw.strip()[0]!r}, as a spreadsheet formula does (formula injection); refused")
            elif typed is None:
                reader.note(f"{reader.source}: row {record.row}, column {name!r}: {raw.strip()[:40]!r} is not "
                            f"{_a(column.type or '')} (the rulebook's type of {name!r})")
            else:
                facts[name] = typed
        if len(facts) == len(columns) and not reader.problem_count:
            ident = record.cells[id_column].strip() if id_column else f"row{record.row}"
            yield record.row, ident, facts
    if reader.problem_count:
        raise CsvDataError(reader.problems, reader.problem_count)


def _a(kind: str) -> str:
    return {"integer": "an integer", "number": "a number", "boolean": "a boolean (true/false/yes/no)",
            "enum": "one of the enum's values", "string": "text"}.get(kind, kind)


def deciding_branch(report: Mapping[str, Any]) -> str | None:
    """The record's branch from a kernel report: its deciding rule, :data:`DEFAULT_BRANCH`, or ``None`` when the
    kernel certified no decision."""
    if report.get("status") != "decided" or not report.get("proof_checked"):
        return None
    rules = report.get("deciding_rules") or []
    return str(rules[0]) if rules else DEFAULT_BRANCH


def _undecided(source: str, row: int, report: Mapping[str, Any]) -> str:
    rejected = [f"{item.get('field')} ({'; '.join(item.get('reasons') or [])})"
                for item in report.get("rejected_facts") or ()]
    why = f"the fact gate refused {', '.join(rejected)}" if rejected else f"status {report.get('status')}"
    return f"{source}: row {row}: the rulebook certifies no decision: {why}"


@dataclass(frozen=True)
class _Opened:
    """A domain folder's files, read and checked: what loading and exporting share."""

    name: str
    folder: Path
    rulebook: Rulebook
    data_path: Path
    id_column: str | None
    spec: DomainSpec
    decisions: dict[str, str]  # branch -> decision
    heldout_share: float
    split_seed: int

    def decided(self) -> Iterator[tuple[str, dict[str, Any], str]]:
        """Stream ``(id, facts, branch)`` of every record, the kernel deciding each; :class:`CsvDataError` at the
        end for bad cells and records the kernel certifies no decision for (one line each)."""
        kernel = RuleKernel(self.rulebook)
        problems: list[str] = []
        count = rows = 0
        for row, ident, facts in typed_records(self.data_path, self.rulebook, self.id_column):
            rows += 1
            branch = deciding_branch(kernel.query(facts))
            if branch is None:
                count += 1
                if len(problems) < 1000:
                    problems.append(_undecided(str(self.data_path), row, kernel.query(facts)))
                continue
            if not count:
                yield ident, facts, branch
        if count:
            raise CsvDataError(problems, count)
        if not rows:
            raise CsvDataError([f"{self.data_path}: no record rows below the header"])


def _open(path: str | Path) -> _Opened:
    from proofgym.rules import load_rulebook

    folder, config = read_domain_file(path)
    rulebook = load_rulebook(_resolve(folder, config["rulebook"]))
    decisions = {rule.name: rule.decision for rule in rulebook.decision_rules}
    if rulebook.default_decision is not None:
        decisions[DEFAULT_BRANCH] = rulebook.default_decision
    spec = DomainSpec(
        name=config["name"],
        description=config["description"],
        decisions=rulebook.decisions,
        facts={fact.name: f"{fact.type}, {fact.description or fact.name.replace('_', ' ')}"
               for fact in rulebook.facts},
    )
    return _Opened(config["name"], folder, rulebook, _resolve(folder, config["data"]), config.get("id_column"),
                   spec, decisions, float(config.get("heldout_share", 0.2)), int(config.get("split_seed", 0)))


def load_domain(path: str | Path, *, register: bool = True) -> FolderDomain:
    """Read a domain folder (or its ``domain.yaml``): every record typed by the rulebook's facts and decided by
    the kernel, split into train and held-out; registered under its name (``get_domain`` finds it) unless
    ``register`` is false. Loading the same folder again returns the registered domain. The records are held in
    memory; :func:`export_dataset` streams a file of any size instead."""
    folder, config = read_domain_file(path)
    name = config["name"]
    rulebook_path = _resolve(folder, config["rulebook"])
    if register and name in DOMAINS:
        known = DOMAINS.get(name)
        if isinstance(known, FolderDomain) and known.rulebook_path == rulebook_path:
            return known
        raise ValueError(f"{folder / 'domain.yaml'}: name: a domain {name!r} is already registered "
                         f"(from {known.rulebook_path}); give this one another name")
    opened = _open(folder)
    records = [Record(id=ident, facts=facts, branch=branch) for ident, facts, branch in opened.decided()]
    plan = SplitPlan(opened.heldout_share, opened.split_seed)
    keys = [near_key(record.facts) for record in records]
    for record, key in zip(records, keys):
        plan.add(record.branch, key)
    sides = tuple(plan.side(record.branch, key) for record, key in zip(records, keys))
    present = {branch: opened.decisions[branch] for branch in dict.fromkeys(r.branch for r in records)}
    train = [record for record, side in zip(records, sides) if side == "train"]
    domain = FolderDomain(
        name=name, rulebook_path=rulebook_path, spec=opened.spec, generate=_Generator(name, train, present),
        render=_render, branches=present, folder=folder, data_path=opened.data_path,
        heldout_share=plan.heldout_share, split_seed=plan.seed, records=tuple(records), sides=sides,
    )
    if register:
        DOMAINS.register(name, domain, origin=str(folder))
    return domain


@dataclass
class DatasetCounts:
    """What :func:`export_dataset` wrote: records per split, per branch (deciding rule) and split, and per
    decision."""

    splits: dict[str, int]
    branches: dict[str, dict[str, int]]
    decisions: dict[str, int]


def export_dataset(path: str | Path, out: str | Path | None = None, *, chat: bool = False) -> DatasetCounts:
    """Stream a domain folder's records into ``out/train.jsonl`` and ``out/heldout.jsonl`` (rows of
    :func:`~proofgym.domains.build_example`: ``id``, ``prompt``, ``gold``, ``source_facts``, ``branch``), in bounded
    memory whatever the CSV's size: one pass decides every record (the kernel runs once per record; two bytes
    are kept per record, its branch) and plans the split, a second writes the rows. ``out=None`` writes nothing
    (the counts only: what ``domain init`` prints)."""
    import array

    from proofgym.domains._messages import build_prompt_messages, build_prompt_text

    opened = _open(path)
    names = list(opened.decisions)
    index = {branch: i for i, branch in enumerate(names)}
    branch_of = array.array("H")
    plan = SplitPlan(opened.heldout_share, opened.split_seed)
    for _, facts, branch in opened.decided():
        branch_of.append(index[branch])
        plan.add(branch, near_key(facts))
    counts: dict[str, dict[str, int]] = {}
    files = {}
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        files = {side: (folder / f"{side}.jsonl").open("w", encoding="utf-8") for side in ("train", "heldout")}
    try:
        records = typed_records(opened.data_path, opened.rulebook, opened.id_column)
        for position, (_, ident, facts) in enumerate(records):
            branch = names[branch_of[position]]
            side = plan.side(branch, near_key(facts))
            per_branch = counts.setdefault(branch, {"train": 0, "heldout": 0})
            per_branch[side] += 1
            if files:
                record = Record(id=ident, facts=facts, branch=branch)
                text = _render(record)
                prompt: Any = build_prompt_messages(opened.spec, text) if chat else \
                    build_prompt_text(opened.spec, text)
                row = {"id": ident, "prompt": prompt, "gold": opened.decisions[branch], "source_facts": facts,
                       "branch": branch}
                files[side].write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        for handle in files.values():
            handle.close()
    decisions: Counter[str] = Counter()
    for branch, sides in counts.items():
        decisions[opened.decisions[branch]] += sides["train"] + sides["heldout"]
    splits = {side: sum(sides[side] for sides in counts.values()) for side in ("train", "heldout")}
    return DatasetCounts(splits, counts, dict(decisions.most_common()))


class _Generator:
    """``generate(seed, n)`` over the train records: record ``i`` targets decision ``i mod D``, then that
    decision's branches in turn, and is drawn from that branch's records by ``(name, seed, i)``."""

    def __init__(self, name: str, train: list[Record], branches: Mapping[str, str]) -> None:
        self.name = name
        self._by_branch: dict[str, list[Record]] = {}
        for record in train:
            self._by_branch.setdefault(record.branch, []).append(record)
        by_decision: dict[str, list[str]] = {}
        for branch, decision in branches.items():
            if branch in self._by_branch:
                by_decision.setdefault(decision, []).append(branch)
        self._cycles = list(by_decision.values())

    def __call__(self, seed: int, n: int) -> list[Record]:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        if not self._cycles:
            raise ValueError(f"domain {self.name!r} has no train records")
        out = []
        for i in range(n):
            targets = self._cycles[i % len(self._cycles)]
            branch = targets[(i // len(self._cycles)) % len(targets)]
            out.append(random.Random(f"{self.name}:{seed}:{i}").choice(self._by_branch[branch]))
        return out


def _render(record: Record) -> str:
    lines = [f"Record {record.id}."]
    for name, value in record.facts.items():
        shown = json.dumps(value) if isinstance(value, bool) else str(value)
        lines.append(f"- {name.replace('_', ' ')}: {shown}")
    return "\n".join(lines)


# ---- init ----

@dataclass
class InitSummary:
    """What ``domain init`` found and wrote."""

    folder: Path
    schema: InferredSchema
    facts: list[str]
    unused_columns: list[str]
    fact_types: dict[str, str]
    decisions: dict[str, int]
    branches: dict[str, int]
    train: int
    heldout: int


def merge_rulebook(data: dict[str, Any], schema: InferredSchema, source: str) -> tuple[dict[str, Any], list[str]]:
    """The user's rulebook with the inferred schema filled in where it leaves a fact untyped; one problem line
    per fact the CSV lacks or whose type conflicts with its column."""
    merged = dict(data)
    problems: list[str] = []
    facts = data.get("facts")
    if not facts:
        merged["facts"] = {column.name: column.fact_decl() for column in schema.facts}
        return merged, problems
    if not isinstance(facts, dict):
        return merged, problems  # the kernel's validation names it
    out: dict[str, Any] = {}
    for name, decl in facts.items():
        decl = dict(decl) if isinstance(decl, dict) else {}
        column = schema.column(str(name))
        if column is None:
            problems.append(f"{source}: facts.{name}: the CSV {schema.source} has no column {name!r}")
        elif column.type is None and decl.get("type") != "string":
            problems.append(f"{source}: facts.{name}: the CSV column {name!r} cannot be typed ({column.flag})")
        elif "type" not in decl:
            inferred = column.fact_decl()
            decl = {**inferred, **decl}
        else:
            conflict = _conflict(str(decl["type"]), decl, column)
            if conflict:
                problems.append(f"{source}: facts.{name}: type {decl['type']!r}, but the CSV column {conflict}")
        if column is not None and not decl.get("description"):
            decl["description"] = column.description
        out[str(name)] = decl
    merged["facts"] = out
    return merged, problems


def _conflict(declared: str, decl: Mapping[str, Any], column: Column) -> str:
    kind = column.type
    if kind is None:
        return ""  # a string fact over free text
    fits = {"integer": ("integer",), "number": ("integer", "number"),
            "boolean": ("boolean",) + (("integer",) if column.min == 0 and column.max == 1 else ()),
            "enum": ("enum",), "string": ("enum",)}
    if kind not in fits.get(declared, ()):
        return f"holds {kind} values" + (f" ({', '.join(column.values[:5])})" if column.values else "")
    if declared == "enum":
        extra = sorted(set(column.values) - set(decl.get("values") or ()))
        if extra:
            return f"holds values the enum lacks: {', '.join(extra[:5])}"
    return ""


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


def init_domain(name: str, data: str | Path, *, rules: str | Path, description: str | None = None,
                out: str | Path | None = None, id_column: str | None = None, heldout_share: float = 0.2,
                split_seed: int = 0, force: bool = False) -> InitSummary:
    """Write the domain folder ``out`` (default ``./NAME``) from the CSV ``data`` and the rulebook ``rules``.

    Raises :class:`CsvDataError` (bad data, one line each), :class:`RulebookError` (the rulebook, one line each)
    or ``ValueError`` (one line); nothing is left written when it fails.
    """
    data_path = Path(data).resolve()
    folder = Path(out if out is not None else name).resolve()
    if (folder / "domain.yaml").exists() and not force:
        raise ValueError(f"{folder}: already holds a domain.yaml (give --force to overwrite it)")
    if id_column is None and data_path.is_file():
        header = CsvReader(data_path).columns
        id_column = next((column for column in header if column.lower() == "id" or column.lower().endswith("_id")),
                         None)
    schema = infer_schema(data_path, id_column=id_column)
    schema.raise_for_problems()
    rules_path = Path(rules)
    try:
        rules_data = load_yaml(rules_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, DocumentError) as exc:
        raise RulebookError([f"{rules_path}: cannot read the rulebook: {exc}"]) from None
    if not isinstance(rules_data, dict):
        raise RulebookError([f"{rules_path}: expected a mapping (a rulebook)"])
    merged, problems = merge_rulebook(rules_data, schema, str(rules_path))
    if problems:
        raise RulebookError(problems)
    if "name" not in rules_data:
        merged = {"name": name, **merged}
    rulebook = parse_rulebook(merged, source=str(rules_path))  # RulebookError: one line per problem
    text = description if description is not None else rulebook.description
    if not text.strip():
        raise ValueError(f"{rules_path}: the rulebook has no description; give --describe rules.txt (the "
                         f"plain-English policy the model reads)")
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        rulebook_file = folder / "rulebook.yaml"
        if merged == rules_data:
            shutil.copyfile(rules_path, rulebook_file)
        else:
            rulebook_file.write_text(f"# Written by proofgym domain init from {rules_path.name} and "
                                     f"{data_path.name}; review it.\n" + _yaml(merged), encoding="utf-8")
        written.append(rulebook_file)
        try:
            relative = os.path.relpath(data_path, folder)
        except ValueError:  # another drive
            relative = str(data_path)
        config: dict[str, Any] = {"kind": "domain", "name": name, "description": " ".join(text.split()),
                  "rulebook": "rulebook.yaml", "data": relative}
        if id_column:
            config["id_column"] = id_column
        config.update({"heldout_share": heldout_share, "split_seed": split_seed})
        (folder / "domain.yaml").write_text(_yaml(config), encoding="utf-8")
        written.append(folder / "domain.yaml")
        (folder / "schema.md").write_text(_schema_md(schema, rulebook), encoding="utf-8")
        written.append(folder / "schema.md")
        counts = export_dataset(folder)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    facts = [fact.name for fact in rulebook.facts]
    branches = {branch: sides["train"] + sides["heldout"] for branch, sides in counts.branches.items()}
    return InitSummary(
        folder=folder, schema=schema, facts=facts,
        unused_columns=[column.name for column in schema.columns if column.name not in facts
                        and column.name != id_column],
        fact_types={fact.name: fact.type for fact in rulebook.facts},
        decisions=counts.decisions,
        branches=dict(sorted(branches.items(), key=lambda item: -item[1])),
        train=counts.splits["train"], heldout=counts.splits["heldout"],
    )


def _schema_md(schema: InferredSchema, rulebook: Rulebook) -> str:
    lines = [f"# The schema of {Path(schema.source).name}", "",
             f"{schema.rows} record rows read. Review the types and ranges below; they are in rulebook.yaml's "
             f"`facts:` (a range is the data's: widen it there where the policy allows more).", "",
             "| column | inferred | in the rulebook |", "|---|---|---|"]
    for column in schema.columns:
        if column.type is None:
            inferred = f"not typed: {column.flag}"
        elif column.type in ("integer", "number"):
            inferred = f"{column.type}, {column.min} .. {column.max}"
        elif column.type == "enum":
            inferred = f"enum: {', '.join(column.values)}"
        else:
            inferred = column.type
        fact = rulebook.fact(column.name)
        lines.append(f"| {column.name} | {inferred} | {fact.type if fact else 'not a fact'} |")
    return "\n".join(lines) + "\n"
