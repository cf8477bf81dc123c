"""redact_url takes credentials out of a URL and keeps the rest as written; is_secret_name knows credential names."""

import pytest
from hypothesis import given, settings, strategies as st

from proofgym.core import is_secret_name, redact_secrets, redact_text, redact_url


@pytest.mark.parametrize("url, redacted", [
    ("http://user:hunter2@gpu-box:8000/v1?cid=trace_1", "http://***@gpu-box:8000/v1?cid=trace_1"),
    ("https://sk-abcdef@host/v1", "https://***@host/v1"),
    ("http://a:b@c@host/v1", "http://***@host/v1"),
    ("https://host/v1?cid=trace_1&api_key=sk-1&x=2", "https://host/v1?cid=trace_1&api_key=***&x=2"),
    ("https://host/v1?access_token=abc#id_token=def", "https://host/v1?access_token=***#id_token=***"),
    ("https://host/v1?key=AIza&sig=xyz&Signature=1", "https://host/v1?key=***&sig=***&Signature=***"),
    ("https://b.s3/o?X-Amz-Credential=a&X-Amz-Signature=b&X-Amz-Security-Token=c&jwt=d&apikey=e&code=f",
     "https://b.s3/o?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=***&jwt=***&apikey=***&code=***"),
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


def test_a_name_ending_in_env_names_a_variable_not_a_credential():
    assert not is_secret_name("api_key_env") and not is_secret_name("AUTHORIZATION_ENV")


SECRET = "S3cr3t-value"
CREDENTIAL_PARAMS = "api_key={s}&token={s}&key={s}&access_token={s}&sig={s}&password={s}&X-Api-Key={s}&%6Bey={s}"


@pytest.mark.parametrize("line", [
    # uvicorn's access line, its trace-level scope dump (the query string as bytes), httpx's request line
    '127.0.0.1:5 - "GET /health?cid=c1&' + CREDENTIAL_PARAMS.format(s=SECRET) + ' HTTP/1.1" 200',
    "127.0.0.1:5 - ASGI [1] Started scope={'query_string': b'" + CREDENTIAL_PARAMS.format(s=SECRET) + "'}",
    f'HTTP Request: POST http://user:{SECRET}@gpu:8000/v1/chat/completions?cid=c1&api_key={SECRET} "HTTP/1.1 200 OK"',
    # a header line, a server's error body echoing a request (JSON and repr), a curl line
    f"Authorization: Bearer {SECRET}", f"X-API-Key: {SECRET}",
    f'HTTP 422: {{"detail": [{{"input": {{"authorization": "{SECRET}", "temperature": 0}}}}]}}',
    f"{{'extra_body': {{'api_key': '{SECRET}'}}}}", f"curl -H 'Authorization: Bearer {SECRET}' http://host/v1",
])
def test_redact_text_takes_every_credential_out_of_a_log_or_error_line(line):
    assert SECRET not in redact_text(line)


@pytest.mark.parametrize("line", [
    '127.0.0.1:5 - "GET /task_info?seed=1&cid=trace_1&monkey=2&keys=3&api_key_env=OPENAI_API_KEY HTTP/1.1" 200',
    "the reply has 2 tool calls; call exactly one tool per turn", "max_tokens=5 tokens: 4 at 12:30",
    "keys a request may set: index, split", "Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)",
])
def test_redact_text_keeps_what_is_not_a_credential(line):
    assert redact_text(line) == line


def test_redact_text_keeps_the_line_around_what_it_takes_out():
    assert redact_text('"GET /h?cid=c1&api_key=S&x=1 HTTP/1.1" 200') == '"GET /h?cid=c1&api_key=***&x=1 HTTP/1.1" 200'
    assert redact_text('{"authorization": "Bearer S", "n": 1}') == '{"authorization": "***", "n": 1}'


def test_redact_secrets_takes_credentials_out_at_any_depth():
    request = {
        "model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Is the applicant eligible?"}],
        "authorization": f"Bearer {SECRET}",
        "extra_headers": {"X-API-Key": SECRET, "Cookie": SECRET, "X-Trace": "t1"},
        "nested": {"deeper": [{"client_secret": SECRET, "n": 3}, ["Authorization", f"Basic {SECRET}"]]},
        "callback": f"https://user:{SECRET}@hook.example/x?cid=c1&sig={SECRET}",
        "note": f"posted to http://host/v1?token={SECRET} at noon",
        "credentials": ["a", SECRET], "token": None, "api_key_env": "OPENAI_API_KEY",
    }
    redacted = redact_secrets(request)
    assert SECRET not in repr(redacted)
    assert redacted["authorization"] == "***" and redacted["extra_headers"]["X-Trace"] == "t1"
    assert redacted["nested"]["deeper"] == [{"client_secret": "***", "n": 3}, ["Authorization", "***"]]
    assert redacted["callback"] == "https://***@hook.example/x?cid=c1&sig=***"
    assert redacted["note"] == "posted to http://host/v1?token=*** at noon"
    assert redacted["credentials"] == "***" and redacted["token"] is None
    assert redacted["api_key_env"] == "OPENAI_API_KEY" and redacted["messages"] == request["messages"]


def test_data_without_credentials_comes_back_as_the_same_object():
    request = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "see https://x.org/a?b=1"}],
               "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]}
    assert redact_secrets(request) is request


def test_data_nested_past_the_recursion_limit_is_redacted_whole():
    deep: dict = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    inner["api_key"] = SECRET
    assert redact_secrets(deep) == "***"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_redact_text_returns_text_for_any_text(text):
    assert isinstance(redact_text(text), str)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                     lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
                     max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.sampled_from(["api_key", "Authorization", "x-api-key", "client_secret", "cookie"]))
def test_a_secret_named_key_never_keeps_its_string_anywhere(data, name):
    redacted = redact_secrets({"outer": [data, {name: "S3cr3t-value"}]})
    assert redacted["outer"][1][name] == "***"
