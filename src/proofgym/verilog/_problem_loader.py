"""Loading problems in the VerilogEval layout: ``ProbNNN_name_{prompt.txt,ref.sv,test.sv}``."""

from __future__ import annotations

import functools
import importlib.resources
import re
from pathlib import Path

from proofgym.verilog._problem import Problem

_SUFFIXES = {"spec": "_prompt.txt", "reference": "_ref.sv", "testbench": "_test.sv"}
_REF_HEADER = re.compile(r"\bmodule\s+RefModule\b")


def load_problem(prefix: str | Path, *, source: str = "verilogeval") -> Problem:
    """The problem whose files are ``{prefix}_prompt.txt``, ``{prefix}_ref.sv`` and ``{prefix}_test.sv``.

    Its id is the prefix's last component (``Prob001_zero``). Raises ``FileNotFoundError`` naming the
    first missing file.
    """
    prefix = Path(prefix)
    texts: dict[str, str] = {}
    for field, suffix in _SUFFIXES.items():
        path = prefix.parent / f"{prefix.name}{suffix}"
        if not path.is_file():
            raise FileNotFoundError(f"problem {str(prefix)!r}: missing {path} (a problem is {prefix.name}"
                                    f"{{{', '.join(_SUFFIXES.values())}}})")
        texts[field] = path.read_text(encoding="utf-8")
    return Problem(id=prefix.name, source=source, **texts)


def load_verilogeval(directory: str | Path) -> list[Problem]:
    """Every problem of a VerilogEval spec-to-RTL folder, in id order.

    ``directory`` is the folder of ``*_prompt.txt`` files or a dataset root holding
    ``dataset_spec-to-rtl/``. Raises ``FileNotFoundError`` when it holds no problem.
    """
    directory = Path(directory)
    if (directory / "dataset_spec-to-rtl").is_dir():
        directory = directory / "dataset_spec-to-rtl"
    prefixes = _prefixes(directory)
    if not prefixes:
        raise FileNotFoundError(f"{directory}: no VerilogEval problems (no *{_SUFFIXES['spec']} files)")
    return [load_problem(directory / prefix) for prefix in prefixes]


def builtin_problems() -> dict[str, Problem]:
    """The problems shipped in ``proofgym/verilog/problems/``, by id (empty when none are installed)."""
    return dict(_builtin())


@functools.lru_cache(maxsize=1)
def _builtin() -> tuple[tuple[str, Problem], ...]:
    # Package data lives on the file system in every install this project supports (wheel, editable).
    folder = Path(str(importlib.resources.files("proofgym.verilog") / "problems"))
    if not folder.is_dir():
        return ()
    return tuple((prefix, load_problem(folder / prefix, source="builtin")) for prefix in _prefixes(folder))


def _prefixes(directory: Path) -> list[str]:
    return sorted(path.name[: -len(_SUFFIXES["spec"])] for path in directory.glob("*" + _SUFFIXES["spec"]))


def get_problem(id_or_prefix: str | Path) -> Problem:
    """A built-in problem by id (``Prob001_zero``), else the problem at a path prefix (``DIR/Prob001_zero``).

    Raises ``KeyError`` with what was looked for when it is neither.
    """
    builtin = builtin_problems()
    key = str(id_or_prefix)
    if key in builtin:
        return builtin[key]
    prefix = Path(key)
    if (prefix.parent / f"{prefix.name}{_SUFFIXES['spec']}").is_file():
        return load_problem(prefix)
    examples = ", ".join(sorted(builtin)[:3]) or "none installed"
    raise KeyError(f"unknown Verilog problem {key!r}: not a built-in problem id ({len(builtin)} built in: "
                   f"{examples}{', ...' if len(builtin) > 3 else ''}) nor a path prefix with a "
                   f"{key}{_SUFFIXES['spec']} file")


def interface(problem: Problem) -> str:
    """The reference's module header (parameters and ports) with the module renamed ``TopModule``.

    This is what an agent may see of the reference: ``module TopModule (...);``. Raises
    ``ValueError`` when the reference has no ``module RefModule`` header.
    """
    return _interface(problem.id, problem.reference)


def header_end(text: str, start: int) -> int | None:
    """The position after the ``;`` that ends a module header whose name ends at ``start`` (the port list's
    parentheses skipped); ``None`` when the header does not end."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == ";" and depth == 0:
            return index + 1
    return None


@functools.lru_cache(maxsize=4096)
def _interface(problem_id: str, text: str) -> str:
    # Cached: every environment instance checks every problem it may serve when it is built.
    found = _REF_HEADER.search(text)
    if found is None:
        raise ValueError(f"problem {problem_id!r}: the reference has no 'module RefModule' header")
    end = header_end(text, found.end())
    if end is None:
        raise ValueError(f"problem {problem_id!r}: the reference's 'module RefModule' header has no end")
    return "module TopModule" + text[found.end() : end]
