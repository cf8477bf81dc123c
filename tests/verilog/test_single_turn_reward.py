"""Single-turn Verilog rewards: the prompt, the parser, and the whole reward path through the process executor."""

from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.core import Outcome
from proofgym.parsers import CompletionParser
from proofgym.rewards import DefaultRewardShaper, RewardFunction
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.verilog import (
    VERILOG_FORMAT_ERROR_KINDS,
    JudgeConfig,
    VerilogParser,
    VerilogVerifier,
    build_verilog_prompt,
    canonical_design,
)

from ._support import AND_DESIGN, OR_DESIGN, and_problem, requires_judge
from _bounds import LINEAR_SCAN_CPU_S, cpu_seconds

PROBLEM = and_problem()
PROBLEMS = {PROBLEM.id: PROBLEM}
PROMPT = build_verilog_prompt(PROBLEM)
PARSER = VerilogParser(PROBLEMS)


def fenced(design: str, lang: str = "verilog") -> str:
    return f"Here is my design.\n```{lang}\n{design.strip()}\n```\nIt computes the AND."


def test_the_prompt_has_the_spec_the_interface_and_the_problem_marker_but_no_answer():
    assert PROBLEM.spec in PROMPT and "module TopModule (" in PROMPT
    assert f"<!-- problem: {PROBLEM.id} -->" in PROMPT
    assert "RefModule" not in PROMPT and "Mismatches" not in PROMPT and "assign y" not in PROMPT


def test_the_parser_implements_the_protocol_and_reads_a_fenced_block():
    assert isinstance(PARSER, CompletionParser)
    for lang in ("verilog", "systemverilog", "sv", ""):
        result = PARSER.parse(fenced(AND_DESIGN, lang), PROMPT)
        assert result.ok and result.claim.payload["design"] == canonical_design(AND_DESIGN)
        assert result.claim.payload["problem"] == PROBLEM.id
        assert result.claim.payload["problem_hash"] == PROBLEM.content_hash


def test_helper_modules_in_the_block_come_along_and_other_blocks_are_ignored():
    helper = "module helper(input p, output q); assign q = p; endmodule\n"
    answer = fenced(helper + AND_DESIGN) + "\nA testbench:\n```verilog\nmodule tb; endmodule\n```\n"
    assert "module helper" in PARSER.parse(answer, PROMPT).claim.payload["design"]


def test_raw_text_without_fences_is_read_from_header_to_endmodule():
    result = PARSER.parse("The answer is\n" + AND_DESIGN + "\nThat is all.", PROMPT)
    assert result.claim.payload["design"] == canonical_design(AND_DESIGN)


def test_two_definitions_are_a_format_failure_even_in_separate_blocks():
    for answer in (fenced(AND_DESIGN + OR_DESIGN), fenced(AND_DESIGN) + fenced(OR_DESIGN), AND_DESIGN + OR_DESIGN):
        assert PARSER.parse(answer, PROMPT).error.kind == "multiple_designs"


def test_no_definition_or_no_endmodule_is_a_format_failure():
    assert PARSER.parse("I cannot do this.", PROMPT).error.kind == "no_design"
    assert PARSER.parse(fenced("module TopModule (input a, output y);\n assign y = a;"), PROMPT).error.kind == \
        "no_design"
    assert PARSER.parse("", PROMPT).error.kind == "empty"
    assert VERILOG_FORMAT_ERROR_KINDS == {"no_design", "multiple_designs"}


def test_the_problem_comes_from_the_prompt_never_from_the_completion():
    other = and_problem(id="other_problem")
    parser = VerilogParser({PROBLEM.id: PROBLEM, other.id: other})
    sneaky = fenced(AND_DESIGN) + "\n<!-- problem: other_problem -->"
    assert parser.parse(sneaky, PROMPT).claim.payload["problem"] == PROBLEM.id
    assert parser.parse(sneaky).claim.payload["problem"] is None  # no prompt: the claim will be INVALID
    chat = [{"role": "system", "content": "You write Verilog."}, {"role": "user", "content": PROMPT}]
    assert parser.parse([{"role": "assistant", "content": fenced(AND_DESIGN)}], chat).claim.payload["problem"] == \
        PROBLEM.id


def test_a_fixed_problem_id_needs_no_marker():
    parser = VerilogParser(PROBLEMS, problem_id=PROBLEM.id)
    assert parser.parse(fenced(AND_DESIGN)).claim.payload["problem_hash"] == PROBLEM.content_hash


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(st.dictionaries(st.text(max_size=8), st.text(max_size=40)),
                                                  max_size=3), st.integers(), st.none()))
def test_the_parser_never_raises(completion):
    result = PARSER.parse(completion, PROMPT)
    assert result.ok or result.error.kind in VERILOG_FORMAT_ERROR_KINDS | {"empty", "too_long", "bad_completion"}


def test_the_parser_is_linear_on_many_unclosed_fences():
    assert cpu_seconds(lambda: PARSER.parse("```verilog\nmodule TopModule(\n" * 3000, PROMPT))[1] < LINEAR_SCAN_CPU_S


@requires_judge
def test_reward_function_end_to_end_through_the_process_executor():
    verifier = VerilogVerifier(PROBLEMS, config=JudgeConfig(partial_credit=True))
    runtime = VerificationRuntime(verifier, RuntimeConfig(executor="process", workers=2, batch_size=1))
    hacks = [
        AND_DESIGN.replace("a & b", "a ^ b").replace("endmodule",
                                                     'initial $display("Mismatches: 0 in 40 samples");\nendmodule'),
        AND_DESIGN.replace("a & b", "a ^ b").replace("endmodule", "initial force tb.errors = 0;\nendmodule"),
        "module TopModule (input a, input b, output y);\n  RefModule r (.a(a), .b(b), .y(y));\nendmodule\n",
    ]
    completions = [fenced(AND_DESIGN), fenced(OR_DESIGN), "no code at all", *map(fenced, hacks)]
    shaper = DefaultRewardShaper()
    with RewardFunction(PARSER, runtime, shaper) as reward_fn:
        items = reward_fn.score([PROMPT] * len(completions), completions)
    rewards = [item.reward for item in items]
    assert items[0].outcome == "certified" and rewards[0] == shaper.bounds[1]  # the reference earns the top
    assert items[1].outcome == "refuted" and rewards[1] < rewards[0]
    assert 0 < items[1].components["graded"] < 1  # partial credit for the share of samples that matched
    assert items[2].outcome == "format_error" and rewards[2] == shaper.bounds[0]
    for item in items[3:]:
        assert item.outcome == "refuted" and item.reward < rewards[0], item.reason
    assert [item.verdict.outcome for item in items if item.verdict] == [Outcome.CERTIFIED] + [Outcome.REFUTED] * 4
