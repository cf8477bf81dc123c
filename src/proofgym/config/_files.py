"""Reading config files (YAML / TOML / JSON) into plain data, with errors that name the file, and no secrets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Literal

from proofgym.core import ConfigError
from proofgym.core import is_secret_name, redact_url
from proofgym.formats import DocumentError, load_json, load_toml, load_yaml

Syntax = Literal["yaml", "toml", "json"]
_LOADERS: dict[str, Callable[[str], Any]] = {"yaml": load_yaml, "toml": load_toml, "json": load_json}
_SUFFIXES: dict[str, Syntax] = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}

# Values that are credentials whatever key holds them (a header list, a URL, a free-form extra_body).
_SECRET_VALUES = (
    (re.compile(r"\bbearer\s+[A-Za-z0-9._~+/=-]{16,}", re.IGNORECASE), "a bearer token"),
    (re.compile(r"^\s*basic\s+[A-Za-z0-9+/]{8,}={0,2}\s*$", re.IGNORECASE), "a basic-auth header value"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "an API key (sk-...)"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), "a GitHub token"),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), "a Hugging Face token"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "a Slack token"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), "a Google API key"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "a private key"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\."), "a JSON web token"),
)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Parse a ``.yaml``/``.yml``/``.toml``/``.json`` file into a mapping; reject secrets found in it.

    Every refusal of :mod:`proofgym.formats` applies (a key given twice, YAML aliases, nesting past
    :data:`~proofgym.formats.MAX_DEPTH`, integers past :data:`~proofgym.formats.MAX_INT_DIGITS` digits);
    errors are one line each, naming the file, the line or key, and what was expected.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ConfigError(f"{path}: expected a .yaml, .yml, .toml or .json config file, got {suffix or 'no suffix'!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    return parse_config_text(text, syntax=_SUFFIXES[suffix], source=str(path))


def parse_config_text(text: str, *, syntax: Syntax, source: str) -> dict[str, Any]:
    """Parse config text (what a file or a command-line option holds) into a mapping, as
    :func:`read_config_file` does; ``source`` starts every error (a file name, ``--env-config``)."""
    try:
        data = _LOADERS[syntax](text)
    except DocumentError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    secret = _find_secret(data)
    if secret:
        where, what = secret
        raise ConfigError(
            f"{source}: {where}: {what}: secrets must not be stored in config files; "
            "set them in the environment (e.g. AMBERTRACE_API_KEY, ENVIRONMENT_API_KEY) instead"
        )
    return data


def find_secret_key(data: Any, prefix: str = "") -> str | None:
    """The dotted path of the first key that looks like a credential, or of the first value that is one
    (a bearer token, an ``sk-`` key, a URL with a password or a credential query parameter); ``None``
    when there is none. ``*_env`` keys name an environment variable and are allowed."""
    found = _find_secret(data, prefix)
    return found[0] if found else None


def _find_secret(data: Any, prefix: str = "") -> tuple[str, str] | None:
    """``(path, what it holds)`` of the first credential in ``data``; never the credential itself."""
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(key, str) and is_secret_name(key) and not key.lower().endswith("_env"):
                return path, "the key names a credential"
            found = _find_secret(value, path)
            if found:
                return found
    elif isinstance(data, list):
        for index, item in enumerate(data):
            found = _find_secret(item, f"{prefix}[{index}]")
            if found:
                return found
    elif isinstance(data, str):
        what = _secret_value(data)
        if what:
            return prefix or "<top level>", f"the value is {what}"
    return None


def _secret_value(text: str) -> str | None:
    if "://" in text and redact_url(text) != text:
        return "a URL with credentials (user:password@ or a credential query parameter)"
    for pattern, what in _SECRET_VALUES:
        if pattern.search(text):
            return what
    return None
