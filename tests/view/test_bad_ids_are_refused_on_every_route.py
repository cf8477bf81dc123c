"""Every route answers a hostile id with a 400 or a 404 and one line saying what was wrong, never a 500 (the test
client re-raises any exception the app lets through, so a traceback fails the test)."""

from __future__ import annotations

import logging
import re

import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")

from fastapi.testclient import TestClient  # noqa: E402

from proofgym.view import create_view_app  # noqa: E402

from ._real import eval_run  # noqa: E402

#: Ids as they appear in a URL (already percent-encoded): NUL, control characters, a lone surrogate (UTF-8 of
#: U+D800), invalid UTF-8, very long, dot segments, slashes plain and encoded, and an empty one.
HOSTILE_IDS = ["%00", "a%00b", "%01%1B%7F", "%0A%0D", "%ED%A0%80", "%FF%FE", "x" * 20_000, "%2E", "%2E%2E",
               "%2E%2E%2F%2E%2E", "/", "%2F", "a%2F..%2Fb", "%2F%2F", "..%5C..", "%E2%80%AE", ""]
ROUTES = ["/runs/{}", "/sessions/{}", "/groups/{}", "/compare?a={}", "/compare?a={}&b={}", "/sessions?run={}",
          "/sessions?cid={}", "/sessions?outcome={}", "/sessions?task={}", "/sessions?seed={}", "/sessions?order={}",
          "/runs/?id={}", "/sessions/?id={}", "/groups/?id={}", "/static/{}"]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """A viewer of a store that holds none of the hostile ids (one real eval of two sessions)."""
    path = tmp_path_factory.mktemp("ids") / "traces.db"
    eval_run(path, "grant_eligibility", seeds=[0, 1], policy="oracle")
    with TestClient(create_view_app(path)) as test_client:
        yield test_client


@pytest.mark.parametrize("route", ROUTES)
def test_a_hostile_id_is_a_400_or_404_with_one_line_of_reason(client, route, caplog):
    with caplog.at_level(logging.WARNING):
        for bad in HOSTILE_IDS:
            url = route.format(bad, bad)
            response = client.get(url)
            if response.status_code == 200:  # "" on a listing, or a filter that matches nothing
                assert "?" in route, url
                continue
            assert response.status_code in (400, 404), (url, response.status_code)
            message = re.search(r'<p class="error-message">(.*?)</p>', response.text, re.S)
            assert message is not None and "\n" not in message.group(1) and "Traceback" not in response.text, url
    assert not [r for r in caplog.records if r.exc_info], "a request logged a traceback"


def test_an_unknown_id_names_itself_and_the_store(client):
    response = client.get("/sessions/no-such-session")
    assert response.status_code == 404
    assert "session &#39;no-such-session&#39; is not in sqlite:///" in response.text
    nul = client.get("/sessions/a%00b")
    assert nul.status_code == 400 and "session_id must be a string without NUL characters" in nul.text
