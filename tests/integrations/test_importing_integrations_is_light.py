import subprocess
import sys

HEAVY = ["torch", "transformers", "trl", "peft", "accelerate", "datasets", "fastapi", "uvicorn", "httpx", "typer",
         "rich", "matplotlib"]


def test_importing_the_adapters_pulls_in_no_trainer_or_server_dependency():
    code = ("import sys, proofgym.integrations;"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
