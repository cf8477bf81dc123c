"""VerilogEval v2: every reference solution passes its own testbench, and a copy with an output inverted fails.

Three of the 156 problems cannot be judged with Icarus Verilog 11, so every design for them is
``INVALID`` (never paid, never punished): Prob099_m2014_q6c (its testbench connects ports Y2 and Y4
that its reference lacks: the dataset itself is broken), Prob151_review2015_fsm and
Prob156_review2015_fancytimer (their references use a cast iverilog 11 does not support; iverilog 12
does).
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from proofgym.core import Outcome
from proofgym.verilog import judge, load_verilogeval

from ._support import (
    SPEC_TO_RTL,
    inverted_output_design,
    reference_design,
    requires_dataset,
    requires_judge,
    verilogeval,
)

pytestmark = [requires_judge, requires_dataset]

UNJUDGEABLE_ON_IVERILOG_11 = {"Prob099_m2014_q6c", "Prob151_review2015_fsm", "Prob156_review2015_fancytimer"}

# Quick ones (each well under 0.2 s), of varied kinds: combinational, sequential, FSM, vectors, two outputs.
SAMPLE = [
    "Prob001_zero", "Prob014_andgate", "Prob031_dff", "Prob033_ece241_2014_q1c", "Prob041_dff8r",
    "Prob050_kmap1", "Prob070_ece241_2013_q2", "Prob121_2014_q3bfsm",
]


@pytest.mark.parametrize("problem_id", SAMPLE)
def test_sample_reference_passes_and_an_inverted_output_fails(problem_id):
    problem = verilogeval(problem_id)
    assert judge(problem, reference_design(problem)).certified
    verdict = judge(problem, inverted_output_design(problem))
    assert verdict.outcome is Outcome.REFUTED and verdict.reason == "mismatches"


@pytest.mark.slow
def test_all_references_pass_but_three_that_iverilog_11_cannot_judge():
    problems = load_verilogeval(SPEC_TO_RTL)
    assert len(problems) == 156
    with ThreadPoolExecutor(2) as pool:
        verdicts = dict(zip([p.id for p in problems], pool.map(lambda p: judge(p, reference_design(p)), problems)))
    invalid = {pid for pid, verdict in verdicts.items() if verdict.outcome is Outcome.INVALID}
    assert invalid == UNJUDGEABLE_ON_IVERILOG_11
    assert {pid for pid, verdict in verdicts.items() if verdict.certified} == set(verdicts) - invalid


@pytest.mark.slow
def test_every_reference_with_an_output_inverted_fails():
    problems = [p for p in load_verilogeval(SPEC_TO_RTL) if p.id not in UNJUDGEABLE_ON_IVERILOG_11]
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(lambda p: (p.id, judge(p, inverted_output_design(p))), problems))
    passed = [pid for pid, verdict in verdicts if verdict.outcome is not Outcome.REFUTED]
    assert passed == []
