"""Drafting a rulebook from plain English against a scripted model server (real HTTP on loopback): the kernel's
problems go back to the model in the repair round, the facts are the data's whatever the model writes, the answer is
read as untrusted text (fences, aliases, control characters, size), and a model that never gets it right ends in one
error line with its last draft kept for review."""

from __future__ import annotations

import pytest
import yaml
from _scripted_model import INVALID, POLICY, VALID, ScriptedModel, rulebook_answer

from proofgym.domains import draft_rulebook, get_domain
from proofgym.formats import load_yaml
from proofgym.http import ChatClient, RetryPolicy, chat_completions_url
from proofgym.rules import parse_rulebook, rulebook_coverage


def loan_facts() -> dict:
    """The shipped loan domain's facts section, read from its rulebook file as the kernel reads it."""
    return load_yaml(get_domain("loan").rulebook_path.read_text(encoding="utf-8"))["facts"]


def client_for(model: ScriptedModel) -> ChatClient:
    return ChatClient(chat_completions_url(model.url), timeout_s=10.0, retry=RetryPolicy(max_retries=0))


def test_a_rejected_draft_is_repaired_with_the_kernel_s_problems_and_the_result_covers_the_data():
    with ScriptedModel([INVALID, VALID]) as model:
        draft = draft_rulebook(POLICY, loan_facts(), client=client_for(model), model="scripted", rounds=3,
                               source="rulebook.yaml")
    assert draft.ok and draft.error is None, draft.error
    assert [len(r.problems) > 0 for r in draft.rounds] == [True, False]
    assert len(model.requests) == 2
    # Round 1's problem is the kernel's: a rule names a fact the data does not have (the model's own facts:
    # section, declaring it, was replaced by the data's).
    problem = draft.rounds[0].problems[0]
    assert problem.startswith("rulebook.yaml: rule 'approve_high_income': ") and "income" in problem
    repair = model.requests[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert problem in repair[-1]["content"]
    assert repair[2]["content"] == INVALID
    assert "max_tokens" not in model.requests[0]  # the server's own default (serve-model's limit) applies
    assert model.requests[0]["model"] == "scripted" and model.requests[0]["temperature"] == 0.0
    first = model.requests[0]["messages"]
    assert POLICY in first[1]["content"] and "credit_history_months" in first[1]["content"]
    assert '"decision_rules"' in first[0]["content"]  # the JSON Schema of a rulebook

    # The file it writes is a draft to review, and the kernel reads it back to the same rulebook.
    text = draft.yaml_text(["drafted by a test"])
    assert text.startswith("# drafted by a test\n# DRAFT (VALID per the kernel, after 2 round(s))")
    assert "`proofgym rules validate` must pass" in text
    again = parse_rulebook(load_yaml(text), source="rulebook.yaml")
    assert again.content_hash == draft.rulebook.content_hash
    assert {f.name for f in again.facts} == set(loan_facts())

    records = [r.facts for r in get_domain("loan").generate(3, 400)]
    report = rulebook_coverage(draft.rulebook, records)
    assert report.never_fired == ("refer_ancient_applicant",)
    assert report.no_rule_applies > 0  # near-prime applicants with a long history: no rule decides them
    findings = report.findings()
    assert any(line.startswith("decision rule 'refer_ancient_applicant' never fires") for line in findings)
    assert any("no decision rule applies to get the default 'deny'" in line for line in findings)


def test_a_model_that_never_gets_it_right_ends_in_one_line_with_its_last_draft_kept():
    with ScriptedModel([INVALID]) as model:
        draft = draft_rulebook(POLICY, loan_facts(), client=client_for(model), model="scripted", rounds=2,
                               source="rulebook.yaml")
    assert not draft.ok and len(model.requests) == 2 and len(draft.rounds) == 2
    assert draft.error.startswith("no valid rulebook after 2 round(s); the last draft's first problem: "
                                  "rulebook.yaml: rule 'approve_high_income'")
    assert "\n" not in draft.error
    text = draft.yaml_text()
    assert "# DRAFT (INVALID: the kernel rejects it, after 2 round(s))" in text
    assert "approve_high_income" in yaml.safe_load(text)["decision_rules"][1]["name"]


@pytest.mark.parametrize("answer, expected", [
    ("```yaml\nname: x\nname: y\n```", "rulebook.yaml: "),                       # a key given twice
    ("```yaml\na: &x [1]\nb: *x\n```", "rulebook.yaml: "),                       # an alias
    ("```yaml\n- just\n- a list\n```", "expected a rulebook (a YAML mapping) at the top level, got list"),
    ("name: bad\u202eexplain\n", "line 1: control character U+202E"),
    ("x" * 70_000, "the answer is 70000 characters long"),
])
def test_untrusted_answers_are_problems_sent_back_not_crashes(answer, expected):
    with ScriptedModel([answer, VALID]) as model:
        draft = draft_rulebook(POLICY, loan_facts(), client=client_for(model), model="scripted", rounds=2,
                               source="rulebook.yaml")
    assert draft.ok
    assert expected in draft.rounds[0].problems[0]
    assert expected in model.requests[1]["messages"][-1]["content"]


def test_an_answer_without_a_fence_is_read_whole_and_the_name_is_the_caller_s():
    with ScriptedModel([rulebook_answer(VALID.split("decision_rules:\n", 1)[1].split("```")[0], fence=False)]) as m:
        draft = draft_rulebook(POLICY, loan_facts(), client=client_for(m), model="scripted", rounds=1,
                               name="my_loans")
    assert draft.ok and draft.rulebook.name == "my_loans" and len(draft.rounds) == 1


def test_a_server_that_fails_is_one_error_line():
    with ScriptedModel([VALID]) as model:
        url = model.url
    draft = draft_rulebook(POLICY, loan_facts(), model="scripted", rounds=2,
                           client=ChatClient(chat_completions_url(url), timeout_s=2.0,
                                             retry=RetryPolicy(max_retries=0)))
    assert not draft.ok and draft.rounds == ()
    assert draft.error.startswith("the model server: ") and "\n" not in draft.error



def test_an_unreadable_last_answer_is_saved_bounded_and_with_its_control_characters_shown():
    with ScriptedModel(["y" * 70_000, "```yaml\nname: bad\u202eexplain\n```"]) as model:
        draft = draft_rulebook(POLICY, loan_facts(), client=client_for(model), model="scripted", rounds=2)
    assert not draft.ok and draft.data is None
    assert len(draft.rounds[0].answer) == 64_000  # kept, and sent back, up to the bound
    assert len(model.requests[1]["messages"][2]["content"]) == 64_000
    text = draft.yaml_text()
    assert "\u202e" not in text and "name: bad<U+202E>explain" in text

    with ScriptedModel(["y" * 70_000]) as model:
        draft = draft_rulebook(POLICY, loan_facts(), client=client_for(model), model="scripted", rounds=1)
    text = draft.yaml_text()
    assert text.endswith("y" * 64_000 + "\n") and len(text) < 64_000 + 1_000
