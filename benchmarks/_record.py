"""Where the benchmarks write what they measured: ``benchmarks/results/<name>.md``, which the documentation site's
measurements page includes (``<!-- generated: measurements -->``, scripts/docs_reference.py).

A script runs its ``main`` through :func:`record`::

    if __name__ == "__main__":
        record("kernel_throughput", main)

Everything the script prints still goes to the terminal; when ``main`` returns (or exits with status 0), the file
is written with the date, the command, the machine (processor model, cores, load average at the start and the
end), the run's wall and CPU seconds (this process and the children it waited for) and what it printed: the
figures, as the script printed them, never retyped. A failed run writes nothing, nor does ``--help``. ``PROOFGYM_BENCH_RESULTS=DIR``
writes into another folder; ``PROOFGYM_BENCH_RESULTS=off`` writes nothing.
"""

from __future__ import annotations

import datetime
import io
import os
import resource
import shlex
import sys
import time
from pathlib import Path
from typing import Callable, TextIO

try:
    from _machine import processor
except ImportError:  # imported as benchmarks._record
    from benchmarks._machine import processor

RESULTS = Path(__file__).resolve().parent / "results"


class _Tee(io.TextIOBase):
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.captured = io.StringIO()

    def write(self, text: str) -> int:
        self.captured.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _load() -> str:
    try:
        return " / ".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def results_dir() -> Path | None:
    """The folder results go to, or ``None`` when recording is off."""
    where = os.environ.get("PROOFGYM_BENCH_RESULTS", "")
    if where.lower() == "off":
        return None
    return Path(where) if where else RESULTS


def _fence(text: str) -> str:
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    return "`" * max(3, longest + 1)


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return runs + ([current] if current else [])


def render(name: str, command: str, printed: str, *, started: datetime.datetime, wall_s: float, cpu_s: float,
           load_start: str, load_end: str) -> str:
    """The results file's Markdown (a section of the measurements page)."""
    fence = _fence(printed)
    rows = [
        f"### `{name}`",
        "",
        "| | |",
        "| --- | --- |",
        f"| command | `{command}` |",
        f"| date | {started.strftime('%Y-%m-%d %H:%M UTC')} |",
        f"| processor | {processor()}, {os.cpu_count()} cores (this process could use "
        f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}) |",
        f"| load average (1 / 5 / 15 min) | {load_start} at the start, {load_end} at the end |",
        f"| this run | {wall_s:.1f} s wall, {cpu_s:.1f} CPU-s (the script and the processes it waited for) |",
        "",
        f"{fence}text",
        printed.rstrip("\n"),
        fence,
        "",
    ]
    return "\n".join(rows)


def record(name: str, main: Callable[[], object]) -> None:
    """Run ``main``, echoing what it prints, then write ``<results>/<name>.md`` (see the module's docstring)."""
    target = results_dir()
    asked_help = any(arg in ("-h", "--help") for arg in sys.argv[1:])
    if target is None or asked_help or os.environ.get("PROOFGYM_BENCH_RECORDING"):  # off, help, or a child process
        main()
        return
    os.environ["PROOFGYM_BENCH_RECORDING"] = name
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start, wall0, cpu0 = _load(), time.perf_counter(), _cpu_seconds()
    tee = _Tee(sys.stdout)
    sys.stdout = tee  # type: ignore[assignment]
    try:
        main()
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            raise
    finally:
        sys.stdout = tee.stream
    command = "python " + " ".join(shlex.quote(part) for part in [_script_path(), *sys.argv[1:]])
    text = render(name, command, tee.captured.getvalue(), started=started, wall_s=time.perf_counter() - wall0,
                  cpu_s=_cpu_seconds() - cpu0, load_start=load_start, load_end=_load())
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    print(f"recorded in {path}", file=sys.stderr)


def _script_path() -> str:
    script = Path(sys.argv[0]).resolve()
    try:
        return str(script.relative_to(Path(__file__).resolve().parents[1]))
    except ValueError:
        return sys.argv[0]
