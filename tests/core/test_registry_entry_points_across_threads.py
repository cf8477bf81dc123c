"""A registry's entry points are all there for every thread: one that looks a name up while another thread is
registering them waits for it (it once found the registry half filled: "unknown verifier kind 'rulebook'; expected
one of ['python']" when a verifiers replay built environments on several threads at once)."""

from __future__ import annotations

import threading
from importlib import metadata
from types import SimpleNamespace

import pytest

from proofgym.core import Registry


def test_a_lookup_during_the_entry_point_scan_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    scanning, finish = threading.Event(), threading.Event()
    point = SimpleNamespace(name="late", value="json:dumps", dist=None)

    def entry_points(group: str) -> list[SimpleNamespace]:
        scanning.set()
        finish.wait(10)
        return [point]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    registry: Registry[object] = Registry("thing", "proofgym.test-things")
    registry.register("early", "json:loads")
    scanner = threading.Thread(target=registry.names)
    scanner.start()
    assert scanning.wait(10)
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append(registry.names()))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive() and not seen  # waiting for the scan, not answering from half a registry
    finish.set()
    scanner.join(10)
    reader.join(10)
    assert seen == [["early", "late"]]
