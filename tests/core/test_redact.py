"""redact_url takes credentials out of a URL and keeps the rest as written; is_secret_name knows credential names."""

import pytest
from hypothesis import given, settings, strategies as st

from proofgym.core import is_secret_name, redact_url


@pytest.mark.parametrize("url, redacted", [
    ("http://user:hunter2@gpu-box:8000/v1?cid=trace_1", "http://***@gpu-box:8000/v1?cid=trace_1"),
    ("https://sk-abcdef@host/v1", "https://***@host/v1"),
    ("http://a:b@c@host/v1", "http://***@host/v1"),
    ("https://host/v1?cid=trace_1&api_key=sk-1&x=2", "https://host/v1?cid=trace_1&api_key=***&x=2"),
    ("https://host/v1?access_token=abc#id_token=def", "https://host/v1?access_token=***#id_token=***"),
    ("https://host/v1?key=AIza&sig=xyz&Signature=1", "https://host/v1?key=***&sig=***&Signature=***"),
    ("http://[::1/v1?token=t", "http://[::1/v1?token=***"),  # does not parse as a URL: redacted all the same
])
def test_credentials_are_replaced(url, redacted):
    assert redact_url(url) == redacted


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8000/v1?cid=trace_abc", "http://host/v1", "http://host/p#section",
    "http://host/p?a&b=&max_tokens=5",
])
def test_a_url_without_credentials_comes_back_unchanged(url):
    assert redact_url(url) == url


def test_none_stays_none():
    assert redact_url(None) is None


@settings(max_examples=300, deadline=None)
@given(user=st.text(min_size=1, alphabet=st.characters(blacklist_characters="/?# \t\n\r\x0b\x0c")),
       password=st.text(min_size=1, alphabet="abcdefXYZ0123456789!$%"), tail=st.text())
def test_the_userinfo_never_survives(user, password, tail):
    url = f"https://{user}:{password}@host/v1?cid=c1{tail}"
    redacted = redact_url(url)
    assert redacted.startswith("https://***@host/v1?cid=c1") and f":{password}@" not in redacted


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_is_returned_as_text(text):
    assert isinstance(redact_url(text), str)


@pytest.mark.parametrize("name", [
    "api_key", "X-API-Key", "Authorization", "proxy-authorization", "cookie", "Set-Cookie", "private_key", "access_key",
    "secret_key", "client_secret", "hf_token", "accessToken", "password", "passwd", "basic_auth", "auth", "credentials",
])
def test_credential_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["max_tokens", "tokenizer", "answer_key", "facts_key", "key", "cid", "author",
                                  "keyword", "tokens_per_step", "inference_url"])
def test_names_that_are_settings(name):
    assert not is_secret_name(name)
