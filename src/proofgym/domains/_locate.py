"""Which domain a config value names: a registered domain by name, or a domain folder by path.

A value is a path when it is absolute or holds a path separator, or starts with ``.`` or ``~``
(``./my_domain``, ``../data/benefits``, ``/srv/domains/loan_servicing``); anything else is a name (``loan``), so a
folder in the working directory never shadows a shipped domain of the same name.
"""

from __future__ import annotations

import os
from pathlib import Path

from proofgym.domains._domain import Domain, get_domain


def is_domain_path(value: str | os.PathLike[str]) -> bool:
    """True when ``value`` names a domain folder by path rather than a registered domain by name."""
    if isinstance(value, os.PathLike):
        return True
    return (value.startswith((".", "~")) or "/" in value or os.sep in value
            or (os.altsep is not None and os.altsep in value) or Path(value).is_absolute())


def resolve_domain(value: str | os.PathLike[str], *, relative_to: str | os.PathLike[str] | None = None) -> Domain:
    """The domain ``value`` names: a domain folder (loaded, and so registered under its name) when
    :func:`is_domain_path`, resolved against ``relative_to`` when relative; else the registered domain of that name.

    Raises ``KeyError`` for an unknown name (the message lists the known names and says how to give a folder) and
    ``ValueError`` (one line per problem, naming the folder) for a folder that cannot be loaded.
    """
    if not is_domain_path(value):
        name = str(value)
        try:
            return get_domain(name)
        except KeyError as exc:
            raise KeyError(f"{exc.args[0]} (a domain folder is given as a path: ./{name})") from None
    return load_domain_folder(domain_folder(value, relative_to=relative_to))


def domain_folder(value: str | os.PathLike[str], *, relative_to: str | os.PathLike[str] | None = None) -> Path:
    """The absolute folder a domain path names (``~`` expanded; a relative path against ``relative_to``, else the
    working directory)."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = Path(relative_to or ".").expanduser() / path
    return path.resolve()


def load_domain_folder(folder: Path) -> Domain:
    """The domain of ``folder`` (written by ``proofgym domain init``), through ``load_domain``;
    ``ValueError`` naming the folder when there is no domain there."""
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such domain folder (expected a folder holding domain.yaml, written by "
                         f"'proofgym domain init')")
    from proofgym.domains._folder import load_domain

    return load_domain(folder)
