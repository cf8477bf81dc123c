"""The documentation site builds offline with ``mkdocs build --strict`` (a broken link, a missing page, an unresolved
reference fails), and its generated references hold every config key and every command the code has."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                                reason="needs mkdocs (pip install 'proofgym[docs]'; make setup installs it)")


def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-4000:]
    config_page = (tmp_path / "site" / "reference" / "config" / "index.html").read_text()
    assert "max_concurrency" in config_page and "group_size" in config_page


def test_the_config_reference_names_every_key_of_every_kind():
    import docs_reference

    page = docs_reference.config_reference()
    for _, _, model in docs_reference._kinds():
        for where, section in docs_reference._sections(model, ""):
            for name, field in section.model_fields.items():
                assert f"| `{field.alias or name}` |" in page, (where, name)
    from proofgym.verifiers import verifier_kinds

    for kind in verifier_kinds():
        assert f'verifier: `kind = "{kind}"`' in page


def test_the_cli_reference_holds_every_command_and_its_help():
    import docs_reference

    page = docs_reference.cli_reference()
    paths = docs_reference.command_paths()
    assert {"proofgym eval", "proofgym rules validate", "proofgym serve-model"} <= set(paths)
    for path in paths:
        assert f"`{path}`" in page
    # what `proofgym eval --help` prints is in the page as printed
    printed = subprocess.run([str(Path(sys.executable).parent / "proofgym"), "eval", "--help"], capture_output=True,
                             text=True, timeout=120, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"}).stdout
    assert "--config <path>" in printed
    assert "--config <path>" in page
