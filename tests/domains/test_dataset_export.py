"""Dataset rows: gold labels from the kernel, prompts in both shapes, JSONL and Hugging Face export."""

import builtins
import json

import pytest

from proofgym.domains import build_dataset, build_example, gold_decision, to_hf_dataset, write_jsonl
from proofgym.domains import build_system_prompt, check_system_prompt


def test_system_prompt_states_the_contract(domain):
    assert check_system_prompt(build_system_prompt(domain.spec), domain.spec) == []


def test_render_states_every_fact(domain):
    """Changing any one fact changes the text the model reads: no fact is left out of it."""
    for record in domain.generate(0, 3 * len(domain.branches)):
        text = domain.render(record)
        for name, value in record.facts.items():
            if isinstance(value, bool):
                other = not value
            elif isinstance(value, str):
                other = value + "_other"
            else:
                other = value + 7
            changed = type(record)(id=record.id, facts={**record.facts, name: other}, branch=record.branch)
            assert domain.render(changed) != text, name


def test_rows_carry_the_kernels_gold_and_the_source_facts(domain):
    rows = build_dataset(domain, seed=1, n=60)
    assert [row["id"] for row in rows] == [r.id for r in domain.generate(1, 60)]
    for row, record in zip(rows, domain.generate(1, 60)):
        assert set(row) == {"id", "prompt", "gold", "source_facts", "branch"}
        assert row["gold"] == gold_decision(domain, record.facts) == domain.branches[row["branch"]]
        assert row["source_facts"] == dict(record.facts)
        assert isinstance(row["prompt"], str) and row["prompt"].endswith(domain.render(record))


def test_chat_rows_hold_system_and_user_messages(domain):
    record = domain.generate(0, 1)[0]
    row = build_example(domain, record, chat=True)
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert row["prompt"][0]["content"] == build_system_prompt(domain.spec)
    assert row["prompt"][1]["content"] == domain.render(record)


def test_gold_decision_refuses_facts_the_gate_rejects(domain):
    facts = dict(domain.generate(0, 1)[0].facts)
    facts.pop(next(iter(facts)))
    with pytest.raises(ValueError, match="certified no decision"):
        gold_decision(domain, facts)


@pytest.mark.parametrize("chat", [False, True], ids=["plain", "chat"])
def test_jsonl_round_trips(domain, tmp_path, chat):
    rows = build_dataset(domain, seed=2, n=30, chat=chat)
    path = write_jsonl(rows, tmp_path / "out" / "rows.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == rows


@pytest.mark.parametrize("chat", [False, True], ids=["plain", "chat"])
def test_hugging_face_dataset_round_trips(domain, chat):
    pytest.importorskip("datasets")
    rows = build_dataset(domain, seed=3, n=30, chat=chat)
    dataset = to_hf_dataset(rows)
    assert len(dataset) == len(rows) and set(dataset.column_names) == set(rows[0])
    assert dataset.to_list() == rows


def test_missing_datasets_package_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_datasets(name, *args, **kwargs):
        if name == "datasets":
            raise ImportError("No module named 'datasets'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_datasets)
    with pytest.raises(ImportError, match=r"proofgym\[data\]"):
        to_hf_dataset([{"id": "x"}])
