"""The documentation site's generated pages: the config reference from the pydantic models of each config kind,
and the CLI reference from the command line itself. Never typed by hand, so they cannot drift from the code.

mkdocs runs this file as a hook (``hooks:`` in mkdocs.yml): a page holding the line ``<!-- generated: config -->``
or ``<!-- generated: cli -->`` gets the reference in its place. The tests import :func:`config_reference` and
:func:`cli_reference` to check every key and every command is there.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
import typing
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

MARKERS = {"<!-- generated: config -->": "config_reference", "<!-- generated: cli -->": "cli_reference",
           "<!-- generated: measurements -->": "measurements"}
ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def _kinds() -> list[tuple[str, str, type[BaseModel]]]:
    from proofgym.config import RunConfig
    from proofgym.evaluation import EvalConfig
    from proofgym.training.rl import RLConfig

    return [("run", "YAML (or TOML / JSON): `proofgym score`, `serve-reward`, `train` (TRL path)", RunConfig),
            ("eval", "TOML: `proofgym eval`", EvalConfig),
            ("rl", "TOML: `proofgym train` (multi-step RL over a task app)", RLConfig)]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X``, ``X | None``, ``list[X]``, ``dict[str, X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_models_in(arg))
    return found


def _type_name(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "none"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table" if annotation.model_config.get("extra") != "allow" else "table (any keys)"
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(f"`{value!r}`" for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in typing.get_args(annotation))
    if origin in (list, tuple, set, frozenset):
        args = [arg for arg in typing.get_args(annotation) if arg is not Ellipsis]
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        args = typing.get_args(annotation)
        return f"table of {_type_name(args[1])}" if len(args) == 2 else "table"
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    name = getattr(annotation, "__name__", None) or str(annotation)
    return {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "Path": "path",
            "Any": "any"}.get(name, name)


def _default(field: Any) -> str:
    if field.default is not PydanticUndefined:
        value = field.default
        if isinstance(value, BaseModel):
            return "(its defaults)"
        return "" if value is None else f"`{value!r}`"
    if field.default_factory is not None:
        try:
            value = field.default_factory()
        except TypeError:
            return ""
        return "(its defaults)" if isinstance(value, BaseModel) else f"`{value!r}`"
    return "**required**"


def _markdown(docstring: str) -> str:
    """A reST-flavoured docstring as Markdown: ``code`` -> `code`, :class:`~a.b.C` -> `C`."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", docstring)
    return text.replace("``", "`")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _sections(model: type[BaseModel], path: str) -> Iterator[tuple[str, type[BaseModel]]]:
    """``(dotted path, model)`` of ``model`` and every section nested in it, depth first, each model once."""
    seen: set[type[BaseModel]] = set()

    def walk(current: type[BaseModel], where: str) -> Iterator[tuple[str, type[BaseModel]]]:
        if current in seen:
            return
        seen.add(current)
        yield where, current
        for name, field in current.model_fields.items():
            key = field.alias or name
            for nested in _models_in(field.annotation):
                yield from walk(nested, f"{where}.{key}" if where else key)

    yield from walk(model, path)


def _section(title: str, section: type[BaseModel]) -> list[str]:
    out = [f"### {title}", ""]
    doc = section.__dict__.get("__doc__")  # its own: inspect.getdoc would fall back to BaseModel's
    if doc:
        out += [_markdown(inspect.cleandoc(doc)), ""]
    if section.model_config.get("extra") == "forbid":
        out += ["Unknown keys are refused, naming the key.", ""]
    out += ["| key | type | default | |", "| --- | --- | --- | --- |"]
    for name, field in section.model_fields.items():
        key = field.alias or name
        note = _cell(_markdown(field.description or ""))
        out.append(f"| `{key}` | {_cell(_type_name(field.annotation))} | {_cell(_default(field))} | {note} |")
    return out + [""]


def config_reference() -> str:
    """Markdown: for each config kind, every section (its docstring) and every key (type, default); then the
    options of every registered verifier kind (the keys beside ``kind`` in a run config's ``verifier:``)."""
    from proofgym.verifiers import verifier_kind, verifier_kinds

    out: list[str] = []
    for kind, read_by, model in _kinds():
        out += [f"## `kind = \"{kind}\"`", "", f"{read_by}. Model: `{model.__module__}.{model.__name__}`.", ""]
        for where, section in _sections(model, ""):
            out += _section(f"{kind}: `[{where}]`" if where else f"{kind}: top level", section)
    out += ["## Verifier kinds", "", "A run config's `verifier:` names a registered kind; its other keys are that "
            "kind's options, validated strictly.", ""]
    for name in verifier_kinds():
        out += _section(f"verifier: `kind = \"{name}\"`", verifier_kind(name).options)
    return "\n".join(out)


def _click_commands() -> Iterator[tuple[str, Any, Any]]:
    import typer

    from proofgym.cli import app

    root = typer.main.get_command(app)
    context = type(root.make_context("proofgym", [], resilient_parsing=True))  # typer's own click

    def walk(command: Any, name: str, parent: Any) -> Iterator[tuple[str, Any, Any]]:
        ctx = context(command, info_name=name, parent=parent)
        yield name, command, ctx
        if hasattr(command, "list_commands"):
            for sub in sorted(command.list_commands(ctx)):
                yield from walk(command.get_command(ctx, sub), sub, ctx)

    yield from walk(root, "proofgym", None)


def cli_reference() -> str:
    """Markdown: every command's ``--help``, as the command line prints it."""
    out: list[str] = []
    for _, command, ctx in _click_commands():
        path = ctx.command_path
        depth = path.count(" ")
        out += [f"{'#' * min(2 + depth, 4)} `{path}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


def command_paths() -> list[str]:
    """Every command's full name (``proofgym rules validate``), for the tests."""
    return [ctx.command_path for _, _, ctx in _click_commands()]


def benchmark_scripts() -> dict[str, str]:
    """Every benchmark script's name (``kernel_throughput``) and the first paragraph of its docstring."""
    scripts = {}
    for path in sorted(BENCHMARKS.glob("*.py")):
        if path.name.startswith("_"):
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        scripts[path.stem] = " ".join(doc.split("\n\n")[0].split())
    return scripts


RESULTS_MARKER = re.compile(r"^<!-- results: (?P<names>[\w\- ]+) -->$", re.M)


def _recorded(results: Path) -> dict[str, Path]:
    return {path.stem: path for path in sorted(results.glob("*.md"))} if results.is_dir() else {}


def _script_of(name: str) -> str:
    """The script that writes results ``name``: a script with variants records ``<script>-<variant>.md`` for each."""
    return name.split("-", 1)[0]


def _result_section(name: str, path: Path | None, scripts: dict[str, str]) -> list[str]:
    """One results file as written, with what its script measures; or, not recorded yet, the command that would."""
    script = _script_of(name)
    about = [f"What it measures: {_markdown(scripts[script])}", ""] if script in scripts else []
    if path is None:
        return [f"### `{name}`", "", f"*Not recorded yet in this tree: `python benchmarks/{script}.py` writes it.*",
                "", *about]
    return [path.read_text(encoding="utf-8").rstrip(), "", *about]


def placed_results(markdown: str) -> set[str]:
    """The results names a page places itself (``<!-- results: demo_seeds train_seeds-trl -->``)."""
    return {name for match in RESULTS_MARKER.finditer(markdown) for name in match["names"].split()}


def results_sections(markdown: str, results: Path | None = None) -> str:
    """``markdown`` with each ``<!-- results: NAME ... -->`` line replaced by those results files."""
    recorded = _recorded(results or BENCHMARKS / "results")
    scripts = benchmark_scripts()
    return RESULTS_MARKER.sub(lambda match: "\n".join(
        line for name in match["names"].split() for line in _result_section(name, recorded.get(name), scripts)),
        markdown)


def measurements(results: Path | None = None, placed: frozenset[str] | set[str] = frozenset()) -> str:
    """Markdown: each results file the benchmark scripts wrote (``benchmarks/results/<name>.md``, written by
    ``benchmarks/_record.py``: command, date, machine, load, wall and CPU seconds, what the script printed) that the
    page has not ``placed`` under a topic of its own, then the scripts with no results file yet, each with what it
    measures and the command that writes one."""
    results = results or BENCHMARKS / "results"
    scripts = benchmark_scripts()
    recorded = _recorded(results)
    out = ["## Other results recorded by the scripts", ""]
    rest = {name: path for name, path in recorded.items() if name not in placed}
    if not rest:
        out += ["None.", ""]
    for name, path in rest.items():
        out += _result_section(name, path, scripts)
    missing = [name for name in scripts if name not in {_script_of(key) for key in recorded}]
    if missing:
        out += ["## Not recorded yet", "",
                "These scripts have written no results file in this tree yet (each takes long, or needs what this "
                "machine lacks). Run one to record it: `python benchmarks/<name>.py` writes "
                "`benchmarks/results/<name>.md`.", "",
                "| script | what it measures |", "| --- | --- |"]
        out += [f"| `benchmarks/{name}.py` | {_cell(_markdown(scripts[name]))} |" for name in missing]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:  # mkdocs hook
    placed = placed_results(markdown)
    markdown = results_sections(markdown)
    for marker, function in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, measurements(placed=placed) if function == "measurements"
                                        else globals()[function]())
    return markdown

