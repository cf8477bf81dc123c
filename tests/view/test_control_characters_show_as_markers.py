"""A bidirectional control in model text (U+202E and its kin) cannot reorder a page: on every page that shows
stored text, each one is a visible ``<U+XXXX>`` marker, from the one filter every template's output goes through."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")

from fastapi.testclient import TestClient  # noqa: E402

from proofgym.traces import TraceStore  # noqa: E402
from proofgym.view import create_view_app, export_run  # noqa: E402

from ._real import BIDI, session_ids  # noqa: E402

MARKERS = [f"<span class=control>&lt;U+{ord(c):04X}&gt;</span>" for c in BIDI]


def _shows_markers_only(html: str, where: str) -> None:
    assert not [f"U+{ord(c):04X}" for c in BIDI if c in html], where
    assert all(marker in html for marker in MARKERS), where


def test_bidi_controls_show_as_markers_on_every_page(real_store):
    odd = real_store.runs["odd"]
    invented = session_ids(real_store.path, real_store.runs["invented"])[0]
    flat = session_ids(real_store.path, real_store.runs["flat"])
    bidi_id = "bidi-" + BIDI
    pages = {
        "session (reasoning, rejected fact value)": f"/sessions/{invented}",
        "session whose id has them": f"/sessions/{quote(bidi_id, safe='')}",
        "sessions list": f"/sessions?run={odd}",
        "compare": f"/compare?a={quote(bidi_id)}&b={invented}",
        "compare picker": f"/compare?a={quote(bidi_id)}",
        "group": f"/groups/{flat[0]}",
        "demo session": f"/sessions/{flat[1]}",
    }
    with TestClient(create_view_app(real_store.path)) as client:
        for where, url in pages.items():
            response = client.get(url)
            assert response.status_code == 200, where
            _shows_markers_only(response.text, where)


def test_bidi_controls_show_as_markers_in_an_export(real_store, tmp_path):
    with TraceStore(real_store.path, create=False) as store:
        result = export_run(store, real_store.runs["odd"], tmp_path / "bundle")
    pages = {p.relative_to(result.out_dir).as_posix(): p.read_text(encoding="utf-8")
             for p in result.out_dir.rglob("*.html")}
    assert len(pages) == 1 + 1 + result.sessions
    for name, html in pages.items():
        if name.startswith("s/") or name == "sessions/page-1.html":  # every answer, and one id, has them all
            _shows_markers_only(html, name)
        assert not any(c in html for c in BIDI), name


def test_a_form_field_keeps_the_value_it_was_given(real_store):
    """The filter form gives back what was typed (a marker in a field would change the filter it submits)."""
    with TestClient(create_view_app(real_store.path)) as client:
        html = client.get("/sessions", params={"outcome": "x\u202ey"}).text
    assert re.search('<input name="outcome" value="x\u202ey"', html)
