"""Schemathesis against the task apps of loan and verilog, as test_openapi.py fuzzes grant_eligibility's by default:
the other environments of the same app (about 6 s a fuzz run), under -m slow.

A module of its own because schemathesis builds an operation's tests (its coverage cases included) when the module
is collected, on every xdist worker (24.8 CPU-s to collect this module alone, in one run under load ~14, against 2.2
for a module without schemathesis): tests/conftest.py does not collect this module when the marker expression is the
default ``not slow``, which would deselect all of it anyway.
"""

from __future__ import annotations

import pytest

from .test_openapi import SCHEMAS, _fuzzed, _trace_stores  # noqa: F401 (the module fixture that sets the stores)

pytestmark = pytest.mark.slow

test_loan_task_app_matches_its_schema = _fuzzed(SCHEMAS["loan"])
test_verilog_task_app_matches_its_schema = _fuzzed(SCHEMAS["verilog"])
