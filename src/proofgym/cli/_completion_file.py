"""Reading a JSONL file of completions to score, one validated record per line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from proofgym.config import ConfigError, config_problems, problem_line
from proofgym.formats import DocumentError, load_json

Text = str | list[dict[str, Any]]


class CompletionRecord(BaseModel):
    """One line of a completions file: the completion, its prompt, and the reference to score against."""

    model_config = ConfigDict(extra="forbid")

    completion: Text
    prompt: Text | None = None
    gold: str | None = None
    source_facts: dict[str, Any] | None = None
    id: str | int | None = None
    note: str | None = None

    def reference(self) -> dict[str, Any]:
        return {"gold": self.gold, "source_facts": self.source_facts}


def read_completions(path: str | Path) -> list[CompletionRecord]:
    """Read and validate every line, strictly (``"id": true`` is not an id); errors name the file, the line and
    the key. Each line is read as every proofgym file is: a key given twice, nesting past 64 levels and
    integers past 1000 digits are refused."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: completions file not found")
    records = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = load_json(line.rstrip("\r\n"))
            except DocumentError as exc:
                raise ConfigError(f"{path}:{number}: {exc.in_jsonl_line()}") from None
            try:
                records.append(CompletionRecord.model_validate(data, strict=True))
            except ValidationError as exc:
                raise ConfigError(problem_line(f"{path}:{number}", config_problems(exc.errors())[0])) from None
    if not records:
        raise ConfigError(f"{path}: no completions found (expected one JSON object per line)")
    return records

