"""A hardware design problem in the VerilogEval layout: a spec, a reference design and a testbench."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Problem:
    """One spec-to-RTL problem.

    ``spec`` is the natural-language prompt (the design must be a module named ``TopModule``);
    ``reference`` is a reference solution (module ``RefModule``); ``testbench`` has top module ``tb``,
    instantiates ``TopModule`` and ``RefModule`` and prints one line ``Mismatches: N in M samples``.
    The agent only ever sees ``spec`` and ``interface`` (the reference's port list); never the
    reference or the testbench.
    """

    id: str
    spec: str
    reference: str
    testbench: str
    source: str = "builtin"

    @cached_property
    def content_hash(self) -> str:
        """sha256 over spec, reference and testbench: enters the verification cache key."""
        digest = hashlib.sha256()
        for part in (self.id, self.spec, self.reference, self.testbench):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        return digest.hexdigest()
