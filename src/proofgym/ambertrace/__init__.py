"""AmberTrace: a hosted rule-certification platform as a verifier (the ``ambertrace`` verifier kind).

A backend of its own beside the embedded kernel: it registers its kind through the ``proofgym.verifiers``
entry-point group, and nothing below it names it.
"""

from proofgym.ambertrace._verifier import (
    AMBERTRACE_VERIFIER,
    DEFAULT_QUERY,
    AmberTraceOptions,
    AmberTraceRequestRefused,
    AmberTraceVerifier,
    ambertrace_report,
    build_ambertrace_verifier,
)

__all__ = [
    "AMBERTRACE_VERIFIER",
    "DEFAULT_QUERY",
    "AmberTraceOptions",
    "AmberTraceRequestRefused",
    "AmberTraceVerifier",
    "ambertrace_report",
    "build_ambertrace_verifier",
]
