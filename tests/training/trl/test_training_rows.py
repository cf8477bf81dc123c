"""What `proofgym train` trains and evaluates on: domain rows in each prompt format, JSONL files, held-out split."""

import json

import pytest

from proofgym.config import ConfigError, parse_run_config
from proofgym.training.trl._run import read_rows, training_rows, warm_up


class _Tokenizer:
    def __init__(self, chat_template=None):
        self.chat_template = chat_template


def _run(**train):
    base = {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility", "n": 40, "seed": 0},
            "heldout": {"n": 20, "seed": 1}}
    return parse_run_config({"verifier": {"kind": "rulebook", "domain": "grant_eligibility"},
                             "parser": {"kind": "json_block", "decisions": ["permit", "deny"]},
                             "training": {**base, **train}})


@pytest.mark.parametrize("prompt_format, template, kind", [
    ("auto", None, str), ("auto", "{{ messages }}", list), ("chat", None, list), ("plain", "x", str),
    ("record", "x", str),
])
def test_domain_rows_come_in_the_configured_prompt_format(prompt_format, template, kind):
    run = _run(dataset={"domain": "grant_eligibility", "n": 8, "prompt_format": prompt_format})
    rows, heldout = training_rows(run, run.training, _Tokenizer(template))
    assert all(isinstance(row["prompt"], kind) for row in rows + heldout)
    assert {"gold", "source_facts", "branch"} <= set(rows[0])
    if prompt_format == "record":
        assert "<decision>" not in rows[0]["prompt"]  # the record alone, no instructions
        assert len(rows[0]["prompt"]) < 300


def test_training_rows_never_repeat_a_held_out_case():
    run = _run(dataset={"domain": "grant_eligibility", "n": 400, "seed": 0}, heldout={"n": 400, "seed": 1})
    rows, heldout = training_rows(run, run.training, _Tokenizer())
    held = {json.dumps(r["source_facts"], sort_keys=True) for r in heldout}
    assert not any(json.dumps(r["source_facts"], sort_keys=True) in held for r in rows)
    assert len(heldout) == 400 and 380 < len(rows) < 400  # seeds 0 and 1 share a few records


def test_a_jsonl_file_is_read_with_errors_naming_file_and_line(tmp_path):
    good = tmp_path / "rows.jsonl"
    good.write_text(json.dumps({"prompt": "Applicant is 17.", "gold": "deny", "source_facts": {"age": 17}}) + "\n\n"
                    + json.dumps({"prompt": [{"role": "user", "content": "hi"}]}) + "\n")
    assert [row.get("gold") for row in read_rows(good)] == ["deny", None]
    cases = {
        "{nope": "bad.jsonl:1: column 2: not valid JSON",
        "[1]": "bad.jsonl:1: expected a JSON object",
        json.dumps({"prompt": ""}): "bad.jsonl:1: 'prompt' must be a non-empty string or a list of chat messages",
        json.dumps({"prompt": "x", "source_facts": [1]}): "bad.jsonl:1: 'source_facts' must be an object",
        "": "bad.jsonl: the dataset file has no rows",
    }
    for text, message in cases.items():
        (tmp_path / "bad.jsonl").write_text(text + "\n")
        with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
            read_rows(tmp_path / "bad.jsonl")
    with pytest.raises(ConfigError, match="dataset file not found"):
        read_rows(tmp_path / "missing.jsonl")


def test_held_out_rows_need_a_gold_decision(tmp_path):
    (tmp_path / "held.jsonl").write_text(json.dumps({"prompt": "x"}) + "\n")
    run = _run(heldout={"file": str(tmp_path / "held.jsonl")})
    with pytest.raises(ConfigError, match="heldout row 0: needs a string 'gold'"):
        training_rows(run, run.training, _Tokenizer())


def test_the_format_warm_up_needs_a_json_block_parser_with_decisions():
    run = parse_run_config({"verifier": {"kind": "rulebook", "domain": "grant_eligibility"},
                            "parser": {"kind": "json_block"},
                            "training": {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility"},
                                      "warmup": {"steps": 1}}})
    with pytest.raises(ConfigError, match="training.warmup: needs parser.kind json_block with parser.decisions"):
        warm_up(run, run.training, None, None, [{"prompt": "x", "source_facts": {"age": 1}}])
