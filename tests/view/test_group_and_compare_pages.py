"""The GRPO group page reads its samples together (a fixed number of queries, however large the group), and the
comparison shows each action as the session page does (a completion as text, not JSON with ``\\n`` escapes)."""

from __future__ import annotations

import html as html_module
import re

import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import event  # noqa: E402

from proofgym.view import create_view_app  # noqa: E402

from ._real import DEMO_RIGHT, DEMO_UNREADABLE, DEMO_WRONG, grpo_step, session_ids  # noqa: E402


def _queries_for_group_page(path, session_id) -> tuple[int, int]:
    statements: list[str] = []
    app = create_view_app(path)
    event.listen(app.state.store._engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: statements.append(statement))
    with TestClient(app) as client:
        page = client.get(f"/groups/{session_id}")
    assert page.status_code == 200
    return len(statements), page.text.count('class="sample')


def test_the_group_page_takes_as_many_queries_for_32_samples_as_for_4(tmp_path):
    counts = {}
    for size in (4, 32):
        path = tmp_path / f"group-{size}.db"
        texts = [DEMO_RIGHT, DEMO_WRONG, DEMO_UNREADABLE, DEMO_RIGHT] * (size // 4)
        first = grpo_step(path, "demo", 3, [texts, texts])[0]
        queries, samples = _queries_for_group_page(path, first)
        assert samples == size
        counts[size] = queries
    assert counts[32] == counts[4]  # one read per table, not one round of reads per sample


def _completions(page: str) -> list[str]:
    return [html_module.unescape(text) for text in re.findall(r'<pre class="text completion">(.*?)</pre>', page, re.S)]


def test_the_comparison_shows_each_action_as_its_session_page_does(real_store):
    a, b = session_ids(real_store.path, real_store.runs["oracle"])[3:5]
    with TestClient(create_view_app(real_store.path)) as client:
        compared = _completions(client.get(f"/compare?a={a}&b={b}").text)
        alone = [_completions(client.get(f"/sessions/{sid}").text) for sid in (a, b)]
    assert compared == alone[0] + alone[1]
    assert all("\n" in text and "\\n" not in text and not text.startswith("{") for text in compared)
