"""The viewer's pages over a hand-made store (FastAPI's test client): what they show, what they refuse, and that
nothing stored runs as script."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")
pytest.importorskip("jinja2", reason="the viewer needs jinja2: pip install -e '.[view]'")

from fastapi.testclient import TestClient  # noqa: E402

from proofgym.serve import ServeError  # noqa: E402
from proofgym.traces import SessionTrace, StepTrace, TraceStore, VerificationEvent  # noqa: E402
from proofgym.view import CONTENT_SECURITY_POLICY, ViewError, create_view_app, export_run, serve_view  # noqa: E402

from ._sessions import EVIL, PNG_1PX, demo_session, grant_session  # noqa: E402


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "traces.db"
    with TraceStore(path) as store:
        store.start_run("run-a", kind="eval", env_name="grant_eligibility", config={"policy_name": "oracle"})
        store.write_sessions([grant_session(i) for i in range(120)])
        store.start_run("run-demo", kind="demo", env_name="grant_eligibility")
        store.write_sessions([demo_session(i) for i in range(8)])
        store.start_run(EVIL, kind=EVIL, env_name=EVIL, config={"model": EVIL})
        store.write_session(_hostile_session())
    return path


@pytest.fixture
def client(store_path):
    with TestClient(create_view_app(store_path)) as test_client:
        yield test_client


def _hostile_session() -> SessionTrace:
    verdict = {"outcome": EVIL, "reason": EVIL, "verifier": EVIL,
               "evidence": {"phase": EVIL, "sim_log": EVIL + "\n" * 3 + "x" * 50_000, "mismatches": EVIL,
                            "hints": [EVIL], "detail": EVIL}}
    step = StepTrace(index=0, observation={"text": EVIL, "data": {EVIL: EVIL}},
                     action={"tool": "write_file", "args": {"path": EVIL, "content": EVIL}}, reward=0.0,
                     info={EVIL: EVIL, "frame": "javascript:alert(1)", "image": "data:image/png;base64,<x>",
                           "reward_components": {EVIL: 0.0}},
                     verification=VerificationEvent(EVIL, EVIL, verdict))
    return SessionTrace(session_id="evil-" + EVIL, run_id=EVIL, env_name=EVIL, policy_id=EVIL,
                        correlation_id=EVIL, steps=[step], metadata={EVIL: EVIL, "task_id": EVIL[:100]},
                        error=EVIL, status="error")


def _no_markup_from_data(html: str) -> None:
    assert html.count("<script") == 1  # the page's own <script src=/static/view.js>
    assert "<img src=x" not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
    assert 'href="javascript' not in html and 'src="javascript' not in html


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


def test_the_runs_page_counts_statuses_outcomes_and_rewards(client):
    html = client.get("/").text
    assert "run-a" in html and "certified 60" in html and "refuted 60" in html and "oracle" in html
    assert "+0.600" in html and "+0.100" in html  # the reward max and min of run-a


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


def test_the_sessions_page_filters_sorts_and_pages(client):
    first = client.get("/sessions?run=run-a&outcome=certified&order=-reward").text
    assert "60 sessions · page 1 of 2" in first and "refuted" not in re.sub(r"<option[^>]*>[^<]*</option>", "", first)
    last = client.get("/sessions?run=run-a&page=3").text
    assert "page 3 of 3" in last and last.count('class="session-link"') == 20 and 'class="prev"' in last
    assert 'class="next"' not in last
    assert client.get("/sessions?seed=3&run=run-a").text.count('class="session-link"') == 12
    assert client.get("/sessions?task=rec-7").text.count('class="session-link"') == 1
    assert client.get("/sessions?min_score=0.5&max_score=1&run=run-a").text.count("certified</span>") == 50
    assert "run-a-s0042" in client.get("/sessions?cid=cid-42").text


def test_a_session_page_shows_the_proof_and_the_arithmetic(client):
    html = client.get("/sessions/run-a-s0002").text
    assert "permit_eligible" in html and "proof independently checked" in html and "is_adult = true" in html
    assert "not in the record" in html  # the rejected fact and its reason
    assert "✓ the contributions sum to the reward" in html


def test_a_demo_rollout_shows_value_times_weight_and_its_group(client):
    html = client.get("/sessions/run-demo-00001-0001").text
    assert re.search(r"correct</td><td class=\"num\">\+1.000</td><td class=\"num\">× \+1.000", html)
    assert f'src="{PNG_1PX}"' in html  # a stored frame is shown
    group = client.get("/groups/run-demo-00001-0001").text
    assert group.count('class="sample') == 4 and "no spread" not in group


def test_a_group_whose_samples_all_earned_the_same_reward_says_no_spread(tmp_path):
    with TraceStore(tmp_path / "flat.db") as store:
        store.start_run("run-demo", kind="demo")
        store.write_sessions([demo_session(i, reward=-1.0) for i in range(4)])
    with TestClient(create_view_app(tmp_path / "flat.db")) as flat:
        assert "no spread" in flat.get("/groups/run-demo-00001-0000").text
        assert flat.get("/groups/nope").status_code == 404


def test_contributions_that_do_not_sum_to_the_reward_are_flagged(tmp_path):
    session = grant_session(0)
    session.steps[0].reward = 5.0
    with TraceStore(tmp_path / "off.db") as store:
        store.start_run("run-a", kind="eval")
        store.write_session(session)
    with TestClient(create_view_app(tmp_path / "off.db")) as off:
        assert "✗ the contributions sum to +0.600, not +5.000" in off.get("/sessions/run-a-s0000").text


def test_hostile_values_in_every_field_render_as_text(client):
    from urllib.parse import quote

    for url in ("/", "/sessions", f"/sessions/{quote('evil-' + EVIL, safe='')}", f"/runs/{quote(EVIL, safe='')}",
                f"/compare?a={quote('evil-' + EVIL)}", f"/sessions/{quote(EVIL, safe='')}"):
        response = client.get(url)
        assert response.status_code in (200, 404), url
        _no_markup_from_data(response.text)
    html = client.get(f"/sessions/{quote('evil-' + EVIL, safe='')}").text
    assert "&lt;script&gt;alert(" in html and "more characters not shown" in html


def test_comparison_lists_sessions_of_the_same_seed_then_shows_both(client):
    picker = client.get("/compare?a=run-a-s0003").text
    assert picker.count('class="candidate"') == 11
    both = client.get("/compare?a=run-a-s0003&b=run-a-s0013").text
    assert "step 0" in both and both.count("completion") >= 2


def test_a_key_is_asked_for_and_the_cookie_from_key_param_is_honoured(store_path):
    with TestClient(create_view_app(store_path, api_key="s3cret")) as locked:
        assert locked.get("/").status_code == 401
        assert locked.get("/", headers={"X-API-Key": "wrong"}).status_code == 401
        assert locked.get("/", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert locked.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        redirect = locked.get("/sessions?key=s3cret&run=run-a", follow_redirects=False)
        assert redirect.status_code == 303 and redirect.headers["location"] == "/sessions?run=run-a"
        assert "httponly" in redirect.headers["set-cookie"].lower()
        assert locked.get("/sessions?run=run-a").status_code == 200  # the cookie now


def test_binding_beyond_loopback_without_a_key_is_refused_before_binding(store_path, monkeypatch):
    for name in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ServeError, match="refusing to serve the viewer on '0.0.0.0' without an API key"):
        serve_view(store_path, host="0.0.0.0", port=1)
    with pytest.raises(ServeError, match="cannot open the trace store"):
        serve_view(store_path.with_name("missing.db"), port=1)


def test_an_export_is_a_bundle_of_files_that_link_to_each_other(store_path, tmp_path):
    with TraceStore(store_path, create=False) as store:
        result = export_run(store, "run-a", tmp_path / "bundle")
        with pytest.raises(ViewError, match="run 'nope' is not in"):
            export_run(store, "nope", tmp_path / "other")
    assert result.sessions == 120 and result.index.is_file()
    files = sorted(p.relative_to(result.out_dir).as_posix() for p in result.out_dir.rglob("*.html"))
    assert len(files) == 1 + 3 + 120
    index = result.index.read_text()
    for href in re.findall(r'href="([^"]+)"', index):
        if not href.startswith("data:"):
            assert (result.out_dir / href).exists(), href
    assert not (tmp_path / "other").exists()
