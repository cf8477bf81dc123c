"""The app's environment: its base config, a request's config merged over it, and validation of the result."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Collection, Mapping

from pydantic import ValidationError

from proofgym.config import ConfigError
from proofgym.core import describe_validation_error
from proofgym.envs import Environment, make
from proofgym.serve._errors import RequestError

_CONFIG_LOC = ("env", "config")


def merge_env_config(base: Mapping[str, Any], override: Mapping[str, Any],
                     allowed: Collection[str] = ()) -> dict[str, Any]:
    """``base`` with the keys of ``override`` that ``allowed`` lists replaced.

    Any other key of ``override`` must repeat ``base``'s value; otherwise :class:`RequestError`
    names it. The operator's config (the sandbox, limits, files on the server) is not the client's
    to change unless the operator says so; ``allowed`` may contain ``"*"`` (every key).
    """
    merged = dict(base)
    for key, value in override.items():
        if "*" in allowed or key in allowed:
            merged[key] = value
        elif key not in base or not same_json(base[key], value):
            permitted = "none" if not allowed else ", ".join(sorted(allowed))
            raise RequestError((*_CONFIG_LOC, key), "this app does not let requests set this environment config "
                                                    f"key (keys a request may set: {permitted})", value)
    return merged


def same_json(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same JSON value (JSON Schema's ``const``): unlike ``==``, ``true`` is not
    ``1``, while ``1`` and ``1.0`` are the same number."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_json(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


class EnvProvider:
    """Builds the app's environment: ``config_for`` merges and validates a request's config (the
    result is cached, so a config seen before costs a dict lookup), ``make`` builds one instance.

    Raises ``ValueError`` naming the key when ``base_config`` is invalid.
    """

    def __init__(self, env_name: str, base_config: Mapping[str, Any] | None = None, *,
                 overridable: Collection[str] = (), cache_size: int = 256) -> None:
        self.env_name = env_name
        self.base_config = dict(base_config or {})
        self.overridable = frozenset(overridable)
        self._valid: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        try:
            env = self.make(self.base_config)
        except ValidationError as exc:
            problems = "; ".join(describe_validation_error(e) for e in exc.errors())
            raise ValueError(f"invalid config for environment {env_name!r}: {problems}") from None
        with env:
            self.tools = env.tools

    def make(self, config: Mapping[str, Any]) -> Environment:
        """A fresh environment instance with ``config``."""
        return make(self.env_name, **config)

    def known_config(self, request_config: Mapping[str, Any]) -> dict[str, Any] | None:
        """The config a request's rollout runs with when it was validated before, else ``None`` (cheap).

        Raises :class:`RequestError` for a key the request may not set.
        """
        key = self._key(merge_env_config(self.base_config, request_config, self.overridable))
        with self._lock:
            if key in self._valid:
                self._valid.move_to_end(key)
                return self._valid[key]
        return None

    def config_for(self, request_config: Mapping[str, Any]) -> dict[str, Any]:
        """The config a request's rollout runs with, validated by building one environment (cached).

        Raises :class:`RequestError` when it is invalid.
        """
        merged = merge_env_config(self.base_config, request_config, self.overridable)
        key = self._key(merged)
        with self._lock:
            if key in self._valid:
                return self._valid[key]
        try:
            self.make(merged).close()
        except ValidationError as exc:
            raise RequestError.from_validation_error(_CONFIG_LOC, exc) from None
        except (TypeError, ValueError, KeyError) as exc:
            if isinstance(exc, ConfigError) and exc.problems:  # the keys at fault, as pydantic's error gives them
                raise RequestError.from_problems(_CONFIG_LOC, exc.problems, str(exc)) from None
            raise RequestError(_CONFIG_LOC, f"invalid config for environment {self.env_name!r}: {exc}",
                               dict(request_config)) from None
        with self._lock:
            self._valid[key] = merged
            while len(self._valid) > self._cache_size:
                self._valid.popitem(last=False)
        return merged

    @staticmethod
    def _key(config: Mapping[str, Any]) -> str:
        try:
            return json.dumps(config, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            raise RequestError(_CONFIG_LOC, "expected JSON-native values (finite numbers)", None) from None
