"""The demo's task: grant-eligibility records, a short prompt, a short answer, and its reward path.

The prompt states the record's four facts in a short line (without the long system instructions a
tiny model cannot read, and with numbers written plainly, as the answer writes them)::

    Grant application: age 17, annual income 28000, resident, no active grant.

The answer is one decision block that restates the record's facts and then decides::

    <decision>{"facts": {"age": 17, "annual_income": 28000, "resident": true,
               "has_active_grant": false}, "classification": "deny"}</decision>

The facts are what certification needs: the rule kernel derives the decision from the facts the
answer asserts, and the shaper credits a certificate only when every asserted fact matches the
record's source facts. So "certified" means what it says: the kernel proved the claimed decision
from the record's own facts. Facts come first so that the decision token is generated after them.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from proofgym.config import RunConfig, parse_run_config, read_config_file
from proofgym.domains import GRANT_INCOME_THRESHOLD, Domain, Record, get_domain, gold_decision
from proofgym.policies import DEMO_DOMAIN_NAME as DOMAIN_NAME
from proofgym.policies import demo_completion, demo_prompt

# The rule branches of the domain, in the order the demo reports them.
BRANCH_LABELS = {
    "minor": "minors",
    "income_over_threshold": "income over threshold",
    "non_resident": "non-residents",
    "active_grant": "active grants",
    "permit": "permits",
}

# The reward path: the domain's default run config, with the demo's own name, tighter parser limits, a runtime
# sized for one process scoring 128 completions a step, and graded_from 'verifier' with a zero weight (the short
# answer has no reasoning to grade, so the ceiling is format + certified + correct + grounded).
DEMO_OVERRIDES: dict[str, Any] = {
    "name": "demo_grant_eligibility",
    "parser": {"limits": {"max_completion_chars": 2_000, "max_json_chars": 1_000, "max_facts": 8}},
    "runtime": {"max_concurrency": 4, "timeout_s": 10, "batch_size": 256, "retries": 0, "cache_size": 200_000,
                "cache_max_mb": 2048},
    "reward": {"weights": {"graded": 0.0}, "graded_from": "verifier"},
}


def _merged(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` applied key by key, into nested mappings."""
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = (_merged(base[key], value) if isinstance(value, Mapping) and isinstance(base.get(key), Mapping)
                       else value)
    return merged


DEMO_RUN_CONFIG: dict[str, Any] = _merged(read_config_file(get_domain(DOMAIN_NAME).run_config_path), DEMO_OVERRIDES)


def demo_run_config() -> RunConfig:
    """The demo's reward path: JSON decision block with required facts -> embedded kernel -> shaper."""
    return parse_run_config(json.loads(json.dumps(DEMO_RUN_CONFIG)))


# A held-out set takes one in HELDOUT_EVERY of each cell's distinct cases.
HELDOUT_EVERY = 8


def demo_rows(seed: int, n: int, *, heldout: bool = False,
              exclude: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """``n`` dataset rows ``{id, prompt, gold, source_facts, branch, cell}`` from the domain's generator.

    ``gold`` comes from the rule kernel; ``cell`` names the decision rules that fire on the record
    (``deny_minor+deny_non_resident``): a finer split than ``branch``, which names only the first
    deny reason, so a curriculum can tell a minor denied for being a minor alone (the hard case) from
    one who is also a non-resident. A permitted record whose income is exactly the threshold (30,000;
    30,001 is denied) is a cell of its own, ``permit_eligible@income_at_threshold``: the boundary the
    policy has to read digit by digit, and a rare case, so the curriculum keeps its accuracy apart from
    the easy rows of the same decision and over-samples it while it is answered wrong.

    ``heldout``: rows for a held-out set, each case (fact set) once, and of each cell's cases in the order
    they are drawn, the first and then every :data:`HELDOUT_EVERY`-th. So a cell with few cases keeps most of
    them for training (pass the held-out rows as another call's ``exclude``). Drawn as training rows are, a
    held-out set swallows such a cell whole: adults of 18-20 with an income of exactly 30,000 are three
    cases, drawn 25 times among 500 held-out permits, and training never saw one of them.
    Records whose facts equal those of a row in ``exclude`` are skipped. The generator is drawn further
    until ``n`` rows are found.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    domain = get_domain(DOMAIN_NAME)
    excluded = {_facts_key(row["source_facts"]) for row in exclude}
    drawn = n
    for _ in range(32):
        # A record never changes when n grows, so drawing more only appends new records.
        rows = [_row(record) for record in domain.generate(seed, drawn) if _facts_key(record.facts) not in excluded]
        kept = _heldout_cases(rows) if heldout else rows
        if len(kept) >= n:
            return kept[:n]
        drawn = max(drawn + 16, int(drawn * min(16.0, 1.2 * n / max(len(kept), 1))))
    raise ValueError(f"could not draw {n} rows for seed {seed} outside the {len(excluded)} excluded cases")


def _heldout_cases(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    kept, seen = [], set()
    per_cell: dict[str, int] = {}
    for row in rows:
        key = _facts_key(row["source_facts"])
        if key in seen:
            continue
        seen.add(key)
        index = per_cell.get(row["cell"], 0)
        per_cell[row["cell"]] = index + 1
        if index % HELDOUT_EVERY == 0:
            kept.append(row)
    return kept


def contrast_rows(rows: Iterable[Mapping[str, Any]], *, seed: int,
                  exclude: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Minimal pairs for the income comparison, labelled by the rule kernel: for each row whose income has
    four digits, the same record with a fifth digit appended (``income * 10 + d``, ``d`` drawn with
    ``seed``). Its gold, branch and cell are the kernel's for the new facts, and records whose facts equal
    a row of ``exclude`` (the held-out set) are skipped.

    Why: the generator draws a third of the permitted incomes below 10,000 but few denied incomes of
    40,000-99,999 (about 3 % of the denials for income each leading digit), so 8,263 and 82,630 differ
    only in length, and a policy that has seen many ``4xxx`` permits and few ``4xxxx`` denials reads the
    length last (the demo's policies that stalled below the goal were wrong on 42,001 and 44,090). The
    pair shows both lengths with the same digits.
    """
    rng = random.Random(f"contrast-{seed}")
    excluded = {_facts_key(row["source_facts"]) for row in exclude}
    twins: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in rows:
        income = row["source_facts"]["annual_income"]
        if not isinstance(income, int) or not 1_000 <= income <= 9_999:
            continue
        facts = {**row["source_facts"], "annual_income": income * 10 + rng.randrange(10)}
        key = _facts_key(facts)
        if key in excluded or key in seen:
            continue
        seen.add(key)
        twins.append(_row(Record(id=f"{row['id']}-contrast", facts=facts, branch=_branch(facts))))
    return twins


def _row(record: Record) -> dict[str, Any]:
    domain = get_domain(DOMAIN_NAME)
    return {
        "id": record.id,
        "prompt": demo_prompt(record),
        "gold": gold_decision(domain, record.facts),
        "source_facts": dict(record.facts),
        "branch": record.branch,
        "cell": _cell(record.facts),
    }


def _branch(facts: Mapping[str, Any]) -> str:
    """The domain's branch label for ``facts``: the first deny reason whose rule fires, else ``permit``."""
    fired = set(_fired_decision_rules(facts).split("+"))
    return next((branch for branch in BRANCH_LABELS if f"deny_{branch}" in fired), "permit")


def _cell(facts: Mapping[str, Any]) -> str:
    cell = _fired_decision_rules(facts)
    if not cell.startswith("deny") and facts.get("annual_income") == GRANT_INCOME_THRESHOLD:
        cell += "@income_at_threshold"
    return cell


def _fired_decision_rules(facts: Mapping[str, Any]) -> str:
    report = _kernel().query(dict(facts))
    fired = sorted(rule["rule_name"] for rule in report["symbolic_trace"]["rules"]
                   if rule["rule_type"] == "decision" and rule["fired"])
    return "+".join(fired)


@functools.lru_cache(maxsize=1)
def _kernel() -> Any:
    from proofgym.rules import RuleKernel, load_rulebook

    return RuleKernel(load_rulebook(get_domain(DOMAIN_NAME).rulebook_path))


def _facts_key(facts: Mapping[str, Any]) -> str:
    return json.dumps(dict(facts), sort_keys=True)


class DemoTask:
    """What the demo trains on: a domain's training and held-out rows, its prompt, its reward path and the rule
    branches it reports. The default is the grant-eligibility task above; :class:`FolderDemoTask` is any domain
    folder's (``proofgym demo --domain ./my_domain``)."""

    #: The domain's name (traces' environment name).
    domain_name: str = DOMAIN_NAME
    #: How the live table names the rules ("GRPO on the grant rules").
    title: str = "grant"

    @property
    def branch_labels(self) -> Mapping[str, str]:
        """The rule branches the goal reads, in the order the table reports them, with their labels."""
        return BRANCH_LABELS

    @property
    def run_config_data(self) -> dict[str, Any]:
        """The reward path, as run config data."""
        return DEMO_RUN_CONFIG

    def run_config(self) -> RunConfig:
        return demo_run_config()

    @property
    def decisions(self) -> list[str]:
        return list(self.run_config_data["parser"]["decisions"])

    def heldout_rows(self, n: int) -> list[dict[str, Any]]:
        from proofgym.training._demo import HELDOUT_SEED

        return demo_rows(HELDOUT_SEED, n, heldout=True)

    def train_rows(self, seed: int, n: int, *, contrast: bool, exclude: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows = demo_rows(seed, n, exclude=exclude)
        if contrast:
            rows += contrast_rows(rows, seed=seed, exclude=exclude)
        return rows

    def tokenizer_corpus(self) -> list[str] | None:
        """The text the tiny model's tokenizer is trained on (``None``: the tiny model's own, this task's)."""
        return None


class FolderDemoTask(DemoTask):
    """The demo on a domain folder: a compact one-line prompt of the record's facts, the answer the grant demo's
    (the facts restated, then the decision), gold from the rule kernel, rows of the folder's train split and the
    held-out rows of its held-out split (stratified by deciding rule by ``load_domain``), branch = deciding rule.

    ``show_derived`` (off by default): the prompt also states the facts the rulebook derives from the record (e.g. an
    income per person, a monthly income divided by a household size), as the kernel computes them; the answer still
    restates the input facts only. Measured on an earlier examples/byod whose rules read that income per person
    (seed 0, 300 steps): the same 74.5 % held-out either way, both per-person income branches at 0 %, and the
    certified share fell from 74.5 % to 54.9 % with them (the longer prompt's numbers leak into the restated facts).
    ``vary``: fill the training rows with :meth:`variants`."""

    def __init__(self, domain: Domain, *, vary: bool = True, show_derived: bool = False) -> None:
        self.domain = domain
        self.vary = vary
        self.show_derived = show_derived
        self.domain_name = domain.name
        self.title = domain.name
        self._train = [self._row(record) for record in _unique(_split(domain, "train"))]
        self._heldout = [self._row(record) for record in _unique(_split(domain, "heldout"))]
        if not self._train or not self._heldout:
            raise ValueError(f"domain {domain.name!r}: the demo needs records in both splits (train "
                             f"{len(self._train)}, held-out {len(self._heldout)})")
        longest = max(len(demo_completion(d, row["source_facts"])) for row in self._train
                      for d in domain.spec.decisions)
        overrides = _merged(DEMO_OVERRIDES, {
            "name": f"demo_{domain.name}",
            "parser": {"limits": {"max_completion_chars": max(2_000, 4 * longest),
                                  "max_json_chars": max(1_000, 2 * longest),
                                  "max_facts": max(8, len(domain.spec.facts))}},
        })
        from proofgym.domains import folder_run_config

        self._run_config = _merged(folder_run_config(domain), overrides)
        seen = dict.fromkeys([*domain.branches, *(row["branch"] for row in self._heldout)])
        present = {row["branch"] for row in self._heldout}
        self._labels = {branch: branch for branch in seen if branch in present}

    @property
    def branch_labels(self) -> Mapping[str, str]:
        return self._labels

    @property
    def missing_branches(self) -> list[str]:
        """The domain's deciding rules with no held-out row (the goal cannot read them)."""
        return [branch for branch in self.domain.branches if branch not in self._labels]

    @property
    def run_config_data(self) -> dict[str, Any]:
        return self._run_config

    def run_config(self) -> RunConfig:
        return parse_run_config(json.loads(json.dumps(self._run_config)))

    def heldout_rows(self, n: int) -> list[dict[str, Any]]:
        return _stratified(self._heldout, n)

    def train_rows(self, seed: int, n: int, *, contrast: bool, exclude: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The train split's rows (those whose facts are not a row of ``exclude``), and, when they are fewer than
        ``n``, variants of them up to ``n`` (:meth:`variants`)."""
        excluded = {_facts_key(row["source_facts"]) for row in exclude}
        rows = [row for row in self._train if _facts_key(row["source_facts"]) not in excluded]
        if len(rows) < n and self.vary:
            rows += self.variants(rows, n - len(rows), seed=seed, exclude=exclude)
        return _stratified(rows, n)

    def variants(self, rows: list[dict[str, Any]], n: int, *, seed: int,
                 exclude: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
        """``n`` new training rows, each a train row with one or two of its facts drawn afresh from what the train
        split holds (a number uniformly between the split's lowest and highest value of that fact, written with
        as many decimals; a boolean flipped; any other value one the split has), labelled by the rule kernel.

        Why: a domain folder's train split is what the user has (a few hundred records), where the grant demo trains
        on 8,000; a varied fact that crosses a rule's threshold gives a minimal pair, as the grant demo's contrast
        rows do. Rows are drawn from each branch in turn; a variant whose facts are a train row's, another
        variant's, or near a row of ``exclude`` (the held-out set: :func:`proofgym.domains.near_key`) is
        skipped, and so is one the kernel certifies no decision for (a value the fact gate refuses)."""
        from proofgym.domains import near_key

        rng = random.Random(f"variants-{self.domain.name}-{seed}")
        pools: dict[str, list[Any]] = {}
        for row in rows:
            for key, value in row["source_facts"].items():
                pools.setdefault(key, []).append(value)
        held = {near_key(row["source_facts"]) for row in exclude if isinstance(row.get("source_facts"), Mapping)}
        seen = {_facts_key(row["source_facts"]) for row in rows}
        by_branch: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_branch.setdefault(row["branch"], []).append(row)
        queues = list(by_branch.values())
        names = list(pools)
        out: list[dict[str, Any]] = []
        for attempt in range(20 * n):
            if len(out) >= n or not queues:
                break
            source = rng.choice(queues[attempt % len(queues)])
            facts = dict(source["source_facts"])
            for name in rng.sample(names, k=min(len(names), rng.choice((1, 1, 2)))):
                facts[name] = _fresh(rng, facts[name], pools[name])
            key = _facts_key(facts)
            if key in seen or near_key(facts) in held:
                continue
            seen.add(key)
            report = _folder_kernel(self.domain.rulebook_path).query(dict(facts))
            if report.get("status") != "decided" or not report.get("proof_checked"):
                continue
            deciding = report.get("deciding_rules") or []
            branch = str(deciding[0]) if deciding else _DEFAULT_BRANCH
            out.append({"id": f"{source['id']}-variant{len(out)}", "prompt": self._prompt(facts, report),
                        "gold": str(report["decision"]), "source_facts": facts, "branch": branch,
                        "cell": "+".join(sorted(rule["rule_name"] for rule in report["symbolic_trace"]["rules"]
                                                if rule["rule_type"] == "decision" and rule["fired"]))})
        return out

    def tokenizer_corpus(self) -> list[str]:
        decisions = self.domain.spec.decisions
        texts: list[str] = []
        for i, row in enumerate([*self._train, *self._heldout][:4_000]):
            texts.append(row["prompt"])
            texts.append(demo_completion(decisions[i % len(decisions)], row["source_facts"]))
        return texts

    def _prompt(self, facts: Mapping[str, Any], report: Mapping[str, Any] | None = None) -> str:
        derived = None
        if self.show_derived:
            report = report or _folder_kernel(self.domain.rulebook_path).query(dict(facts))
            derived = {key: value for key, value in report["proof"]["facts"].items() if key not in facts}
        return compact_prompt(self.domain.name, facts, derived)

    def _row(self, record: Record) -> dict[str, Any]:
        return {
            "id": record.id,
            "prompt": self._prompt(record.facts),
            "gold": gold_decision(self.domain, record.facts),
            "source_facts": dict(record.facts),
            "branch": record.branch,
            "cell": _fired(self.domain, record.facts),
        }


def compact_prompt(name: str, facts: Mapping[str, Any], derived: Mapping[str, Any] | None = None) -> str:
    """A domain folder's one-line prompt: ``"<name>: fact value, fact value, ..."`` (values as the answer writes
    them: numbers plainly, ``true`` / ``false``, text as it is), then ``"; derived: fact value, ..."`` for the
    ``derived`` facts when there are any."""
    text = f"{name}: " + ", ".join(f"{key} {_plain(value)}" for key, value in facts.items())
    if derived:
        text += "; derived: " + ", ".join(f"{key} {_plain(value)}" for key, value in derived.items())
    return text + "."


# The branch of a record no decision rule decided (the default decision), as load_domain names it.
_DEFAULT_BRANCH = "(default)"


def _fresh(rng: random.Random, value: Any, pool: list[Any]) -> Any:
    """A new value for a fact whose train values are ``pool`` (see :meth:`FolderDemoTask.variants`)."""
    if isinstance(value, bool):
        return not value
    numbers = [v for v in pool if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if isinstance(value, int) and numbers:
        return rng.randint(int(min(numbers)), int(max(numbers)))
    if isinstance(value, float) and numbers:
        decimals = max((len(repr(v).split(".")[1]) for v in numbers if isinstance(v, float) and "." in repr(v)
                        and "e" not in repr(v)), default=2)
        return round(rng.uniform(float(min(numbers)), float(max(numbers))), min(decimals, 6))
    return rng.choice(pool)


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _split(domain: Domain, split: str) -> list[Record]:
    records = getattr(domain, "split_records", None)
    if records is None:
        raise ValueError(f"domain {domain.name!r} has no train / held-out splits (a domain folder has: "
                         f"'proofgym domain init')")
    return list(records(split))


def _unique(records: Iterable[Record]) -> list[Record]:
    seen: set[str] = set()
    kept = []
    for record in records:
        key = _facts_key(record.facts)
        if key not in seen:
            seen.add(key)
            kept.append(record)
    return kept


def _stratified(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``rows`` when there are at most ``n``, else ``n`` of them drawn branch by branch in turn (each branch's
    rows in order), so that a cap keeps every branch."""
    if len(rows) <= n:
        return list(rows)
    by_branch: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_branch.setdefault(row["branch"], []).append(row)
    queues = list(by_branch.values())
    kept: list[dict[str, Any]] = []
    index = 0
    while len(kept) < n:
        for queue in queues:
            if index < len(queue) and len(kept) < n:
                kept.append(queue[index])
        index += 1
    return kept


def _fired(domain: Domain, facts: Mapping[str, Any]) -> str:
    """The decision rules that fire on ``facts``, sorted and joined by ``+`` (the curriculum's ``cell``)."""
    report = _folder_kernel(domain.rulebook_path).query(dict(facts))
    return "+".join(sorted(rule["rule_name"] for rule in report["symbolic_trace"]["rules"]
                           if rule["rule_type"] == "decision" and rule["fired"]))


@functools.lru_cache(maxsize=4)
def _folder_kernel(rulebook_path: Path) -> Any:
    from proofgym.rules import RuleKernel, load_rulebook

    return RuleKernel(load_rulebook(rulebook_path))
