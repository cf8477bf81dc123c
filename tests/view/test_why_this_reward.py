"""The "why this reward" panel shows the evidence each real producer stores: the rule kernel's rejected facts (field,
value, reasons), the parser's reason for a format failure and the floor it scored, the Verilog judge's simulation
log and compile errors, the per-criterion verdicts of programmatic and LLM judges, and Crafter's achievements.
Every store is filled through proofgym's own paths; the expected text is read from what those paths stored."""

from __future__ import annotations

import html as html_module
import re

import pytest

pytest.importorskip("fastapi", reason="the viewer needs the serve extra: pip install -e '.[view]'")
pytest.importorskip("jinja2", reason="the viewer needs jinja2: pip install -e '.[view]'")

from _judge import judge_problem  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from taskapp._support import ScriptedModelServer  # noqa: E402

from proofgym.traces import TraceStore  # noqa: E402
from proofgym.view import create_view_app  # noqa: E402

from ._real import BIDI, BROKEN_AND_GATE, WRONG_AND_GATE, eval_run, judge_run, session_ids  # noqa: E402

pytest.importorskip("crafter", reason="the Crafter evidence needs the crafter package: pip install 'proofgym[crafter]'")


def _stored(path, session_id):
    with TraceStore(path, create=False) as store:
        return store.get_session(session_id)


def _page(path, session_id) -> str:
    with TestClient(create_view_app(path)) as client:
        response = client.get(f"/sessions/{session_id}")
    assert response.status_code == 200
    return response.text


def _rows(page: str, table_class: str) -> list[list[str]]:
    """The body rows of the first ``<table class="table_class">``, each cell as the text a reader sees."""
    table = re.search(rf'<table class="{table_class}">(.*?)</table>', page, re.S)
    assert table is not None, f"no table.{table_class}"
    body = re.search(r"<tbody>(.*?)</tbody>", table.group(1), re.S).group(1)
    return [[html_module.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def _text_of(page: str, css_class: str) -> str:
    found = re.search(rf'<p class="{css_class}">(.*?)</p>', page, re.S)
    assert found is not None, f"no p.{css_class}"
    return html_module.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def _shown(text: str) -> str:
    """``text`` as the page shows it: each control character a ``<U+XXXX>`` marker."""
    return re.sub("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", lambda m: f"<U+{ord(m.group()):04X}>", text)


# -- the rule kernel -------------------------------------------------------------------------------------------------

def test_rejected_facts_show_the_field_value_and_reasons_the_kernel_stored(real_store):
    [session_id] = session_ids(real_store.path, real_store.runs["invented"])
    verdict = _stored(real_store.path, session_id).steps[-1].verification.verdict
    rejected = verdict["evidence"]["rejected_facts"]
    assert {r["field"] for r in rejected} >= {"pets", "motto"}
    rows = _rows(_page(real_store.path, session_id), "rejected")
    expected = [[r["field"], str(r["value"]), "; ".join(r["reasons"])] for r in rejected]
    assert rows == [[cell if i != 1 else _shown(cell) for i, cell in enumerate(row)] for row in expected]
    assert all(row[0] and row[2] for row in rows)  # no empty "— | —" row


def test_the_shapers_account_of_the_reward_is_shown_beside_the_proof(real_store):
    [session_id] = session_ids(real_store.path, real_store.runs["invented"])
    reason = _stored(real_store.path, session_id).steps[-1].info["reason"]
    assert "rejected facts" in reason
    assert _text_of(_page(real_store.path, session_id), "reward-reason") == f"reward: {reason}"


# -- format failures -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("run, reason_key, said", [
    ("unreadable", "format_error", "the parser could not read the completion"),
    ("flat", "reason", "the parser could not read the completion"),
    ("no_answer", "error", "the episode ended without an answer"),
], ids=["rulebook-environment", "grpo-demo", "no-answer"])
def test_a_format_failure_shows_the_parsers_reason_and_the_floor(real_store, run, reason_key, said):
    session_id = session_ids(real_store.path, real_store.runs[run])[0]
    step = _stored(real_store.path, session_id).steps[-1]
    assert step.info["outcome"] in ("format_error", "no_answer") and step.reward == -1.0
    page = _page(real_store.path, session_id)
    assert "no verdict or rubric evidence stored" not in page
    assert _text_of(page, "parser-reason") == f"{said}: {step.info[reason_key]}"
    assert "format floor -1.000" in _text_of(page, "floor")
    assert "✓ the contributions sum to the reward" in page


# -- the Verilog judge -----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def verilog_store(tmp_path_factory):
    problem = judge_problem()
    if problem is not None:
        pytest.skip(f"the Verilog judge cannot run here: {problem}")
    path = tmp_path_factory.mktemp("verilog") / "traces.db"
    runs = {}
    for name, design in (("wrong", WRONG_AND_GATE), ("broken", BROKEN_AND_GATE)):
        actions = [{"tool": "write_file", "args": {"path": "top.v", "content": design}}, {"tool": "submit", "args": {}}]
        runs[name] = eval_run(path, "verilog", seeds=[0], actions=actions, max_turns=4, env_config={"max_turns": 4})
    runs["judged"] = judge_run(path, runs["wrong"], "verilog", "--skip-llm-criteria")
    return path, runs


def _verilog_evidence(path, session_id):
    return _stored(path, session_id).steps[-1].verification.verdict["evidence"]


def test_a_simulation_mismatch_shows_the_log_hints_and_design(verilog_store):
    path, runs = verilog_store
    [session_id] = session_ids(path, runs["wrong"])
    evidence = _verilog_evidence(path, session_id)
    page = _page(path, session_id)
    log = re.search(r'<pre class="text log sim-log">(.*?)</pre>', page, re.S)
    assert log is not None and html_module.unescape(log.group(1)) == evidence["sim_log"]
    hints = re.search(r'<ul class="hints">(.*?)</ul>', page, re.S).group(1)
    assert [html_module.unescape(h) for h in re.findall(r"<li>(.*?)</li>", hints)] == evidence["hints"]
    assert f"mismatches <strong>{evidence['mismatches']}</strong> / samples {evidence['samples']}" in page
    design = re.search(r'<pre class="text code">(.*?)</pre>', page, re.S)
    assert html_module.unescape(design.group(1)) == WRONG_AND_GATE


def test_a_design_that_does_not_compile_shows_the_compile_errors(verilog_store):
    path, runs = verilog_store
    [session_id] = session_ids(path, runs["broken"])
    evidence = _verilog_evidence(path, session_id)
    assert "syntax error" in evidence["compile_log"]
    page = _page(path, session_id)
    log = re.search(r'<pre class="text log compile-log">(.*?)</pre>', page, re.S)
    assert log is not None and html_module.unescape(log.group(1)) == evidence["compile_log"]
    assert html_module.unescape(re.search(r'<span class="detail">(.*?)</span>', page).group(1)) == evidence["detail"]


def test_a_programmatic_judges_verdicts_are_shown_per_criterion(verilog_store):
    path, runs = verilog_store
    [session_id] = session_ids(path, runs["judged"])
    session = _stored(path, session_id)
    levels = [r.annotation for step in session.steps for r in step.event_rewards if r.source == "judge"]
    levels.append(session.outcome_reward.annotation["outcome"])
    page = _page(path, session_id)
    shown = [row for n in range(page.count('<table class="criteria">'))
             for row in _rows(_nth_table(page, "criteria", n), "criteria")]
    expected = [[c["id"], f"{c['score']:.3f}", c["reason"], c["judge"]] for level in levels for c in level["criteria"]]
    assert [[row[0], row[1].lstrip("+"), row[2], row[3]] for row in shown] == expected


def _nth_table(page: str, table_class: str, n: int) -> str:
    """The page cut so that its ``n``-th ``table.table_class`` comes first."""
    marker = f'<table class="{table_class}">'
    return marker + page.split(marker)[n + 1]


# -- an LLM judge ----------------------------------------------------------------------------------------------------

def test_an_llm_judges_verdicts_are_shown_with_its_reasons(real_store, tmp_path):
    rubric = tmp_path / "rubric.toml"
    rubric.write_text('id = "explained"\ncriteria = [{id = "explains", description = "The answer explains its '
                      'decision."}]\n')
    said = "it names no rule " + BIDI
    reply = {"verdicts": [{"id": "explains", "reason": said, "score": 0}]}
    store = tmp_path / "traces.db"
    store.write_bytes(real_store.path.read_bytes())
    with ScriptedModelServer([reply]) as judge:
        judged = judge_run(store, real_store.runs["invented"], rubric, "--judge-url", judge.url, "--model", "judge-m")
    [session_id] = session_ids(store, judged)
    [criterion] = _stored(store, session_id).outcome_reward.annotation["outcome"]["criteria"]
    assert criterion["judge"] == "llm:judge-m"
    page = _page(store, session_id)
    assert _rows(page, "criteria") == [["explains", "0.000", _shown(criterion["reason"]), "llm:judge-m"]]
    assert not any(ch in page for ch in BIDI)


# -- Crafter ---------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def crafter_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("crafter") / "traces.db"
    run = eval_run(path, "crafter", seeds=[0], policy="oracle", max_turns=20,
                   env_config={"max_turns": 20, "env_params": {"max_steps_per_episode": 200},
                               "frames": {"store": True, "every": 5}})
    return path, run


def test_crafter_achievements_are_shown_at_the_step_that_unlocked_them(crafter_store):
    path, run = crafter_store
    [session_id] = session_ids(path, run)
    session = _stored(path, session_id)
    unlocked = {step.index: step.info["unlocked"] for step in session.steps if step.info.get("unlocked")}
    assert unlocked  # the oracle unlocks some within 20 turns
    rows = _rows(_page(path, session_id), "achievements")
    shown = {int(step): names.split(", ") for step, names, _ in rows if names}
    assert shown == unlocked
    last = session.steps[-1].info["achievements"]
    assert rows[-1][2].split(", ") == sorted(name for name, count in last.items() if count)


def test_crafter_frames_stored_by_the_environment_are_shown(crafter_store):
    path, run = crafter_store
    [session_id] = session_ids(path, run)
    assert '<img class="frame"' in _page(path, session_id)
