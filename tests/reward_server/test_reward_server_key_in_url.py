"""The reward server's API key in the URL (``?key=``, how OpenRLHF authenticates: its client sends no headers):
accepted, compared like the header key, refused with 401 when wrong, and never logged, not even at trace level."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from urllib.parse import quote

import httpx
import pytest

from proofgym.integrations import domain_run_config
from proofgym.reward_server import create_reward_app

from ._reward_servers import served
from integrations._support import rows_and_gold

KEY = "Url-K3y+with/odd=chars&more"
SECRET_PART = "Url-K3y"


@pytest.fixture(scope="module")
def reward_fn():
    fn = domain_run_config("grant_eligibility").reward_function()
    yield fn
    fn.close()


def _body():
    rows, gold = rows_and_gold(1)
    return {"query": [rows[0]["prompt"] + gold[0]], "prompts": [rows[0]["prompt"]], "labels": [rows[0]["gold"]]}


def _post(app, url, *, headers=None, body=None):
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://reward") as client:
            return await client.post(url, json=_body() if body is None else body, headers=headers or {})

    return asyncio.run(go())


def test_the_key_in_the_url_is_accepted(reward_fn):
    app = create_reward_app(reward_fn, api_key=KEY)
    reply = _post(app, f"/get_reward?key={quote(KEY, safe='')}")
    assert reply.status_code == 200 and reply.json()["scores"] == [1.0]
    # Beside other parameters, and with its name percent-encoded (as a URL library may write it).
    assert _post(app, f"/get_reward?a=1&%6Bey={quote(KEY, safe='')}&b=2").status_code == 200


@pytest.mark.parametrize("url, words", [
    ("/get_reward", "missing API key"),
    ("/get_reward?key=", "missing API key"),
    ("/get_reward?key=wrong", "invalid API key"),
    (f"/get_reward?key={KEY}", "invalid API key"),  # not percent-encoded: '+' is a space, '&' ends the value
    (f"/get_reward?key={quote(KEY, safe='')}&key={quote(KEY, safe='')}", "given 2 times: give it once"),
    ("/get_reward?KEY=" + quote(KEY, safe=""), "missing API key"),  # parameter names are case-sensitive
])
def test_a_missing_wrong_or_repeated_url_key_is_401_saying_how_to_send_it(reward_fn, url, words):
    reply = _post(create_reward_app(reward_fn, api_key=KEY), url)
    assert reply.status_code == 401 and reply.headers["www-authenticate"] == "Bearer"
    detail = reply.json()["detail"]
    assert words in detail and SECRET_PART not in detail
    if "API key" in words:
        assert "?key=<key>" in detail and "X-API-Key" in detail


def test_the_header_forms_still_work_and_a_header_key_is_the_one_checked(reward_fn):
    app = create_reward_app(reward_fn, api_key=KEY)
    assert _post(app, "/get_reward", headers={"X-API-Key": KEY}).status_code == 200
    assert _post(app, "/get_reward", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert _post(app, f"/get_reward?key={quote(KEY, safe='')}", headers={"X-API-Key": "wrong"}).status_code == 401
    assert _post(app, "/get_reward?key=wrong", headers={"X-API-Key": KEY}).status_code == 200
    # The key is checked before the body is read, whichever way it comes.
    assert _post(app, "/get_reward?key=wrong", body=[]).status_code == 401


def test_a_keyless_server_ignores_and_drops_a_url_key(reward_fn):
    assert _post(create_reward_app(reward_fn), "/get_reward?key=anything").status_code == 200


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)  # uvicorn's trace level is below DEBUG
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def _uvicorn_lines():
    """The lines uvicorn's access, error and ASGI-trace loggers write inside the block."""
    loggers = [logging.getLogger(name) for name in ("uvicorn.access", "uvicorn.error", "uvicorn.asgi")]
    capture = _Capture()
    for logger in loggers:
        logger.addHandler(capture)
    try:
        yield capture.lines
    finally:
        for logger in loggers:
            logger.removeHandler(capture)


def test_the_key_appears_in_no_log_line_of_a_real_server_at_trace_level(reward_fn):
    """uvicorn's access log prints the query string, and at trace level every ASGI scope: neither shows the key,
    for accepted and refused requests alike, nor does a line uvicorn logs before the app runs."""
    with served(create_reward_app(reward_fn, api_key=KEY), log_level="trace") as (port, _), \
            _uvicorn_lines() as lines:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            assert client.post(f"/get_reward?key={quote(KEY, safe='')}", json=_body()).status_code == 200
            assert client.post(f"/get_reward?key={SECRET_PART}-wrong", json=_body()).status_code == 401
            assert client.get(f"/health?key={quote(KEY, safe='')}").status_code == 200
        # uvicorn's own 503 (connection limit) logs the request line without the app seeing it.
        logging.getLogger("uvicorn.access").info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:1", "POST",
                                                 f"/get_reward?key={quote(KEY, safe='')}", "1.1", 503)
    text = "\n".join(lines)
    # The access and trace lines were written: the app removed the parameter, uvicorn's own lines are redacted.
    assert '"POST /get_reward HTTP/1.1" 200' in text and "/get_reward?key=*** HTTP/1.1\" 503" in text
    assert "'query_string': b'key=***'" in text  # logged (redacted) before the app removes it
    assert SECRET_PART not in text and quote(KEY, safe="") not in text


OTHER_CREDENTIALS = "&".join(f"{name}={SECRET_PART}-other" for name in (
    "api_key", "token", "access_token", "sig", "password", "X-API-Key", "client_secret", "auth", "apiKey"))


def test_no_credential_parameter_appears_in_a_log_line_or_an_answer(reward_fn):
    """Not only the key: every credential-looking parameter a client puts in the URL (OpenRLHF's remote_url is
    the user's to write) is redacted from the access and trace lines, and no answer echoes one."""
    with served(create_reward_app(reward_fn, api_key=KEY), log_level="trace") as (port, _), \
            _uvicorn_lines() as lines:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            answers = [client.post(f"/get_reward?key={quote(KEY, safe='')}&{OTHER_CREDENTIALS}", json=_body()),
                       client.post(f"/get_reward?{OTHER_CREDENTIALS}", json=_body()),  # no key: 401
                       client.post(f"/get_reward?key={quote(KEY, safe='')}&{OTHER_CREDENTIALS}", json={}),
                       client.get(f"/health?{OTHER_CREDENTIALS}")]
    assert [answer.status_code for answer in answers] == [200, 401, 422, 200]
    text = "\n".join(lines)
    assert '"POST /get_reward?api_key=***&token=***&access_token=***&sig=***' in text  # written, redacted
    assert SECRET_PART not in text and all(SECRET_PART not in answer.text for answer in answers)
