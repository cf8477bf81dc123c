"""A trace store that cannot be opened stops ``proofgym serve``, the viewer and an eval with one line naming the
store: a Postgres URL's password and credential parameters are not in it (nothing listens on the port used)."""

from __future__ import annotations

import pytest

from proofgym.evaluation import EvalError, parse_eval_config, run_eval
from proofgym.taskapp import ServeError, serve

SECRET = "S3cr3t-value"
URL = f"postgresql://user:{SECRET}@127.0.0.1:1/traces?password={SECRET}&sslmode=disable"


def test_serve_names_the_store_without_its_credentials():
    with pytest.raises(ServeError) as refused:
        serve("grant_eligibility", traces=URL)
    assert "cannot open the trace store 'postgresql://***@127.0.0.1:1/traces?password=***" in str(refused.value)
    assert SECRET not in str(refused.value)


def test_the_viewer_names_the_store_without_its_credentials():
    from proofgym.view import serve_view

    with pytest.raises(ServeError) as refused:
        serve_view(URL)
    assert "cannot open the trace store" in str(refused.value) and SECRET not in str(refused.value)


def test_an_eval_names_the_store_without_its_credentials():
    config = parse_eval_config({"evaluation": {"env_name": "grant_eligibility", "policy_name": "oracle", "seeds": [0],
                                         "traces": URL}})
    with pytest.raises(EvalError) as refused:
        run_eval(config)
    assert "evaluation.traces: cannot open the trace store" in str(refused.value) and SECRET not in str(refused.value)
