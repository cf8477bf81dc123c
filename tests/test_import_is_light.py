import subprocess
import sys

HEAVY = ["torch", "transformers", "trl", "ray", "ambertraceai", "ambertrace_rlvr", "math_verify", "fastapi",
         "typer", "rich", "httpx"]


def test_import_proofgym_pulls_in_no_optional_or_cli_dependency():
    code = ("import sys, proofgym, proofgym.rewards, proofgym.runtime, proofgym.parsers, proofgym.config;"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_envs_policies_and_rollouts_pulls_in_no_optional_dependency():
    code = ("import sys, proofgym.envs, proofgym.policies, proofgym.rollouts;"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_traces_pulls_in_no_database_or_dataset_library():
    code = ("import sys, proofgym.traces;"
            f"print([m for m in {HEAVY + ['sqlalchemy', 'datasets', 'psycopg']!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_training_pulls_in_no_model_or_plotting_library():
    code = ("import sys, proofgym.training;"
            f"print([m for m in {HEAVY + ['sqlalchemy', 'matplotlib', 'tokenizers']!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
