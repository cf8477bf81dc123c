"""The viewer's pages over a store filled through the real paths (FastAPI's test client): what they show, what they
refuse, and that nothing stored runs as script."""

from __future__ import annotations

import dataclasses
import re
import shutil
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")
pytest.importorskip("jinja2", reason="the viewer needs jinja2: pip install -e '.[view]'")

from fastapi.testclient import TestClient  # noqa: E402

from proofgym.http import ServeError  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402
from proofgym.view import CONTENT_SECURITY_POLICY, ViewError, create_view_app, export_run, serve_view  # noqa: E402

from ._real import EVIL, session_ids  # noqa: E402
from .conftest import ODD_CID  # noqa: E402


@pytest.fixture(scope="module")
def client(real_store):
    with TestClient(create_view_app(real_store.path)) as test_client:
        yield test_client


def _no_markup_from_data(html: str) -> None:
    assert html.count("<script") == 1  # the page's own <script src=/static/view.js>
    assert "<img src=x" not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
    assert 'href="javascript' not in html and 'src="javascript' not in html


def _stored(real_store, session_id):
    with TraceStore(real_store.path, create=False) as store:
        return store.get_session(session_id)


def test_every_response_carries_the_strict_content_security_policy(client):
    for url in ("/", "/sessions", "/sessions/nope", "/static/view.js", "/health"):
        response = client.get(url)
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "'unsafe-inline'" not in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_viewer_is_read_only(client):
    for method in ("post", "put", "delete", "patch"):
        response = getattr(client, method)("/sessions")
        assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


def test_the_runs_page_counts_statuses_outcomes_and_rewards(client, real_store):
    with TraceStore(real_store.path, create=False) as store:
        stats = store.run_statistics(real_store.runs["oracle"])[real_store.runs["oracle"]]
    html = client.get("/").text
    assert real_store.runs["oracle"] in html and "certified 60" in html and "ok 60" in html
    assert f"{stats['reward']['max']:+.3f}" in html and f"{stats['reward']['min']:+.3f}" in html


@pytest.mark.parametrize("query, named", [
    ("seed=x", "query parameter 'seed' must be an integer"),
    ("min_reward=nan", "query parameter 'min_reward' must be a finite number"),
    ("status=weird", "query parameter 'status' must be one of ok, error, timeout, cancelled"),
    ("order=sideways", "query parameter 'order' must be one of"),
    ("page=0", "query parameter 'page' must be 1 or more"),
    ("colour=red", "query parameter 'colour' is not known"),
])
def test_a_bad_sessions_query_is_a_400_naming_the_parameter(client, query, named):
    response = client.get("/sessions?" + query)
    assert response.status_code == 400
    assert named in response.text.replace("&#39;", "'")


def test_the_sessions_page_filters_sorts_and_pages(client, real_store):
    oracle = real_store.runs["oracle"]
    first = client.get(f"/sessions?run={oracle}&outcome=certified&order=-reward").text
    assert "60 sessions · page 1 of 2" in first
    last = client.get(f"/sessions?run={oracle}&page=2").text
    assert "page 2 of 2" in last and last.count('class="session-link"') == 10 and 'class="prev"' in last
    assert 'class="next"' not in last
    assert client.get(f"/sessions?seed=3&run={oracle}").text.count('class="session-link"') == 1
    assert client.get(f"/sessions?task=grant_eligibility-0-7&run={oracle}").text.count('class="session-link"') == 1
    assert client.get(f"/sessions?min_score=0.5&max_score=1&run={oracle}").text.count("certified</span>") == 50
    assert client.get(f"/sessions?cid={ODD_CID}").text.count('class="session-link"') == 8


def test_a_session_page_shows_the_proof_and_the_arithmetic(client, real_store):
    session_id = session_ids(real_store.path, real_store.runs["oracle"])[2]
    evidence = _stored(real_store, session_id).steps[-1].verification.verdict["evidence"]
    firing = evidence["proof"]["firings"][0]
    fact, value = firing["conclusion"]["fact"], str(firing["conclusion"]["value"]).lower()
    html = client.get(f"/sessions/{session_id}").text
    assert all(f"<code>{rule}</code>" in html for rule in evidence["deciding_rules"])
    assert "proof independently checked" in html and f"{fact} = {value}" in html
    assert "✓ the contributions sum to the reward" in html


def test_a_demo_rollout_shows_value_times_weight_and_its_group(client, real_store):
    first = session_ids(real_store.path, real_store.runs["demo"])[0]
    html = client.get(f"/sessions/{first}").text
    # The demo stores each component's raw value and its contribution: the weight is their ratio.
    assert re.search(r"format</td><td class=\"num\">\+1.000</td><td class=\"num\">× \+0.100</td>", html)
    assert re.search(r"correct</td><td class=\"num\">\+1.000</td><td class=\"num\">× \+1.000</td>", html)
    group = client.get(f"/groups/{first}").text
    assert group.count('class="sample') == 4 and "no spread" not in group


def test_a_group_whose_samples_all_earned_the_same_reward_says_no_spread(client, real_store):
    first = session_ids(real_store.path, real_store.runs["flat"])[0]
    assert "no spread" in client.get(f"/groups/{first}").text
    assert client.get("/groups/nope").status_code == 404
    oracle = session_ids(real_store.path, real_store.runs["oracle"])[0]
    assert "is not a GRPO rollout" in client.get(f"/groups/{oracle}").text


def test_contributions_that_do_not_sum_to_the_reward_are_flagged(real_store, tmp_path):
    """A session whose stored reward was altered after the fact (the rest as the environment wrote it)."""
    session = _stored(real_store, session_ids(real_store.path, real_store.runs["oracle"])[0])
    expected = sum(session.steps[0].info["reward_components"].values())
    session.steps[0] = dataclasses.replace(session.steps[0], reward=5.0)
    shutil.copyfile(real_store.path, tmp_path / "off.db")
    with TraceStore(tmp_path / "off.db") as store:
        store.write_session(dataclasses.replace(session, session_id="altered"))
    with TestClient(create_view_app(tmp_path / "off.db")) as off:
        assert f"✗ the contributions sum to {expected:+.3f}, not +5.000" in off.get("/sessions/altered").text


def test_hostile_values_in_every_field_render_as_text(client, real_store):
    hostile = session_ids(real_store.path, real_store.runs["hostile"])[0]
    evil_run = real_store.runs["evil"]
    for url in ("/", "/sessions", f"/sessions/{hostile}", f"/sessions/{quote('evil-' + EVIL, safe='')}",
                f"/runs/{quote(evil_run, safe='')}", f"/sessions?run={quote(evil_run)}",
                f"/compare?a={quote('evil-' + EVIL)}", f"/sessions/{quote(EVIL, safe='')}"):
        response = client.get(url)
        assert response.status_code in (200, 404), url
        _no_markup_from_data(response.text)
    html = client.get(f"/sessions/{hostile}").text
    assert "&lt;script&gt;alert(" in html and "more characters not shown" in html
    invented = client.get(f"/sessions/{session_ids(real_store.path, real_store.runs['invented'])[0]}").text
    _no_markup_from_data(invented)
    assert '<code class="value">&lt;script&gt;alert(' in invented  # the completion's text, in a rejected fact


def test_comparison_lists_sessions_of_the_same_seed_then_shows_both(client, real_store):
    oracle = session_ids(real_store.path, real_store.runs["oracle"])
    with TraceStore(real_store.path, create=False) as store:
        same_seed = store.count_sessions(seed=3)
    picker = client.get(f"/compare?a={oracle[3]}").text
    assert picker.count('class="candidate"') == same_seed - 1
    both = client.get(f"/compare?a={oracle[3]}&b={oracle[13]}").text
    assert "step 0" in both and both.count('<pre class="text completion">') == 2


def test_a_key_is_asked_for_and_the_cookie_from_key_param_is_honoured(real_store):
    with TestClient(create_view_app(real_store.path, api_key="s3cret")) as locked:
        assert locked.get("/").status_code == 401
        assert locked.get("/", headers={"X-API-Key": "wrong"}).status_code == 401
        assert locked.get("/", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert locked.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        redirect = locked.get("/sessions?key=s3cret&run=run-a", follow_redirects=False)
        assert redirect.status_code == 303 and redirect.headers["location"] == "/sessions?run=run-a"
        assert "httponly" in redirect.headers["set-cookie"].lower()
        assert locked.get("/sessions?run=run-a").status_code == 200  # the cookie now


def test_binding_beyond_loopback_without_a_key_is_refused_before_binding(real_store, monkeypatch):
    for name in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ServeError, match="refusing to serve the viewer on '0.0.0.0' without an API key"):
        serve_view(real_store.path, host="0.0.0.0", port=1)
    with pytest.raises(ServeError, match="cannot open the trace store"):
        serve_view(real_store.path.with_name("missing.db"), port=1)


def test_an_export_is_a_bundle_of_files_that_link_to_each_other(real_store, tmp_path):
    with TraceStore(real_store.path, create=False) as store:
        result = export_run(store, real_store.runs["oracle"], tmp_path / "bundle")
        with pytest.raises(ViewError, match="run 'nope' is not in"):
            export_run(store, "nope", tmp_path / "other")
    assert result.sessions == 60 and result.index.is_file()
    files = sorted(p.relative_to(result.out_dir).as_posix() for p in result.out_dir.rglob("*.html"))
    assert len(files) == 1 + 2 + 60
    index = result.index.read_text()
    for href in re.findall(r'href="([^"]+)"', index):
        if not href.startswith("data:"):
            assert (result.out_dir / href).exists(), href
    assert not (tmp_path / "other").exists()
