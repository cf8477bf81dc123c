"""A copy of proofgym's source to plant an import in, for tests that show a source check would catch it."""

from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "proofgym"


def copy_source(tmp_path: Path) -> Path:
    """``src/proofgym`` copied (its ``.py`` files) to ``tmp_path / "proofgym"``, which is returned."""
    copy = tmp_path / "proofgym"
    for path in SOURCE.rglob("*.py"):
        target = copy / path.relative_to(SOURCE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return copy
