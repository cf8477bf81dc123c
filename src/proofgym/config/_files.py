"""Reading YAML / TOML config files into plain data, with errors that name the file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from proofgym.config._errors import ConfigError

# Keys that look like credentials. Secrets come from the environment only, so a config file can be
# shared, committed and logged; ``*_env`` keys name an environment variable and are allowed.
# "token" only as a word of the key (hf_token, access-token), not inside max_tokens or tokenizer.
_SECRET_KEY = re.compile(r"(api[_-]?key|(?:^|[_-])token(?:$|[_-])|secret|password|passwd|credential)", re.IGNORECASE)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Parse a ``.yaml``/``.yml``/``.toml`` file into a mapping; reject secrets found in it."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        else:
            raise ConfigError(f"{path}: expected a .yaml, .yml or .toml config file, got {suffix or 'no suffix'!r}")
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {suffix.lstrip('.').upper()}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    secret = find_secret_key(data)
    if secret:
        raise ConfigError(
            f"{path}: {secret}: secrets must not be stored in config files; "
            "set them in the environment (e.g. AMBERTRACE_API_KEY, ENVIRONMENT_API_KEY) instead"
        )
    return data


def find_secret_key(data: Any, prefix: str = "") -> str | None:
    """The dotted path of the first key that looks like a credential, or ``None``."""
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(key, str) and _SECRET_KEY.search(key) and not key.lower().endswith("_env"):
                return path
            found = find_secret_key(value, path)
            if found:
                return found
    elif isinstance(data, list):
        for index, item in enumerate(data):
            found = find_secret_key(item, f"{prefix}[{index}]")
            if found:
                return found
    return None
