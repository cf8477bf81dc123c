"""Running the real ``inspect eval`` and ``proofgym eval`` CLIs as subprocesses over the same model server, and reading
what each wrote: the inspect ``.eval`` log (``inspect_ai.log.read_eval_log``) and ``proofgym eval --json-out``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fastapi.responses import JSONResponse

from _scripted_model import ScriptedChatServer

BIN = Path(sys.executable).parent


def cli_env() -> dict[str, str]:
    """No wrapping of the error lines (rich wraps at the terminal's width), no colour, no inherited log dir."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("INSPECT_")}
    return {**env, "COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"}


def inspect_eval(task: str, base_url: str, model: str, log_dir: Path, *args: str,
                 timeout: float = 600) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "inspect"), "eval", task, "--model", f"proofgym/{model}", "--model-base-url", base_url,
               "--log-dir", str(log_dir), "--display", "plain", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=cli_env(),
                          cwd=log_dir.parent)


def read_log(log_dir: Path) -> Any:
    from inspect_ai.log import read_eval_log

    (path,) = sorted(log_dir.glob("*.eval"))
    return read_eval_log(str(path))


def sample_scores(log: Any) -> dict[int, Any]:
    """``{seed: Score}`` of an inspect log's samples."""
    return {int(sample.id): sample.scores["proofgym_scorer"] for sample in log.samples}


def proofgym_eval(env: str, seeds: str, base_url: str, model: str, tmp: Path, *, max_tokens: int,
                  max_turns: int | None = None, timeout: float = 600) -> dict[str, Any]:
    """``proofgym eval`` with the ``openai`` policy at temperature 0 over ``base_url``: its ``--json-out`` document."""
    config = tmp / f"{env}_openai.toml"
    turns = f"max_turns = {max_turns}\n" if max_turns is not None else ""
    config.write_text(f"""kind = "eval"
[evaluation]
env_name = "{env}"
policy_name = "openai"
seeds = "{seeds}"
concurrency = 1
{turns}traces = "{tmp / 'traces.db'}"
[evaluation.policy_config]
model = "{model}"
inference_url = "{base_url}"
temperature = 0.0
max_tokens = {max_tokens}
""", encoding="utf-8")
    out = tmp / f"{env}_eval.json"
    done = subprocess.run([str(BIN / "proofgym"), "eval", "--config", str(config), "--json-out", str(out)],
                          capture_output=True, text=True, timeout=timeout, env=cli_env(), cwd=tmp)
    assert out.exists(), done.stdout + done.stderr
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


class ToolCallingModel(ScriptedChatServer):
    """A scripted OpenAI-compatible server whose answers are native tool calls: each scripted action
    ``{"tool": name, "args": {...}}`` comes back as one ``tool_calls`` entry (ids ``call_1``, ``call_2``... in request
    order), the last again once the script runs out. ``requests``: the bodies received; ``url``: ``.../v1``."""

    what = "a scripted tool-calling model server"

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions = list(actions)
        super().__init__()

    def reply(self, body: dict[str, Any], number: int) -> JSONResponse:
        action = self.actions[min(number, len(self.actions)) - 1]
        call = {"id": f"call_{number}", "type": "function",
                "function": {"name": action["tool"], "arguments": json.dumps(action["args"])}}
        return JSONResponse({"id": f"tools-{number}", "object": "chat.completion", "model": body.get("model"),
                             "choices": [{"index": 0, "finish_reason": "tool_calls",
                                          "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
                             "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
