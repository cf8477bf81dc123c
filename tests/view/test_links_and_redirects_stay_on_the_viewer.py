"""Every link the viewer builds from an id leads to that id's page, whatever the id (``..``, ``.``, slashes, a
percent sign: a browser resolves ``.`` and ``..`` segments, encoded or not, before asking), and the one redirect it
issues (``?key=`` on any page) goes to a path on the viewer, never to ``//other-host``."""

from __future__ import annotations

import html as html_module
import re
from urllib.parse import unquote, urljoin, urlsplit

import httpx
import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")

from fastapi.testclient import TestClient  # noqa: E402

from proofgym.view import create_view_app  # noqa: E402

from ._real import session_ids  # noqa: E402
from .conftest import ODD_IDS, start_viewer, stop_viewer  # noqa: E402

_DOT = re.compile(r"%2e", re.IGNORECASE)


@pytest.fixture(scope="module")
def client(real_store):
    with TestClient(create_view_app(real_store.path)) as test_client:
        yield test_client


def _has_dot_segment(href: str) -> bool:
    """Whether a browser would resolve a segment of ``href``'s path as ``.`` or ``..`` (the URL standard counts
    ``%2e`` as a dot there)."""
    return any(_DOT.sub(".", segment) in (".", "..") for segment in urlsplit(href).path.split("/"))


def _links(page: str, css_class: str) -> dict[str, str]:
    """``{text: href}`` of the page's ``<a class="css_class">`` links."""
    return {html_module.unescape(re.sub(r"<[^>]+>", "", text)): html_module.unescape(href)
            for href, text in re.findall(rf'<a class="{css_class}" href="([^"]*)">(.*?)</a>', page, re.S)}


def _h1(page: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", re.search(r"<h1>(.*?)</h1>", page, re.S).group(1)))


def test_a_link_to_any_session_id_leads_to_that_session(real_store):
    """Followed on a real server (the test client decodes a path twice: ``%252E`` would reach the app as ``.``)."""
    assert set(session_ids(real_store.path, real_store.runs["odd"])) == set(ODD_IDS)
    viewer = start_viewer(["--traces", str(real_store.path)])
    try:
        listing = httpx.get(f"{viewer.url}/sessions", params={"run": real_store.runs["odd"]}).text
        links = _links(listing, "session-link")
        assert len(links) == len(ODD_IDS)
        for shown, href in links.items():
            assert href.startswith("/") and not href.startswith("//") and not _has_dot_segment(href), href
            page = httpx.get(urljoin(viewer.url + "/sessions", href))
            assert page.status_code == 200, href
            assert _h1(page.text) == f"session {shown}"
    finally:
        stop_viewer(viewer)


def test_a_link_to_a_run_named_dot_dot_leads_to_that_run(client, real_store):
    runs = _links(client.get("/").text, "run-link")
    href = runs[".."]
    assert not _has_dot_segment(href)
    assert _h1(client.get(urljoin("http://testserver/", href)).text) == "run .."
    # The session page's own links: its run, its comparison.
    [session] = session_ids(real_store.path, "..")
    page = client.get(f"/sessions/{session}").text
    assert not _has_dot_segment(_links(page, "run-link")[".."])


def test_every_id_segment_is_percent_encoded_dots_included(client, real_store):
    for session_id, href in {"a/b": "/sessions/a%2Fb", "a/../b": "/sessions/a%2F%2E%2E%2Fb",
                             "%2E%2E": "/sessions/%252E%252E", "..": "/sessions/?id=%2E%2E",
                             ".": "/sessions/?id=%2E"}.items():
        listing = client.get(f"/sessions?run={real_store.runs['odd']}").text
        assert _links(listing, "session-link")[session_id] == href
        assert unquote(href.rsplit("/", 1)[1].removeprefix("?id=")) == session_id


@pytest.mark.parametrize("path", ["//evil.example/x", "///evil.example/x", "/\\evil.example/x", "//evil.example"])
def test_the_key_redirect_stays_on_the_viewer(real_store, path):
    with TestClient(create_view_app(real_store.path, api_key="s3cret")) as locked:
        response = locked.get(f"http://testserver{path}?key=s3cret&run=r", follow_redirects=False)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("/") and not location.startswith(("//", "/\\"))
    assert urlsplit(urljoin("http://viewer.local/sessions", location)).netloc == "viewer.local"
    assert location.endswith("?run=r")
