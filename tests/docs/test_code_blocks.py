"""Every code block of the documentation site runs or is checked, so no snippet rots.

Each fenced block in ``docs/**/*.md`` is one test, by its language:
- ``python``: run as a script in a fresh interpreter from the repository root; it must exit 0.
- ``bash`` / ``sh``: run with ``bash -eo pipefail`` from the repository root, ``.venv/bin`` first on PATH.
- ``yaml`` / ``toml`` / ``json``: parsed; a config (it declares ``kind``) is loaded with ``proofgym.load_config``,
  a rulebook (it has ``decision_rules``) with ``proofgym.rules.load_rulebook``.
- anything else (``text``, no language: output, diagrams) is shown, not run.

A block that includes a file (``--8<-- "examples/x.py"`` or a section of one, ``"examples/x.sh:train"``, through
pymdownx.snippets) is not run twice: the file must exist (and the section be marked in it), and be one of the
examples tests/examples runs as a whole.

A block that is the README's two commands (``make demo``, ``make test``: set-up and the demo, and the suite, which
cannot run inside itself) is checked, not run: it must equal the README's first block word for word, the Makefile
must have both targets, and ``.ci/run`` must call ``make test``.

A block that cannot run here (it trains for minutes, needs a GPU or a server started elsewhere) says so on the
line before its fence: ``<!-- docs-test: skip: <the reason> -->``; the reason is required, and the skipped
blocks are reported by name, not hidden.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)``` *$", re.M | re.S)
SKIP = re.compile(r"<!-- docs-test: skip: (?P<reason>\S.*?) -->\s*$")
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"$')
RUN = {"python", "bash", "sh"}
CHECK = {"yaml", "yml", "toml", "json"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    body: str
    skip: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            skip = SKIP.search(before)
            body = "\n".join(row[len(match["indent"]):] for row in match["body"].splitlines())
            found.append(Block(page, line, match["lang"].lower(), body, skip["reason"] if skip else None))
    return found


ALL = blocks()
CHECKED = [block for block in ALL if block.lang in RUN | CHECK]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    return env


@pytest.mark.parametrize("block", CHECKED, ids=[block.name for block in CHECKED])
def test_the_block_runs_or_parses(block, tmp_path):
    if block.skip:
        pytest.skip(f"{block.name}: {block.skip}")
    if re.search(r"^\s*make (demo|test)\b", block.body, re.M):
        assert block.body.strip() == _two_commands(), f"{block.name}: differs from the README's two commands"
        _check_two_commands()
        return
    included = [SNIPPET.match(row.strip()) for row in block.body.strip().splitlines()]
    if included and all(included):
        _check_included(block, [match for match in included if match])
        return
    if block.lang == "python":
        script = tmp_path / "block.py"
        script.write_text(block.body)
        done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env=_environment())
        assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{done.stderr[-3000:]}"
    elif block.lang in ("bash", "sh"):
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", block.body], cwd=ROOT, capture_output=True,
                              text=True, timeout=600, env=_environment())
        output = done.stdout[-2000:] + done.stderr[-2000:]
        assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{output}"
    else:
        _check_data(block, tmp_path)


def _two_commands() -> str:
    """The README's first fenced block: the two commands."""
    first = FENCE.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert first, "README.md has no fenced block"
    return first["body"].strip()


def _check_two_commands() -> None:
    commands = [row.split("#", 1)[0].split() for row in _two_commands().splitlines()]
    assert commands == [["make", "demo"], ["make", "test"]], f"README's first block is not the two commands: {commands}"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("demo", "test"):
        assert re.search(rf"^{target}:", makefile, re.M), f"Makefile has no target {target}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\s*make test\b", ci, re.M), ".ci/run does not call make test"


def _check_included(block: Block, includes: list[re.Match[str]]) -> None:
    import ast

    source = ast.parse((ROOT / "tests" / "examples" / "test_examples.py").read_text(encoding="utf-8"))
    [examples] = [node.value for node in source.body if isinstance(node, ast.Assign)
                  and any(getattr(target, "id", None) == "EXAMPLES" for target in node.targets)]
    EXAMPLES = ast.literal_eval(examples)
    for match in includes:
        path = ROOT / match["path"]
        assert path.is_file(), f"{block.name}: includes {match['path']}, which does not exist"
        assert match["path"] in EXAMPLES, f"{block.name}: {match['path']} is not run by tests/examples"
        if match["section"]:
            text = path.read_text(encoding="utf-8")
            for edge in ("start", "end"):
                assert f"--8<-- [{edge}:{match['section']}]" in text, f"{block.name}: no section {match['section']}"


def _check_data(block: Block, tmp_path: Path) -> None:
    import tomllib

    if block.lang == "json":
        json.loads(block.body)
        return
    data = tomllib.loads(block.body) if block.lang == "toml" else yaml.safe_load(block.body)
    suffix = ".toml" if block.lang == "toml" else ".yaml"
    if isinstance(data, dict) and "kind" in data:
        import proofgym

        path = tmp_path / f"config{suffix}"
        path.write_text(block.body)
        proofgym.load_config(path)
    elif isinstance(data, dict) and "decision_rules" in data:
        from proofgym.rules import load_rulebook

        path = tmp_path / f"rulebook{suffix}"
        path.write_text(block.body)
        load_rulebook(path)


def test_every_skipped_block_gives_its_reason():
    for page in sorted(DOCS.rglob("*.md")):
        for number, row in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if "docs-test:" in row:
                assert SKIP.search(row), f"{page.relative_to(ROOT)}:{number}: write <!-- docs-test: skip: REASON -->"


def test_blocks_are_found():
    assert any(block.lang == "yaml" for block in ALL) and any(block.lang == "bash" for block in ALL)
