"""The viewer in headless Chromium (playwright driving Debian's chromium), over a store filled through the real
paths: every page opens without a console error, links lead from a run to a session to its proof, the rendered
text shows the decision, the deciding rules and the reward arithmetic, and a hostile completion stays text.
Screenshots go to the test's artifact folder, and with PROOFGYM_UPDATE_SCREENSHOTS=1 also to docs/images/ (the
README's), so that a test run leaves the checkout as it was."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from proofgym.traces import TraceStore

from .conftest import ROOT, HOSTILE

IMAGES = ROOT / "docs" / "images"


@pytest.fixture
def page(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    opened.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    opened.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    opened.problems = problems
    yield opened
    context.close()
    assert problems == [], problems


def _sessions(store_path: Path, run_id: str) -> list[str]:
    with TraceStore(store_path, create=False) as store:
        return [s.session_id for s in store.list_sessions(run_id=run_id)]


def _screenshot(page, name: str, tmp_path: Path) -> None:
    page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
    if os.environ.get("PROOFGYM_UPDATE_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(IMAGES / f"{name}.png"), full_page=False)


def test_every_page_opens_without_console_errors(page, viewer, filled_store):
    store = filled_store.path
    urls = ["/", "/sessions", "/sessions?order=-reward&page=2", "/sessions?outcome=certified"]
    for name, run_id in filled_store.runs.items():
        if run_id is None:
            continue
        urls.append(f"/runs/{run_id}")
        urls.append(f"/sessions?run={run_id}")
        first = _sessions(store, run_id)[0]
        urls += [f"/sessions/{first}", f"/compare?a={first}"]
    demo = _sessions(store, filled_store.runs["demo"])
    urls += [f"/groups/{demo[0]}", f"/compare?a={demo[0]}&b={demo[1]}"]
    for url in urls:
        response = page.goto(viewer.url + url)
        assert response.status == 200, url
        assert page.locator("main h1").count() == 1, url
        assert response.headers["content-security-policy"].startswith("default-src 'none'")
    response = page.goto(viewer.url + "/sessions?seed=abc")
    assert response.status == 400
    assert "query parameter 'seed' must be an integer" in page.locator(".error-message").inner_text()
    assert page.problems == ["console error: Failed to load resource: the server responded with a status of "
                             "400 (Bad Request)"]
    page.problems.clear()  # the one error asked for


def test_a_run_leads_to_a_certified_session_and_its_proof(page, viewer, filled_store, tmp_path):
    run_id = filled_store.runs["grant"]
    page.goto(viewer.url + "/")
    page.locator("a.run-link", has_text=run_id).click()
    assert page.locator("h1").inner_text() == f"run {run_id}"
    page.locator("a.session-link").first.click()
    assert page.locator("h1").inner_text().startswith("session ")
    proof = page.locator("section.panel-rulebook")
    assert proof.locator(".decision-value").inner_text() in ("permit", "deny")
    assert "certified" in proof.locator(".decision").inner_text()
    assert "proof independently checked" in proof.locator(".checker").inner_text()
    rules = proof.locator("ul.deciding-rules li").all_inner_texts()
    assert rules and all(re.fullmatch(r"(permit|deny)_\w+", r) for r in rules)
    assert proof.locator("table.firings tbody tr").count() >= 1
    breakdown = page.locator("table.breakdown").first
    contributions = [float(t) for t in breakdown.locator("tbody td:last-child").all_inner_texts()]
    total = float(page.locator(".total-reward").inner_text())
    assert sum(contributions) == pytest.approx(total)
    assert "✓ the contributions sum to the reward" in breakdown.inner_text()
    proof.scroll_into_view_if_needed()
    page.evaluate("document.querySelector('h2').scrollIntoView()")
    _screenshot(page, "view_certified_session", tmp_path)


def test_a_demo_rollout_shows_its_weights_and_its_grpo_group(page, viewer, filled_store):
    demo = _sessions(filled_store.path, filled_store.runs["demo"])
    page.goto(viewer.url + f"/sessions/{demo[0]}")
    page.locator("a.group-link").click()
    assert page.locator("h1").inner_text().startswith("GRPO group")
    samples = page.locator("section.sample")
    assert samples.count() >= 2
    rewards = {s.locator(".reward").inner_text() for s in samples.all()}
    assert (page.locator(".no-spread").count() == 1) == (len(rewards) == 1)
    page.goto(viewer.url + f"/runs/{filled_store.runs['demo']}")
    assert page.locator("svg.chart").count() >= 2  # reward and shares from metrics.csv, held-out accuracy


def test_a_verilog_failure_shows_the_phase_mismatches_log_and_design(page, viewer, filled_store, tmp_path):
    if filled_store.runs["verilog_wrong"] is None:
        pytest.skip(f"the Verilog judge cannot run here: {filled_store.skipped['verilog']}")
    (session,) = _sessions(filled_store.path, filled_store.runs["verilog_wrong"])
    page.goto(viewer.url + f"/sessions/{session}")
    panel = page.locator("section.panel-verilog")
    assert "refuted" in panel.locator(".decision").inner_text()
    assert panel.locator(".phase").inner_text() == "simulate"
    mismatches = int(panel.locator(".mismatches strong").inner_text())
    assert mismatches > 0
    assert f"has {mismatches} mismatches" in panel.locator("ul.hints").inner_text()
    assert "assign out = a | b;" in panel.locator("pre.code").inner_text()
    panel.scroll_into_view_if_needed()
    page.evaluate("document.querySelector('h2').scrollIntoView()")
    _screenshot(page, "view_verilog_failure", tmp_path)


def test_a_judged_session_shows_each_criterion_and_the_blend(page, viewer, filled_store):
    if filled_store.runs["judge"] is None:
        pytest.skip(f"the Verilog judge cannot run here: {filled_store.skipped['verilog']}")
    session = _sessions(filled_store.path, filled_store.runs["judge"])[0]
    page.goto(viewer.url + f"/sessions/{session}")
    criteria = page.locator("section.panel-judge table.criteria tbody").all_inner_texts()
    assert any("compilation_success" in c for c in criteria) and any("tests_passed" in c for c in criteria)
    blend = page.locator("table.breakdown", has_text="judge blend")
    names = blend.locator("tbody td:first-child").all_inner_texts()
    assert names == ["env (env_return)", "event (event_total)", "outcome (outcome_total)"]
    rows = [[float(x.replace("× ", "")) for x in r.split("\t")[1:]]
            for r in blend.locator("tbody tr").all_inner_texts()]
    for value, weight, contribution in rows:
        assert value * weight == pytest.approx(contribution)
    assert sum(r[2] for r in rows) == pytest.approx(float(page.locator(".total-reward").inner_text()))


def test_a_hostile_completion_renders_as_text(page, viewer, filled_store):
    (session,) = _sessions(filled_store.path, filled_store.runs["hostile"])
    page.goto(viewer.url + f"/sessions/{session}")
    completion = page.locator("pre.completion").first
    assert completion.inner_text().startswith("<script>document.title='pwned'</script><img src=x")
    assert page.title() != "pwned"
    assert page.locator("main script, main img:not(.frame), main a[href^='javascript']").count() == 0
    assert "more characters not shown" in page.locator(".omitted").first.inner_text()
    assert len(HOSTILE) > 20_000


def test_an_exported_run_opens_from_disk(page, filled_store, tmp_path):
    from .conftest import _cli

    out = tmp_path / "bundle"
    _cli("view", "--traces", str(filled_store.path), "--export", str(out), "--run", filled_store.runs["grant"])
    page.goto(out.joinpath("index.html").as_uri())
    assert page.locator("h1").inner_text() == f"run {filled_store.runs['grant']}"
    assert page.evaluate("getComputedStyle(document.querySelector('header')).display") == "flex"  # the CSS loaded
    page.locator("a.session-link").first.click()
    assert page.locator("section.panel-rulebook .decision-value").inner_text() in ("permit", "deny")
    page.locator("a.run-link").click()
    page.locator("a.all-sessions").click()
    assert page.locator("table.sessions tbody tr").count() == 32


def test_links_to_ids_a_browser_would_resolve_open_those_pages(page, real_store):
    """Chromium resolves ``.`` and ``..`` path segments (``%2E%2E`` too) before it asks: the links still arrive."""
    from .conftest import start_viewer, stop_viewer

    viewer = start_viewer(["--traces", str(real_store.path)])
    try:
        page.goto(viewer.url + f"/sessions?run={real_store.runs['odd']}")
        for name in ("..", ".", "a/../b", "%2E%2E"):
            page.locator("a.session-link", has_text=re.compile(rf"^{re.escape(name)}$")).click()
            assert page.locator("h1").inner_text() == f"session {name}"
            page.go_back()
        page.goto(viewer.url + "/")
        page.locator("a.run-link", has_text=re.compile(r"^\.\.$")).click()
        assert page.locator("h1").inner_text() == "run .."
    finally:
        stop_viewer(viewer)
