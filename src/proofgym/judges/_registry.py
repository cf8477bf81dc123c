"""Named rubric sets: an environment's rubrics, registered under a name (``verilog``) through the
``proofgym.rubrics`` entry-point group, so that a command can say ``--rubric verilog`` instead of a file."""

from __future__ import annotations

from pathlib import Path

from proofgym.core import ConfigError, Registry
from proofgym.judges._rubric import RubricSet, load_rubric_set

RUBRIC_SETS: Registry[RubricSet] = Registry("rubric set", "proofgym.rubrics", check=RubricSet)


def resolve_rubric_set(spec: str | Path) -> RubricSet:
    """A registered rubric set's name, or a rubric file (``.yaml`` / ``.yml`` / ``.toml`` / ``.json``)."""
    if isinstance(spec, str) and spec in RUBRIC_SETS:
        return RUBRIC_SETS.get(spec)
    path = Path(spec)
    if not path.suffix and not path.exists():
        raise ConfigError(f"rubric {str(spec)!r}: neither a registered rubric set (one of {RUBRIC_SETS.names()}) "
                          "nor a rubric file")
    return load_rubric_set(path)
