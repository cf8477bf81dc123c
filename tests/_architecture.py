"""The layer table of docs/architecture.md, parsed: the one place proofgym's package layering is written down."""

from __future__ import annotations

import re

from _source_tree import SOURCE

ARCHITECTURE = SOURCE.parent.parent / "docs" / "architecture.md"


def documented_layers(text: str | None = None) -> list[tuple[str, ...]]:
    """The rows of the ``## Layers`` table, lowest first: ``[("core",), ("formats",), ("parsers", ...), ...]``."""
    text = ARCHITECTURE.read_text(encoding="utf-8") if text is None else text
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows: list[tuple[str, ...]] = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            if int(cells[0]) != len(rows):
                raise ValueError(f"{ARCHITECTURE.name}: layer {cells[0]} where {len(rows)} was expected")
            rows.append(tuple(re.findall(r"`([a-z_]+)`", cells[1])))
    return rows
