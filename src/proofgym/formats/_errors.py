"""The error a YAML, JSON or TOML document is refused with: where it went wrong, and why."""

from __future__ import annotations

from typing import Any, Sequence

from proofgym.formats._path import render_path


class DocumentError(ValueError):
    """A document does not parse, or parses to something proofgym refuses (a key given twice, an alias,
    nesting past the limit, an integer past the limit).

    ``str()`` is one line, ``line N, column M: key.path: reason``, each part only when known; the caller
    prefixes the file (or option) the document came from. ``line`` and ``column`` count from 1; ``path``
    holds the keys and indices leading to the value at fault.
    """

    def __init__(self, reason: str, *, line: int | None = None, column: int | None = None,
                 path: Sequence[Any] = ()) -> None:
        self.reason = " ".join(reason.split())
        self.line = line
        self.column = column
        self.path = tuple(path)
        where = ", ".join(f"{name} {at}" for name, at in (("line", line), ("column", column)) if at is not None)
        super().__init__(": ".join(part for part in (where, render_path(self.path), self.reason) if part))

    def in_jsonl_line(self) -> DocumentError:
        """This error as found in one line of a JSON Lines file, which the file's line number places: the
        error's own line is dropped (its column kept when on that line)."""
        return DocumentError(self.reason, column=self.column if self.line == 1 else None, path=self.path)

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (self.reason, self.line, self.column, self.path)


def _rebuild(reason: str, line: int | None, column: int | None, path: tuple[Any, ...]) -> DocumentError:
    return DocumentError(reason, line=line, column=column, path=path)
