"""A verifier backed by a plain Python function: the quickest way to verify a new domain."""

from __future__ import annotations

import importlib
from typing import Callable, Sequence, cast

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import Claim, Verdict
from proofgym.verifiers._registry import VerifierOptionsError

VerifyFunction = Callable[[Claim], Verdict]


class FunctionVerifier:
    """Runs ``function(claim) -> Verdict`` on each claim.

    The function must be deterministic (its results are cached under ``version``) and fast; give a
    CPU-heavy one to the runtime's process executor. Exceptions it raises become ``INVALID`` verdicts
    in the runtime, never rewards.
    """

    def __init__(self, function: VerifyFunction, *, name: str, version: str = "1", uses_decision: bool = False):
        self.function = function
        self.name = name
        self.version = version
        self.uses_decision = uses_decision

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        return [self.function(claim) for claim in claims]


class FunctionVerifierOptions(BaseModel):
    """Run-config options of the ``python`` verifier kind."""

    model_config = ConfigDict(extra="forbid")

    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", description="'package.module:callable'")
    version: str = "1"
    uses_decision: bool = False


def load_function(path: str) -> VerifyFunction:
    """Import ``'package.module:callable'``, with an error that names the path on failure."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {module_name!r} for verifier function {path!r}: {exc}") from exc
    function = getattr(module, attr, None)
    if not callable(function):
        raise ValueError(f"verifier function {path!r}: module {module_name!r} has no callable {attr!r}")
    return cast(Callable[[Claim], Verdict], function)


def build_function_verifier(options: FunctionVerifierOptions) -> FunctionVerifier:
    try:
        function = load_function(options.function)
    except ValueError as exc:
        raise VerifierOptionsError.at("python", "function", str(exc), options.function) from None
    return FunctionVerifier(function, name=options.function, version=options.version,
                            uses_decision=options.uses_decision)
