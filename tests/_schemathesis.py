"""Schemathesis against proofgym's servers in-process (ASGI): a bounded, seeded run of every check, with the API key.

Imported as ``from _schemathesis import ...`` (pytest puts ``tests/`` on ``sys.path``). Each server's published
schema (what ``GET /openapi.json`` serves) is fuzzed with positive and negative data, ``MAX_EXAMPLES`` per
operation and phase, derandomized from ``SEED`` so that a run is reproducible; every built-in check runs
(``call_and_validate`` with the default config: all checks enabled, as ``--checks all``), the auth ones included.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable

import schemathesis
from schemathesis.config import SchemathesisConfig

API_KEY = "schemathesis-key"
SEED = 20251201
MAX_EXAMPLES = 25


def config() -> SchemathesisConfig:
    """Positive and negative data, bounded and seeded; the key sent the way the schema's ``ApiKeyHeader`` says."""
    return SchemathesisConfig.from_dict({
        "seed": SEED,
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True},
        "auth": {"openapi": {"ApiKeyHeader": {"api_key": API_KEY}}},
    })


class FreshApp:
    """An ASGI app that builds a new ``make(store_path)`` app for every lifespan, a store of its own each time.

    Schemathesis ends an in-process app's lifespan after every test, and a task app that has shut down stays
    draining (as a real one would): the next test (one per operation) gets a fresh app instead. ``directory``
    (where the trace stores go) is set by the test module's fixture.
    """

    def __init__(self, make: Callable[[Path], Any]) -> None:
        self.make = make
        self.directory: Path | None = None
        self.app: Any = None
        self._count = itertools.count()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            assert self.directory is not None, "set FreshApp.directory before the first request"
            self.app = self.make(self.directory / f"traces-{next(self._count)}.db")
        await self.app(scope, receive, send)


def schema_of(app: Any, published: dict[str, Any]) -> Any:
    """The schemathesis schema of ``published`` (the app's OpenAPI document), its requests sent to ``app``."""
    schema = schemathesis.openapi.from_dict(published, config=config())
    schema.app = app
    return schema
