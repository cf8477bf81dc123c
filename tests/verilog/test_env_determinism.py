"""The same seed gives the same problem and, for the same actions, the same observations."""

from proofgym.verilog import VerilogEnv, VerilogEnvConfig, builtin_problems

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEMS = [builtin_problems()[key] for key in ("Prob019_dff_sync_reset", "Prob001_and_gate", "Prob004_mux2")]


def episode(seed):
    with VerilogEnv(PROBLEMS) as env:
        texts = [env.reset(seed).text]
        wrong = reference_design(env.problem).replace("endmodule", "wire extra = ;\nendmodule")
        for action in [{"tool": "write_file", "args": {"path": "top.v", "content": wrong}}, {"tool": "compile"},
                       {"tool": "write_file", "args": {"path": "top.v", "content": reference_design(env.problem)}},
                       {"tool": "simulate"}, {"tool": "submit"}]:
            result = env.step(action)
            texts.append(result.observation.text)
        return env.problem.id, texts, result.info["revision"]


def test_the_same_seed_gives_the_same_problem_and_observations():
    assert episode(4) == episode(4)


def test_seeds_walk_the_problems_in_id_order():
    with VerilogEnv(PROBLEMS) as env:
        ids = [env.reset(seed) and env.problem.id for seed in range(4)]
    assert ids == ["Prob001_and_gate", "Prob004_mux2", "Prob019_dff_sync_reset", "Prob001_and_gate"]


def test_problem_id_pins_the_problem():
    with VerilogEnv(PROBLEMS, config=VerilogEnvConfig(problem_id="Prob004_mux2")) as env:
        assert {env.reset(seed).data["problem_id"] for seed in range(5)} == {"Prob004_mux2"}
