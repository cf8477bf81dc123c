"""The ``ambertrace`` verifier kind in run configs: options, secrets, and a lazy SDK import."""

import subprocess
import sys

import pytest

from proofgym.config import ConfigError, parse_run_config
from proofgym.ambertrace import DEFAULT_QUERY, AmberTraceVerifier


def config(**verifier):
    return {"name": "hosted", "verifier": {"kind": "ambertrace", **verifier}}


def test_kind_ambertrace_loads_and_builds_the_verifier(monkeypatch):
    monkeypatch.delenv("AMBERTRACE_BASE_URL", raising=False)
    run = parse_run_config(config(platform_id=7, query="Is this applicant eligible?", use_batch=False,
                                  projection=False, request_timeout_s=5, api_key_env="TEAM_KEY",
                                  base_url="https://staging.example"))
    verifier = run.verifier.build()
    assert isinstance(verifier, AmberTraceVerifier)
    assert (verifier.name, verifier.platform_id, verifier.query) == ("ambertrace:7", 7, "Is this applicant eligible?")
    assert (verifier.use_batch, verifier.projection, verifier.request_timeout_s) == (False, False, 5)
    assert verifier.api_key_env == "TEAM_KEY" and verifier.base_url == "https://staging.example"
    assert verifier.uses_decision is False and verifier.max_batch_size == 50


def test_defaults(monkeypatch):
    monkeypatch.delenv("AMBERTRACE_BASE_URL", raising=False)
    verifier = parse_run_config(config(platform_id=7)).verifier.build()
    assert verifier.api_key_env == "AMBERTRACE_API_KEY" and verifier.query == DEFAULT_QUERY
    assert verifier.use_batch and verifier.projection and verifier.base_url is None


def test_api_key_in_the_config_is_refused_with_a_pointer_to_the_environment():
    with pytest.raises(ConfigError) as info:
        parse_run_config(config(platform_id=7, api_key="at_live_123"))
    assert "api_key must not be set in a config" in str(info.value) and "AMBERTRACE_API_KEY" in str(info.value)
    assert "at_live_123" not in str(info.value)


@pytest.mark.parametrize("options, problem", [
    ({}, "platform_id"),
    ({"platform_id": "7"}, "platform_id"),
    ({"platform_id": 0}, "platform_id"),
    ({"platform_id": 7, "retries": 3}, "retries: unknown key"),
    ({"platform_id": 7, "api_key_env": "not a name"}, "api_key_env"),
    ({"platform_id": 7, "request_timeout_s": 0}, "request_timeout_s"),
    ({"platform_id": 7, "query": ""}, "query"),
])
def test_bad_options_are_named(options, problem):
    with pytest.raises(ConfigError, match=problem):
        parse_run_config(config(**options))


def test_version_names_platform_sdk_endpoint_and_query(monkeypatch):
    monkeypatch.delenv("AMBERTRACE_BASE_URL", raising=False)
    a = AmberTraceVerifier(7)
    assert "platform7" in a.version and "/sdk-" in a.version and "/default/" in a.version
    assert AmberTraceVerifier(8).version != a.version
    assert AmberTraceVerifier(7, query="Other question?").version != a.version
    assert AmberTraceVerifier(7, base_url="https://staging.example").version != a.version
    monkeypatch.setenv("AMBERTRACE_BASE_URL", "https://eu.example")
    assert AmberTraceVerifier(7).base_url == "https://eu.example"


def test_building_the_reward_function_imports_no_sdk_and_needs_no_key():
    code = (
        "import os, sys; os.environ.pop('AMBERTRACE_API_KEY', None)\n"
        "from proofgym.config import parse_run_config\n"
        "fn = parse_run_config({'verifier': {'kind': 'ambertrace', 'platform_id': 7}}).reward_function()\n"
        "fn.close()\n"
        "print([m for m in ('ambertraceai', 'httpx') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("bad", [True, "7", 7.0])
def test_platform_id_must_be_an_int(bad):
    with pytest.raises(TypeError):
        AmberTraceVerifier(bad)


def test_platform_version_enters_the_cache_key():
    assert AmberTraceVerifier(7).version != AmberTraceVerifier(7, platform_version="2026-11-29").version
    assert AmberTraceVerifier(7, platform_version="a").version == AmberTraceVerifier(7, platform_version="a").version
