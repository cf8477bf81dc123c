"""Math problems: a question and its gold answer; the shipped set, JSON Lines files, and reasoning-gym generation."""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proofgym.core import ConfigError
from proofgym.formats import DocumentError, load_json

#: The reasoning-gym tasks the shipped problem set is generated from: answers that are exact numbers, fractions or
#: lists of roots, which an equivalence checker compares (not rounded-to-n-digits answers, whose reasoning-gym
#: scoring is by significant figures).
GENERATED_TASKS = ("basic_arithmetic", "chain_sum", "decimal_chain_sum", "fraction_simplification", "gcd", "lcm",
                   "products", "simple_equations", "gsm_symbolic", "polynomial_equations")
#: How many problems of each task the shipped set holds, and the seed it was generated with.
GENERATED_PER_TASK = 20
GENERATED_SEED = 19

_MAX_ID_CHARS = 200
_MAX_QUESTION_CHARS = 20_000
_MAX_ANSWER_CHARS = 1_000
_INSTALL_HINT = "pip install 'proofgym[math]' (reasoning-gym==0.1.25)"


@dataclass(frozen=True)
class MathProblem:
    """One problem: ``question`` (shown to the policy) and ``answer`` (the gold answer, never shown), as text that
    Math-Verify parses (``138/583``, ``\\frac{1}{2}``, ``-3.625, 0.0``). ``task`` names where it came from."""

    id: str
    question: str
    answer: str
    task: str = ""

    def __post_init__(self) -> None:
        for name, value, limit in (("id", self.id, _MAX_ID_CHARS), ("question", self.question, _MAX_QUESTION_CHARS),
                                   ("answer", self.answer, _MAX_ANSWER_CHARS)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"math problem {name} must be a non-empty string, got {value!r}")
            if len(value) > limit:
                raise ValueError(f"math problem {name} has {len(value)} characters, limit {limit}")
        if any(ch.isspace() for ch in self.id):
            raise ValueError(f"math problem id {self.id!r} must not contain whitespace")
        if not isinstance(self.task, str):
            raise ValueError(f"math problem task must be a string, got {type(self.task).__name__}")

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "question": self.question, "answer": self.answer, "task": self.task}


def load_problems(path: str | Path) -> dict[str, MathProblem]:
    """The problems of a JSON Lines file, by id: one object per line with ``id``, ``question``, ``answer`` and
    optionally ``task``. :class:`~proofgym.core.ConfigError` names the file, the line and the key at fault."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"{path}: math problem file not found")
    problems: dict[str, MathProblem] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = load_json(line.rstrip("\r\n"))
            except DocumentError as exc:
                raise ConfigError(f"{path}:{number}: {exc.in_jsonl_line()}") from None
            problem = _problem_from_row(row, f"{path}:{number}")
            if problem.id in problems:
                raise ConfigError(f"{path}:{number}: id: problem {problem.id!r} is given twice")
            problems[problem.id] = problem
    if not problems:
        raise ConfigError(f"{path}: the math problem file has no problems")
    return problems


def _problem_from_row(row: Any, where: str) -> MathProblem:
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where}: expected a JSON object with id, question and answer, got {type(row).__name__}")
    unknown = sorted(set(row) - {"id", "question", "answer", "task"})
    if unknown:
        raise ConfigError(f"{where}: {unknown[0]}: unknown key (expected id, question, answer, task)")
    for key in ("id", "question", "answer"):
        if not isinstance(row.get(key), str):
            raise ConfigError(f"{where}: {key}: expected a string, got {type(row.get(key)).__name__}")
    try:
        return MathProblem(row["id"], row["question"], row["answer"], row.get("task", "") or "")
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def write_problems(problems: Iterable[MathProblem], path: str | Path) -> Path:
    """Write ``problems`` as JSON Lines (what :func:`load_problems` reads); returns the path."""
    import json

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for problem in problems:
            out.write(json.dumps(problem.to_dict(), ensure_ascii=False) + "\n")
    return path


def builtin_math_problems() -> dict[str, MathProblem]:
    """The shipped problems (``proofgym/math/problems/builtin.jsonl``, made by :func:`generate_problems` with the
    defaults), by id."""
    return dict(_builtin())


@functools.lru_cache(maxsize=1)
def _builtin() -> tuple[tuple[str, MathProblem], ...]:
    path = Path(str(importlib.resources.files("proofgym.math") / "problems" / "builtin.jsonl"))
    return tuple(load_problems(path).items())


def resolve_problems(source: str) -> dict[str, MathProblem]:
    """``"builtin"`` or a JSON Lines file, as problems by id (what the ``problems`` option of the math parser and
    environment names)."""
    return builtin_math_problems() if source == "builtin" else load_problems(source)


def generate_problems(tasks: Sequence[str] = GENERATED_TASKS, *, per_task: int = GENERATED_PER_TASK,
                      seed: int = GENERATED_SEED) -> list[MathProblem]:
    """``per_task`` problems of each reasoning-gym task in ``tasks``, deterministically from ``seed`` (offline).

    Only entries whose gold answer reasoning-gym's own scorer gives 1.0 are kept. Needs the optional
    ``reasoning-gym`` package; ids are ``task-NNN``, ``NNN`` the entry's index in the task's dataset. Raises
    ``ImportError`` with the install command when it is absent, ``ValueError`` naming an unknown task.
    """
    try:
        import reasoning_gym
    except ImportError as exc:
        raise ImportError(f"generating math problems needs reasoning-gym: {_INSTALL_HINT}") from exc
    if per_task < 1:
        raise ValueError(f"per_task must be >= 1, got {per_task}")
    problems = []
    for task in tasks:
        try:
            dataset = reasoning_gym.create_dataset(task, size=2 * per_task, seed=seed)
        except Exception as exc:  # reasoning-gym raises its own kinds for an unknown name
            raise ValueError(f"reasoning-gym task {task!r}: {exc}") from None
        kept = 0
        for index in range(2 * per_task):
            entry = dataset[index]
            # An entry whose gold answer reasoning-gym's own scorer does not give 1.0 (gsm_symbolic's negative
            # answers) is a broken problem: left out.
            if dataset.score_answer(entry["answer"], entry) != 1.0:
                continue
            problems.append(MathProblem(f"{task}-{index:03d}", str(entry["question"]), str(entry["answer"]), task))
            kept += 1
            if kept == per_task:
                break
        if kept < per_task:
            raise ValueError(f"reasoning-gym task {task!r}: only {kept} of {2 * per_task} entries have a gold "
                             f"answer its own scorer accepts; {per_task} were asked for")
    return problems

