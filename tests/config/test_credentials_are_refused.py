"""A config file never holds a credential: header-like and key-like names, token-like values and URLs that carry
a password or a credential parameter are refused by path, and the credential is never repeated in the error."""

import json

import pytest

from proofgym.config import ConfigError, find_secret_key, read_config_file

FAKE = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize("key", ["authorization", "Authorization", "x-api-key", "cookie", "set-cookie",
                                 "private_key", "access_key", "secret_key", "aws_secret_access_key", "accessToken",
                                 "proxy-authorization", "basic_auth"])
def test_header_and_key_names_are_credentials(key):
    assert find_secret_key({"policy": {"extra_body": {key: "x"}}}) == f"policy.extra_body.{key}"


@pytest.mark.parametrize("value", [
    f"Bearer {FAKE}", f"bearer {FAKE}", "Basic dXNlcjpodW50ZXIy", f"sk-{FAKE}", f"sk-proj-{FAKE}",
    f"ghp_{FAKE}", f"hf_{FAKE}", "AKIAABCDEFGHIJKLMNOP", f"xoxb-{FAKE}", "-----BEGIN RSA PRIVATE KEY-----\nMII",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
    "http://user:hunter2@gpu:8000/v1", "https://gpu/v1?cid=c1&access_token=abc", "see https://tok@host/x",
])
def test_values_that_are_credentials_are_refused_whatever_their_key(value):
    assert find_secret_key({"headers": [["X-Whatever", value]]}) == "headers[0][1]"


@pytest.mark.parametrize("data", [
    {"inference_url": "http://127.0.0.1:8000/v1?cid=trace_abc"},
    {"api_key_env": "OPENAI_API_KEY", "policy": {"AUTHORIZATION_ENV": "X"}},
    {"max_tokens": 256, "tokenizer": "t", "parser": {"answer_key": "decision", "facts_key": "facts"}},
    {"training": {"curriculum": {"key": "branch"}}},
    {"prompt": "The bearer of this grant is a sk- skilled applicant", "note": "Basic eligibility rules apply."},
])
def test_settings_that_merely_look_related_are_allowed(data):
    assert find_secret_key(data) is None


@pytest.mark.parametrize("suffix, text", [
    (".yaml", f"policy:\n  extra_body: {{user: sk-{FAKE}}}\n"),
    (".toml", f'[policy]\ninference_url = "http://me:{FAKE}@gpu/v1"\n'),
    (".json", json.dumps({"policy": {"headers": {"x": f"Bearer {FAKE}"}}})),
])
def test_a_config_file_with_a_credential_is_refused_by_path_without_repeating_it(tmp_path, suffix, text):
    path = tmp_path / f"c{suffix}"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: policy.") and "secrets must not be stored in config files" in message
    assert FAKE not in message
