"""The one registry mechanism: every extensible kind (verifier kinds, parser kinds, environments, policies, domains)
is a :class:`Registry` of names.

A name maps to an object or to a lazy ``"package.module:attribute"`` target, imported on first lookup, so that
registering a kind loads nothing. Plugins come in through Python entry points, one group per kind (for example
``proofgym.verifiers``): a distribution declares them in its ``pyproject.toml``::

    [project.entry-points."proofgym.verifiers"]
    word_count = "my_plugin.verifier:KIND"

and they are read on the first lookup (``get``, ``names``, ``in``), never imported until used. proofgym's own
concrete packages (Verilog, the rulebook domains) register the same way, from their own files, so that no lower
layer names them.
"""

from __future__ import annotations

import importlib
import threading
from importlib import metadata
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class RegistryError(ValueError):
    """A name is unknown, registered twice, or names a target that cannot be loaded; the message says which
    registry, which name, and what was expected."""


def load_target(target: str, *, what: str) -> Any:
    """Import ``"package.module:attribute"`` (the attribute may be dotted); :class:`RegistryError` names ``what``
    and the target when it cannot be loaded."""
    module, sep, attribute = target.partition(":")
    if not sep or not module or not attribute:
        raise RegistryError(f"{what}: expected 'package.module:attribute', got {target!r}")
    try:
        value: Any = importlib.import_module(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except Exception as exc:  # an ImportError, an AttributeError, or the module's own error on import
        raise RegistryError(f"{what}: cannot load {target!r}: {type(exc).__name__}: {exc}") from exc
    return value


class Registry(Generic[T]):
    """Names of one kind (``kind``, as errors say it: "verifier kind", "environment") and their targets.

    ``group`` is the entry-point group plugins register through; ``check`` (optional) validates every target: an
    object when it is registered, a lazy one once it is loaded. It is a class the target must be an instance of, or
    a function that returns the target (or raises ``TypeError`` / ``ValueError`` saying what was expected).
    """

    def __init__(self, kind: str, group: str, *, check: type | Callable[[Any], Any] | None = None) -> None:
        self.kind, self.group = kind, group
        self._check = _instance_check(check) if isinstance(check, type) else check
        self._targets: dict[str, T | str] = {}
        self._origins: dict[str, str] = {}
        self._entry_points_loaded = False
        self._loading_entry_points = False  # the thread holding the lock is registering them (re-entered: go on)
        self._lock = threading.RLock()

    def register(self, name: str, target: T | str, *, origin: str = "") -> None:
        """Register ``name``: an object, or a ``"module:attribute"`` string imported on first lookup.

        Registering a name twice is an error, unless it is the same target again: the same lazy target (a module
        imported twice), or an object and the lazy target that names it (a module that registers its own function
        with a decorator, and the entry point that names that function; the object is kept).
        An object the registry's ``check`` refuses raises its ``TypeError`` / ``ValueError``.
        """
        if not isinstance(name, str) or not name.strip():
            raise RegistryError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        if isinstance(target, str) and (target.count(":") != 1 or target.startswith(":") or target.endswith(":")):
            raise RegistryError(f"{self.kind} {name!r}: a lazy target must be 'package.module:attribute', "
                                f"got {target!r}")
        if not isinstance(target, str) and self._check is not None:
            target = self._check(target)
        with self._lock:
            if name in self._targets:
                known = self._targets[name]
                if isinstance(target, str) and (target == known or target == _target_of(known)):
                    return
                if isinstance(known, str) and known == _target_of(target):
                    self._targets[name] = target
                    return
                raise RegistryError(f"{self.kind} {name!r} is already registered"
                                    + (f" (by {self._origins[name]})" if self._origins.get(name) else ""))
            self._targets[name] = target
            self._origins[name] = origin

    def unregister(self, name: str) -> None:
        """Forget ``name`` (for tests that register a kind of their own); unknown names are ignored."""
        with self._lock:
            self._targets.pop(name, None)
            self._origins.pop(name, None)

    def names(self) -> list[str]:
        """Every registered name, plugins' included, sorted; imports nothing."""
        self._load_entry_points()
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._targets

    def target(self, name: str) -> T | str | None:
        """What ``name`` is registered as, without loading it (``None`` when unknown)."""
        self._load_entry_points()
        return self._targets.get(name)

    def get(self, name: str) -> T:
        """The object registered as ``name``, loading a lazy target on first use; :class:`RegistryError` for an
        unknown name (listing the known ones) or a target that cannot be loaded."""
        self._load_entry_points()
        target = self._targets.get(name)
        if target is None:
            raise RegistryError(f"unknown {self.kind} {name!r}; expected one of {sorted(self._targets)}")
        if not isinstance(target, str):
            return target
        # Imported without the lock held: a module that looks a name up while it is imported cannot deadlock.
        loaded: T = load_target(target, what=f"{self.kind} {name!r}")
        if self._check is not None:
            try:
                loaded = self._check(loaded)
            except (TypeError, ValueError) as exc:
                raise RegistryError(f"{self.kind} {name!r} ({target}): {exc}") from None
        with self._lock:
            if self._targets.get(name) is target:  # not replaced or unregistered meanwhile
                self._targets[name] = loaded
        return loaded

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        with self._lock:
            if self._entry_points_loaded or self._loading_entry_points:
                return
            # Marked loaded only once every entry point is registered: another thread waits on the lock meanwhile
            # rather than finding the registry half filled (it once found only the built-in names).
            self._loading_entry_points = True
            try:
                seen: dict[str, str] = {}
                for point in metadata.entry_points(group=self.group):
                    origin = f"entry point {point.name!r} of {_distribution(point)} in group {self.group!r}"
                    if point.name in seen and seen[point.name] != point.value:
                        raise RegistryError(f"{self.kind} {point.name!r} is declared twice in group "
                                            f"{self.group!r}: {seen[point.name]!r} and {point.value!r}")
                    seen[point.name] = point.value
                    self.register(point.name, point.value, origin=origin)
            finally:
                self._loading_entry_points = False
                self._entry_points_loaded = True


def _target_of(value: Any) -> str | None:
    """The lazy target (``"module:qualname"``) that names ``value``, for a function or class; else ``None``."""
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(value, str) or not isinstance(module, str) or not isinstance(qualname, str):
        return None
    return f"{module}:{qualname}"


def _instance_check(cls: type) -> Callable[[Any], Any]:
    """A check that a target is an instance of ``cls`` (named by the package that exports it)."""
    name = f"{cls.__module__.split('._')[0]}.{cls.__qualname__}"

    def check(value: Any) -> Any:
        if not isinstance(value, cls):
            raise TypeError(f"expected a {name}, got {type(value).__name__}")
        return value

    return check


def _distribution(point: metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an installed distribution"
