import asyncio

import pytest

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import certified


class Misbehaving:
    """Does something a verifier must not do, chosen by the claim's decision."""

    name, version = "misbehaving", "1"

    async def verify_many(self, claims):
        what = claims[0].decision
        if what == "system_exit":
            raise SystemExit(3)
        if what == "keyboard_interrupt":
            raise KeyboardInterrupt
        if what == "self_cancel":
            raise asyncio.CancelledError
        if what == "none":
            return None
        if what == "dict":
            return {"verdicts": []}
        if what == "generator":
            return (certified() for _ in claims)
        return [certified(c.decision) for c in claims]


class NotAsync:
    name, version = "not-async", "1"

    def verify_many(self, claims):
        return [certified() for _ in claims]


@pytest.mark.parametrize("what,kind,needle", [
    ("system_exit", ErrorKind.CRASH, "SystemExit"),
    ("keyboard_interrupt", ErrorKind.CRASH, "KeyboardInterrupt"),
    ("self_cancel", ErrorKind.CANCELLED, "cancelled"),
    ("none", ErrorKind.MALFORMED, "NoneType"),
    ("dict", ErrorKind.MALFORMED, "dict"),
    ("generator", ErrorKind.MALFORMED, "generator"),
])
def test_misbehaviour_becomes_invalid_and_the_runtime_survives(what, kind, needle):
    with VerificationRuntime(Misbehaving(), RuntimeConfig(retries=0)) as runtime:
        [verdict] = runtime.verify_many_sync([Claim(what)])
        assert verdict.error_kind is kind and needle in verdict.reason
        assert runtime.verify_many_sync([Claim("fine")])[0].certified


def test_sync_verify_many_is_a_crash():
    with VerificationRuntime(NotAsync(), RuntimeConfig(retries=0)) as runtime:
        [verdict] = runtime.verify_many_sync([Claim("x")])
    assert verdict.error_kind is ErrorKind.CRASH and "await" in verdict.reason


def test_non_claims_and_non_verifiers_are_caller_errors():
    with pytest.raises(TypeError, match="not a Verifier"):
        VerificationRuntime(object())
    with VerificationRuntime(Misbehaving()) as runtime:
        with pytest.raises(TypeError, match="Claim"):
            runtime.verify_many_sync(["not a claim"])
