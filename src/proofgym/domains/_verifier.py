"""The embedded rule kernel as a verifier: certificates offline, with no account (verifier kind ``rulebook``).

Registered through the ``proofgym.verifiers`` entry points (pyproject.toml), as Verilog's and plugins' kinds are, so
that the verifier registry never imports the domains.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, model_validator

from proofgym.core import Claim, ErrorKind, Outcome, RejectedFact, Verdict
from proofgym.verifiers import VerifierExample, VerifierKind, VerifierOptionsError, verifier_kind

# Bump when the kernel's semantics change, so verdicts cached by an older kernel are not reused.
KERNEL_VERSION = "1"


def verdict_from_report(report: Mapping[str, Any], *, verifier: str = "") -> Verdict:
    """Map a kernel report (the QueryExplanation shape) onto the three outcomes.

    A decided, proof-checked report certifies its decision; a report the fact gate stopped, or an
    indeterminate one, is refuted (a real, fail-closed answer); a proof the checker rejected means the
    kernel could not verify: invalid, so a kernel bug is neither paid nor punished.
    """
    status = report.get("status")
    if report.get("checker_problems"):
        problems = "; ".join(report["checker_problems"][:3])
        return Verdict(Outcome.INVALID, error_kind=ErrorKind.CRASH, evidence=dict(report), verifier=verifier,
                       reason=f"the proof checker rejected the kernel's proof: {problems}")
    if status == "decided" and report.get("proof_checked"):  # the common case: nothing else to read
        return Verdict(Outcome.CERTIFIED, decision=report.get("decision"), evidence=dict(report),
                       verifier=verifier, reason=report.get("proof_summary", ""))
    rejected = tuple(RejectedFact(r["field"], r.get("value"), tuple(r.get("reasons", ())))
                     for r in report.get("rejected_facts") or ())
    if rejected:
        reason = f"fact gate rejected {len(rejected)} fact(s): {', '.join(r.field for r in rejected)}"
    else:
        reason = f"no decision could be certified (status {status})"
    return Verdict(Outcome.REFUTED, rejected_facts=rejected, evidence=dict(report), verifier=verifier,
                   reason=reason)


class RulebookVerifier:
    """Verifies claims' facts with the embedded :class:`~proofgym.rules.RuleKernel`.

    The kernel derives the decision from the facts alone (``uses_decision = False``), so claims that
    assert the same facts share one verification whatever they decided. The version carries the
    rulebook's content hash. Picklable (the compiled kernel is rebuilt in each worker process).
    """

    uses_decision = False

    def __init__(self, rulebook: Any) -> None:
        from proofgym.rules import Rulebook, RuleKernel, load_rulebook

        if isinstance(rulebook, RuleKernel):
            self._kernel: Any = rulebook
            rulebook = rulebook.rulebook
        elif isinstance(rulebook, (str, Path)):
            rulebook = load_rulebook(rulebook)
            self._kernel = None
        elif isinstance(rulebook, Rulebook):
            self._kernel = None
        else:
            raise TypeError(f"RulebookVerifier needs a Rulebook, RuleKernel or path, got {type(rulebook).__name__}")
        self.rulebook = rulebook
        self.name = f"rulebook:{rulebook.name}"
        self.version = f"kernel{KERNEL_VERSION}:{rulebook.content_hash[:16]}"

    @property
    def kernel(self) -> Any:
        if self._kernel is None:
            from proofgym.rules import RuleKernel

            self._kernel = RuleKernel(self.rulebook)
        return self._kernel

    def verify(self, claim: Claim) -> Verdict:
        """Verify one claim synchronously."""
        return verdict_from_report(self.kernel.query(claim.facts), verifier=f"{self.name}@{self.version}")

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        return [self.verify(claim) for claim in claims]

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_kernel": None}


class RulebookOptions(BaseModel):
    """Run-config options of the ``rulebook`` verifier kind: a domain (a shipped or registered one by name, or a
    domain folder by path: ``./my_domain``, relative to the run config file), or a rulebook file."""

    model_config = ConfigDict(extra="forbid")

    domain: str | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> RulebookOptions:
        if (self.domain is None) == (self.path is None):
            raise ValueError("give exactly one of 'domain' (a domain name or a domain folder's path) or 'path' "
                             "(a rulebook file)")
        return self


def rulebook_relative_to(options: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A domain folder given by a relative path (``domain: ./my_domain``) is relative to the run config's
    ``folder``: the options with that path made absolute (a domain name, and ``path``, are left as they are)."""
    from proofgym.domains._locate import domain_folder, is_domain_path

    domain = options.get("domain")
    if isinstance(domain, str) and is_domain_path(domain):
        return {**options, "domain": str(domain_folder(domain, relative_to=folder))}
    return options


def build_rulebook_verifier(options: RulebookOptions) -> RulebookVerifier:
    """The verifier of the domain (by name or folder) or rulebook file; :class:`VerifierOptionsError` names
    ``domain`` (an unknown domain, a folder that cannot be loaded) or ``path`` (one line per problem of a rulebook
    that cannot be loaded)."""
    from proofgym.rules import RulebookError

    key, path = "path", options.path
    rulebook: str | Path | None = path
    if options.domain is not None:
        from proofgym.domains._locate import resolve_domain

        try:
            key, rulebook = "domain", resolve_domain(options.domain).rulebook_path
        except KeyError as exc:
            raise VerifierOptionsError.at("rulebook", "domain", exc.args[0], options.domain) from None
        except ValueError as exc:
            raise VerifierOptionsError.at("rulebook", "domain", str(exc).splitlines(), options.domain) from None
    try:
        return RulebookVerifier(rulebook)
    except RulebookError as exc:
        raise VerifierOptionsError.at("rulebook", key, exc.problems, getattr(options, key)) from None


def rulebook_examples() -> list[VerifierExample]:
    """Known cases: the grant applications of the ``python`` kind's examples (whose function is
    :mod:`proofgym.domains.grant_rules`, the same rules in Python), verified by the ``grant_eligibility`` rulebook."""
    examples = verifier_kind("python").examples
    assert examples is not None  # the python kind has its known cases
    return [replace(case, options={"domain": "grant_eligibility"}) for case in examples()]


#: The ``rulebook`` verifier kind (entry point ``proofgym.verifiers: rulebook``).
RULEBOOK_VERIFIER = VerifierKind(RulebookOptions, build_rulebook_verifier, rulebook_examples,
                                 relative_to=rulebook_relative_to)
