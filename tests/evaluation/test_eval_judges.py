"""``[evaluation.judge]`` / ``[[evaluation.judges]]``: every finished trajectory scored by each judge, its mean and
its Pearson r against the environment's score in the summary, invalid verdicts counted, and strict keys."""

from __future__ import annotations

import json
import math
import textwrap

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.config import ConfigError
from proofgym.envs import ENVIRONMENTS, Observation, Tool, ToolCall, ToolEnv, ToolResult, register_env
from proofgym.evaluation import EvalError, load_eval_config, parse_eval_config, run_eval
from proofgym.evaluation._judges import build_judges
from proofgym.evaluation._report import pearson
from proofgym.judges import CRITERIA, register_criterion
from proofgym.traces import TraceStore

from ._support import toml_value, write_eval_toml

runner = CliRunner()
SUBMIT = Tool("submit", "Submit; passes on even seeds.")
ENV = "even-seeds-pass-judge-test"
SEEDS = "0-5"


class EvenSeedsPassEnv(ToolEnv):
    """One ``submit``: reward 1 and passed on even seeds, 0 and not passed on odd ones."""

    def __init__(self) -> None:
        super().__init__([SUBMIT], max_turns=2)

    def _reset(self, seed: int) -> Observation:
        self._seed = seed
        return Observation(f"Submit for seed {seed}.", {"task_id": f"task-{seed}"})

    def _call_tool(self, call: ToolCall) -> ToolResult:
        passed = self._seed % 2 == 0
        return ToolResult(Observation("graded"), {"submit": 1.0 if passed else 0.0}, done=True,
                          info={"outcome": "certified" if passed else "refuted", "passed": passed})


@pytest.fixture(autouse=True)
def environment_and_criteria():
    register_env(ENV, EvenSeedsPassEnv)
    register_criterion("test.eval.rewarded", lambda ctx: ctx.trace.steps[-1].reward > 0)
    register_criterion("test.eval.constant", lambda ctx: 0.5)
    register_criterion("test.eval.broken", lambda ctx: 1 / 0)
    yield
    ENVIRONMENTS.unregister(ENV)
    for name in ("test.eval.rewarded", "test.eval.constant", "test.eval.broken"):
        CRITERIA.unregister(name)


def eval_file(tmp_path, judge_toml: str):
    path = write_eval_toml(tmp_path / "e.toml", {"env_name": ENV, "policy_name": "scripted", "seeds": SEEDS,
                                                 "traces": str(tmp_path / "t.db")},
                           policy_config={"actions": [{"tool": "submit", "args": {}}]})
    path.write_text(path.read_text() + "\n" + textwrap.dedent(judge_toml))
    return path


def rubric(criterion: str) -> str:
    """An inline one-criterion outcome rubric, as TOML."""
    return toml_value({"criteria": [{"id": "c", "description": "d", "function": criterion}]})


def run(path):
    out = path.parent / "s.json"
    result = runner.invoke(app, ["eval", "--config", str(path), "--json-out", str(out)])
    return result, (json.loads(out.read_text()) if out.is_file() else None)


JUDGE_MODULE = '''
from proofgym.judges import CriterionVerdict, JudgeVerdict

class Inverse:
    """Scores 1 where the environment gave 0: a judge that disagrees with it on every seed."""

    def __init__(self, name="inverse", model=None):
        self.name, self.model = name, model

    async def judge(self, items):
        return [JudgeVerdict(self.name, tuple(CriterionVerdict(c.id, 0.0 if item.trace.steps[-1].reward else 1.0,
                                                               "inverse", self.name)
                                              for c in item.rubric.criteria))
                for item in items]

def make(model):
    assert model == "judge-model"
    return Inverse(model=model)

class Silent:
    name = "silent"

    async def judge(self, items):
        return [JudgeVerdict.failed(self.name, item.rubric, "malformed", "no answer") for item in items]

silent = Silent()
'''


@pytest.fixture
def judge_file(tmp_path):
    path = tmp_path / "my_judge.py"
    path.write_text(JUDGE_MODULE)
    return path


# -- pearson ----------------------------------------------------------------------------------------------------------

def test_pearson_of_perfectly_related_sequences_is_plus_or_minus_one():
    assert pearson([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx(1.0)
    assert pearson([0, 1, 2, 3], [3, 2, 1, 0]) == pytest.approx(-1.0)


def test_pearson_matches_the_textbook_value():
    xs, ys = [1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0]
    mx, my = sum(xs) / 5, sum(ys) / 5
    expected = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(
        sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
    assert pearson(xs, ys) == pytest.approx(expected) == pytest.approx(0.8)


@pytest.mark.parametrize("xs, ys", [([], []), ([1.0], [2.0]), ([1, 1, 1], [0, 1, 2]), ([0, 1, 2], [0.5, 0.5, 0.5])])
def test_pearson_is_none_with_fewer_than_two_pairs_or_a_constant_input(xs, ys):
    assert pearson(xs, ys) is None


def test_pearson_refuses_sequences_of_different_lengths():
    with pytest.raises(ValueError, match="one length"):
        pearson([1, 2], [1])


# -- the eval ---------------------------------------------------------------------------------------------------------

def test_a_programmatic_rubric_judge_scores_every_seed_and_agrees_with_the_environment(tmp_path):
    path = eval_file(tmp_path, f"[evaluation.judge]\nname = \"rewarded\"\nrubric = {rubric('test.eval.rewarded')}\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    assert judge["name"] == "rewarded" and judge["score_kind"] == "outcome" and judge["problem"] is None
    assert (judge["scored"], judge["abstained"], judge["invalid_verdicts"], judge["pairs"]) == (6, 0, 0, 6)
    assert judge["mean"] == pytest.approx(0.5) and judge["pearson_r"] == pytest.approx(1.0)
    assert [r["judge_scores"] for r in report["results"]] == [{"rewarded": float(s % 2 == 0)} for s in range(6)]
    line = " ".join(result.output.split())
    assert ("judge rewarded (outcome total): mean 0.500 over 6 scored, Pearson r vs official +1.000 (6 pairs), "
            "0 invalid verdicts") in line
    with TraceStore(tmp_path / "t.db", create=False) as store:
        [stored] = store.list_runs()
        assert stored.summary["judges"][0]["pearson_r"] == pytest.approx(1.0)


def test_a_constant_judge_has_no_pearson_r(tmp_path):
    path = eval_file(tmp_path, f"[evaluation.judge]\nrubric = {rubric('test.eval.constant')}\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    assert judge["name"] == "judge" and judge["mean"] == pytest.approx(0.5) and judge["pearson_r"] is None
    assert "Pearson r vs official n/a (6 pairs)" in " ".join(result.output.split())


def test_invalid_verdicts_abstain_and_are_counted_never_scored_zero(tmp_path):
    path = eval_file(tmp_path, f"[evaluation.judge]\nrubric = {rubric('test.eval.broken')}\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    assert (judge["scored"], judge["abstained"], judge["invalid_verdicts"]) == (0, 6, 6)
    assert judge["mean"] is None and judge["pearson_r"] is None and judge["pairs"] == 0
    assert all(r["judge_scores"] == {"judge": None} for r in report["results"])
    line = " ".join(result.output.split())
    assert "mean n/a over 0 scored, Pearson r vs official n/a (0 pairs), 6 invalid verdicts; 6 abstained" in line


def test_weights_that_blend_in_a_judged_level_make_the_score_the_blended_reward(tmp_path):
    blended = toml_value({"outcome": {"criteria": [{"id": "c", "description": "d", "function": "test.eval.constant"}]},
                          "weights": {"env": 1.0, "outcome": 2.0}})
    path = eval_file(tmp_path, f"[evaluation.judge]\nrubric = {blended}\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    # env return (1 on even seeds) + 2 x 0.5
    assert judge["score_kind"] == "blended"
    assert [r["judge_scores"]["judge"] for r in report["results"]] == [2.0, 1.0, 2.0, 1.0, 2.0, 1.0]
    assert judge["pearson_r"] == pytest.approx(1.0)
    assert "judge judge (blended reward)" in result.output


def test_a_rubric_file_in_the_references_form(tmp_path):
    (tmp_path / "rubric.toml").write_text(textwrap.dedent("""
        [rubric.weights]
        env = 0.0
        outcome = 1.0
        [rubric.outcome]
        rubric_id = "rewarded@2"
        criteria = [{key = "c", weight = 1.0, description = "d", function = "test.eval.rewarded"}]
    """))
    path = eval_file(tmp_path, f"[evaluation.judge]\nrubric = {json.dumps(str(tmp_path / 'rubric.toml'))}\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    assert judge["score_kind"] == "blended" and judge["pearson_r"] == pytest.approx(1.0)


def test_several_judges_each_scored_python_judges_by_path_and_module(tmp_path, judge_file, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    path = eval_file(tmp_path, f"""
        [[evaluation.judges]]
        name = "rewarded"
        rubric = {rubric('test.eval.rewarded')}

        [[evaluation.judges]]
        name = "inverse"
        path = {json.dumps(str(judge_file))}
        callable = "make"
        model = "judge-model"
        timeout_s = 5

        [[evaluation.judges]]
        name = "silent"
        module = "my_judge:silent"
    """)
    result, report = run(path)
    assert result.exit_code == 0, result.output
    rewarded, inverse, silent = report["summary"]["judges"]
    assert rewarded["pearson_r"] == pytest.approx(1.0)
    assert inverse["name"] == "inverse" and inverse["pearson_r"] == pytest.approx(-1.0) and inverse["mean"] == 0.5
    assert (silent["scored"], silent["invalid_verdicts"], silent["pearson_r"]) == (0, 6, None)
    assert report["results"][1]["judge_scores"] == {"rewarded": 0.0, "inverse": 1.0, "silent": None}


def test_a_python_judge_is_found_without_being_named(tmp_path, judge_file):
    judge_file.write_text(JUDGE_MODULE + "\njudge = Inverse()\n")
    path = eval_file(tmp_path, f"[evaluation.judge]\npath = {json.dumps(str(judge_file))}\nname = \"Backend\"\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    assert judge["name"] == "Backend" and judge["score_kind"] == "outcome" and judge["pearson_r"] == pytest.approx(-1)


def test_a_python_judge_over_its_timeout_abstains(tmp_path, judge_file):
    judge_file.write_text(JUDGE_MODULE + textwrap.dedent("""
        import asyncio

        class Slow(Inverse):
            async def judge(self, items):
                await asyncio.sleep(30)

        slow = Slow()
    """))
    path = eval_file(tmp_path, f"[evaluation.judge]\npath = {json.dumps(str(judge_file))}\ncallable = \"slow\"\n"
                               "timeout_s = 0.05\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    [judge] = report["summary"]["judges"]
    assert (judge["scored"], judge["abstained"], judge["invalid_verdicts"]) == (0, 6, 6)


def test_judge_code_that_cannot_be_loaded_is_named_and_the_rollouts_still_run(tmp_path):
    path = eval_file(tmp_path, '[evaluation.judge]\npath = "no/such/judge.py"\nname = "Backend"\nmodel = "m"\n'
                               'backend_url = "http://127.0.0.1:9/api"\ntimeout_s = 45\n')
    result, report = run(path)
    assert result.exit_code == 0, result.output
    line = " ".join(result.output.split())
    assert "evaluation.judge: cannot load the judge: no file at 'no/such/judge.py'; judge 'Backend' is not run" in line
    [judge] = report["summary"]["judges"]
    assert judge["problem"].startswith("evaluation.judge: cannot load the judge") and judge["mean"] is None
    assert report["summary"]["ok"] == 6


@pytest.mark.parametrize("code, problem", [
    ("x = 1\n", "has no 'judge' and no Judge object"),
    ("def judge(payload, **kwargs):\n    return 1.0\n", "calling 'judge' of path"),
    ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
])
def test_judge_code_that_gives_no_judge_says_why(tmp_path, code, problem):
    (tmp_path / "j.py").write_text(code)
    path = eval_file(tmp_path, f"[evaluation.judge]\npath = {json.dumps(str(tmp_path / 'j.py'))}\n")
    result, report = run(path)
    assert result.exit_code == 0, result.output
    assert problem in report["summary"]["judges"][0]["problem"]


def test_a_judge_in_process_is_given_to_run_eval(tmp_path):
    path = eval_file(tmp_path, f"[evaluation.judge]\nrubric = {rubric('test.eval.rewarded')}\n")
    report = run_eval(load_eval_config(path))
    assert report.summary()["judges"][0]["pearson_r"] == pytest.approx(1.0)
    assert report.results[0].judge_scores == {"judge": 1.0}


def test_an_eval_without_judges_reports_none(tmp_path):
    path = eval_file(tmp_path, "")
    report = run_eval(load_eval_config(path))
    assert report.summary()["judges"] == [] and report.results[0].judge_scores == {}


# -- the config -------------------------------------------------------------------------------------------------------

def section(judge=None, judges=None):
    keys = {"env_name": "loan", "policy_name": "oracle", "seeds": [0]}
    if judge is not None:
        keys["judge"] = judge
    if judges is not None:
        keys["judges"] = judges
    return parse_eval_config({"evaluation": keys}, source="e.toml").evaluation


LLM_RUBRIC = {"criteria": [{"id": "style", "description": "Is it well written?"}]}


def test_an_unknown_judge_key_is_an_error_naming_the_file_the_key_and_the_expected_keys():
    with pytest.raises(ConfigError) as exc_info:
        section({"rubric": LLM_RUBRIC, "judge_url": "http://127.0.0.1:9/v1", "model": "m", "temprature": 0})
    message = str(exc_info.value)
    assert message.startswith("e.toml: evaluation.judge.temprature: unknown key (a judge takes aggregate, api_key_env,")
    assert "judge_url" in message and "timeout_s" in message
    with pytest.raises(ConfigError, match=r"e.toml: evaluation.judges\[0\].colour: unknown key"):
        section(judges=[{"name": "a", "path": "j.py", "colour": "red"}])


@pytest.mark.parametrize("judge, message", [
    ({"rubric": LLM_RUBRIC}, "evaluation.judge: criteria outcome.style need an LLM judge: set judge_url and model"),
    ({"judge_url": "http://127.0.0.1:9/v1"}, "evaluation.judge: judge_url needs the judge's model"),
    ({"path": "a.py", "module": "b"}, "give path or module, not both"),
    ({"path": "a.py", "judge_url": "http://x/v1", "model": "m"}, "Python code (path / module) or an LLM"),
    ({"rubric": "no/such/rubric.yaml"}, "evaluation.judge.rubric: no rubric file at 'no/such/rubric.yaml'"),
    ({"model": "m"}, "evaluation.judge: nothing to judge with"),
    ({"rubric": {"criteria": [{"id": "a", "description": "d", "weight": -1}]}},
     "e.toml: evaluation.judge.rubric: outcome.criteria[0].weight: Input should be greater than 0"),
    ({"panel": ["a", "b"]}, "panel member 'a' has no server: set judge_url"),
    ({"panel": ["a"], "judge_url": "http://x/v1", "min_valid": 2}, "min_valid is 2 but the panel has 1 judges"),
    ({"rubric": LLM_RUBRIC, "judge_url": "http://x/v1", "model": "m", "aggregate": "median"},
     "aggregate and min_valid are for a panel"),
    ({"timeout_s": 0, "path": "a.py"}, "evaluation.judge.timeout_s: Input should be greater than 0"),
])
def test_a_judge_entry_that_cannot_work_is_refused(judge, message):
    with pytest.raises(ConfigError) as exc_info:
        section(judge)
    assert message in str(exc_info.value)


def test_each_of_several_judges_is_named_once():
    with pytest.raises(ConfigError) as exc_info:
        section({"path": "a.py", "name": "x"}, [{"path": "b.py"}, {"path": "c.py", "name": "x"}])
    message = str(exc_info.value)
    assert "e.toml: evaluation.judges[0].name: required key missing" in message
    assert "e.toml: evaluation.judges[1].name: 'x' is also the name of evaluation.judge" in message


def test_the_references_judge_keys_are_accepted():
    entry = section({"path": "judges/j.py", "name": "Backend", "backend_url": "http://localhost:8000/api",
                     "model": "openai/gpt-oss-120b", "timeout_s": 45}).judge
    assert (entry.path, entry.name, entry.backend_url, entry.model, entry.timeout_s) == \
        ("judges/j.py", "Backend", "http://localhost:8000/api", "openai/gpt-oss-120b", 45)
    assert entry.rubrics.outcome.criteria[0].id == "score"


def test_a_bad_judge_entry_stops_the_eval_command_with_exit_2(tmp_path):
    path = eval_file(tmp_path, "[evaluation.judge]\nrubric = \"missing.yaml\"\n")
    result = runner.invoke(app, ["eval", "--config", str(path)])
    assert result.exit_code == 2
    assert "evaluation.judge.rubric: no rubric file at 'missing.yaml'" in result.output
    assert "seed " not in result.output


def test_an_llm_judge_is_built_from_judge_url_model_and_the_key_variable(monkeypatch):
    built = []

    class FakeLLMJudge:
        def __init__(self, base_url, model, **options):
            self.name = options.get("name") or f"llm:{model}"
            built.append((base_url, model, options))

        async def judge(self, items):
            raise AssertionError("not called")

    import proofgym.judges as judges_package

    monkeypatch.setattr(judges_package, "LLMJudge", FakeLLMJudge, raising=False)
    monkeypatch.setenv("JUDGE_KEY", "k-1")
    entries = section({"rubric": LLM_RUBRIC, "base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout_s": 7,
                       "api_key_env": "JUDGE_KEY"}).judge_entries()
    [judge] = build_judges(entries)
    assert judge.problem is None and judge.scorer.judges == ["llm:m"]
    assert built == [("http://127.0.0.1:9/v1", "m", {"api_key": "k-1", "name": None, "timeout_s": 7})]
    monkeypatch.delenv("JUDGE_KEY")
    with pytest.raises(EvalError,
                       match="evaluation.judge.api_key_env: the environment variable 'JUDGE_KEY' is not set"):
        build_judges(entries)


def test_a_panel_of_llm_judges_combines_their_verdicts(tmp_path, monkeypatch):
    import proofgym.judges as judges_package
    from proofgym.judges import CriterionVerdict, JudgeVerdict

    if not hasattr(judges_package, "Panel"):  # exported by proofgym.judges once the panel lands there
        panel_module = pytest.importorskip("proofgym.judges._panel")
        monkeypatch.setattr(judges_package, "Panel", panel_module.Panel, raising=False)
    scores = {"a": 0.2, "b": 0.6}

    class FakeLLMJudge:
        def __init__(self, base_url, model, **options):
            self.name, self.model, self.url = f"llm:{model}", model, base_url

        async def judge(self, items):
            return [JudgeVerdict(self.name, tuple(CriterionVerdict(c.id, scores[self.model], "", self.name)
                                                  for c in item.rubric.criteria)) for item in items]

    monkeypatch.setattr(judges_package, "LLMJudge", FakeLLMJudge)
    path = eval_file(tmp_path, f"""
        [evaluation.judge]
        name = "panel"
        rubric = {toml_value(LLM_RUBRIC)}
        judge_url = "http://127.0.0.1:9/v1"
        panel = ["a", {{model = "b", judge_url = "http://127.0.0.1:10/v1"}}]
        aggregate = "mean"
        min_valid = 2
    """)
    [judge] = build_judges(load_eval_config(path).evaluation.judge_entries())
    assert [m.url for m in judge.scorer.judge.judges] == ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]
    report = run_eval(load_eval_config(path), judges=[judge])
    assert report.results[0].judge_scores == {"panel": pytest.approx(0.4)}
