"""The example domain of ``examples/byod``, made as a new user makes it: the example's script writes the CSV,
``proofgym domain init`` writes the folder. Imported as ``from _byod import byod_domain, forget_domain``
(pytest puts ``tests/`` on ``sys.path``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.domains import DOMAINS
from proofgym.envs import ENVIRONMENTS

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "byod"
NAME = "housing"


def byod_domain(folder: Path, *, rows: int = 300) -> Path:
    """Write ``folder/records.csv`` with the example's script and ``folder/housing`` with ``proofgym domain init``
    (the example's rules and policy text); returns the domain folder."""
    csv = folder / "records.csv"
    subprocess.run([sys.executable, str(EXAMPLE / "make_data.py"), "--rows", str(rows), "--out", str(csv)],
                   check=True, capture_output=True)
    out = folder / NAME
    result = CliRunner().invoke(app, ["domain", "init", NAME, "--data", str(csv), "--rules",
                                      str(EXAMPLE / "rules.yaml"), "--describe", str(EXAMPLE / "rules.txt"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def forget_domain(name: str = NAME) -> None:
    """Unregister the domain and its environment that loading the folder registered (the registries are the
    process's: other tests list the shipped domains)."""
    DOMAINS.unregister(name)
    ENVIRONMENTS.unregister(name)
