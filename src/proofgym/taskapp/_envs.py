"""The app's environment: its base config, a request's config merged over it, and validation of the result.

Which keys a request may set: those the operator allows (``--allow-env-override KEY``, ``"*"`` for all) and the
reference client's keys, :data:`REQUEST_KEYS` (``difficulty``, ``split``, ``index``: synth-ai's ``eval`` sends
``split`` and ``index`` with every rollout, its eval files ``difficulty``), less those the operator forbids
(``--forbid-env-override KEY``, given to :class:`EnvProvider` as ``"!KEY"``); ``difficulty`` only where the
environment accepts one of the reference's values (allowing it explicitly offers it anyway). Any other key must
repeat the app's value: the sandbox, limits and files on the server are the operator's.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Collection, Mapping

from pydantic import ValidationError

from proofgym.config import ConfigError
from proofgym.core import describe_validation_error
from proofgym.envs import DIFFICULTIES, SPLIT_KEYS, Environment, make, split_selection
from proofgym.taskapp._errors import RequestError

_CONFIG_LOC = ("env", "config")

#: Environment config keys a request may set unless the operator forbids them: the reference client's.
REQUEST_KEYS: tuple[str, ...] = ("difficulty", *SPLIT_KEYS)


def override_policy(overrides: Collection[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The keys a request may set and those it may not, from the operator's list: ``"KEY"`` allows a key,
    ``"*"`` every key, ``"!KEY"`` forbids one (the :data:`REQUEST_KEYS` are allowed unless forbidden).

    Raises ``ValueError`` for an empty key, or a key both allowed and forbidden."""
    forbidden = frozenset(item[1:] for item in overrides if item.startswith("!"))
    allowed = frozenset(item for item in overrides if not item.startswith("!"))
    for key in forbidden | allowed:
        if not key:
            raise ValueError("an environment config key to allow or forbid must not be empty")
    both = sorted(allowed & forbidden)
    if both:
        raise ValueError(f"environment config key {both[0]!r} is both allowed and forbidden to requests")
    return (allowed | frozenset(REQUEST_KEYS)) - forbidden, forbidden


def merge_env_config(base: Mapping[str, Any], override: Mapping[str, Any],
                     allowed: Collection[str] = (), forbidden: Collection[str] = ()) -> dict[str, Any]:
    """``base`` with the keys of ``override`` that ``allowed`` lists replaced.

    Any other key of ``override`` must repeat ``base``'s value; otherwise :class:`RequestError`
    names it. The operator's config (the sandbox, limits, files on the server) is not the client's
    to change unless the operator says so; ``allowed`` may contain ``"*"`` (every key but ``forbidden``).
    """
    merged = dict(base)
    for key, value in override.items():
        if key not in forbidden and ("*" in allowed or key in allowed):
            merged[key] = value
        elif key not in base or not same_json(base[key], value):
            permitted = "none" if not allowed else ", ".join(sorted(allowed))
            why = "this app forbids requests to set this environment config key" if key in forbidden else \
                "this app does not let requests set this environment config key"
            raise RequestError((*_CONFIG_LOC, key), f"{why} (keys a request may set: {permitted})", value)
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

    ``overridable``: the operator's list, read by :func:`override_policy` (``"KEY"``, ``"*"``, ``"!KEY"``);
    ``overridable`` the attribute is the keys a request may set, ``forbidden`` those it may not, ``difficulties``
    the reference's difficulty values the environment accepts (empty: none, or ``difficulty`` forbidden). ``index``
    does not enter the cache key: it is checked on its own, so a request per index builds no environment.
    Raises ``ValueError`` naming the key when ``base_config`` is invalid.
    """

    def __init__(self, env_name: str, base_config: Mapping[str, Any] | None = None, *,
                 overridable: Collection[str] = (), cache_size: int = 256) -> None:
        self.env_name = env_name
        self.base_config = dict(base_config or {})
        self.overridable, self.forbidden = override_policy(overridable)
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
        self.difficulties = self._difficulties() if "difficulty" in self.overridable else ()
        if not self.difficulties and "difficulty" not in overridable:
            self.overridable -= {"difficulty"}

    def _difficulties(self) -> tuple[str, ...]:
        """The reference's difficulties (:data:`DIFFICULTIES`) this environment accepts over the app's config:
        a request may set ``difficulty`` by default only when there is one."""
        accepted = []
        for value in DIFFICULTIES:
            try:
                self.make({**self.base_config, "difficulty": value}).close()
            except (ValidationError, TypeError, ValueError):
                continue
            accepted.append(value)
        return tuple(accepted)

    def make(self, config: Mapping[str, Any]) -> Environment:
        """A fresh environment instance with ``config``."""
        return make(self.env_name, **config)

    def known_config(self, request_config: Mapping[str, Any], seed: int | None = None) -> dict[str, Any] | None:
        """The config a request's rollout runs with when it was validated before, else ``None`` (cheap).

        Raises :class:`RequestError` for a key the request may not set, an invalid ``split`` / ``index``, or
        (``seed``: the request's ``env.seed``) an ``index`` the seed contradicts.
        """
        merged = merge_env_config(self.base_config, request_config, self.overridable, self.forbidden)
        key = self._key(_without_index(merged))
        with self._lock:
            if key not in self._valid:
                return None
            self._valid.move_to_end(key)
        _check_split_keys(merged, seed)
        return merged

    def config_for(self, request_config: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
        """The config a request's rollout runs with, validated by building one environment (cached).

        Raises :class:`RequestError` when it is invalid, or (``seed``: the request's ``env.seed``) when its
        ``index`` names another position in the split than the seed (within a split they are the same number).
        """
        merged = merge_env_config(self.base_config, request_config, self.overridable, self.forbidden)
        _check_split_keys(merged, seed)
        validated = _without_index(merged)
        key = self._key(validated)
        with self._lock:
            if key in self._valid:
                return merged
        try:
            self.make(validated).close()
        except ValidationError as exc:
            raise RequestError.from_validation_error(_CONFIG_LOC, exc) from None
        except (TypeError, ValueError, KeyError) as exc:
            if isinstance(exc, ConfigError) and exc.problems:  # the keys at fault, as pydantic's error gives them
                raise RequestError.from_problems(_CONFIG_LOC, exc.problems, str(exc)) from None
            raise RequestError(_CONFIG_LOC, f"invalid config for environment {self.env_name!r}: {exc}",
                               dict(request_config)) from None
        with self._lock:
            self._valid[key] = validated
            while len(self._valid) > self._cache_size:
                self._valid.popitem(last=False)
        return merged

    @staticmethod
    def _key(config: Mapping[str, Any]) -> str:
        try:
            return json.dumps(config, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            raise RequestError(_CONFIG_LOC, "expected JSON-native values (finite numbers)", None) from None


def _without_index(config: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in config.items() if key != "index"}


def _check_split_keys(config: Mapping[str, Any], seed: int | None) -> None:
    """``split`` / ``index`` valid, and ``index`` the same position as ``seed``; else :class:`RequestError`."""
    try:
        selection, _ = split_selection(config)
        if selection is not None and seed is not None and selection.index is not None:
            selection.position(seed)
    except ConfigError as exc:
        raise RequestError.from_problems(_CONFIG_LOC, exc.problems, str(exc)) from None
