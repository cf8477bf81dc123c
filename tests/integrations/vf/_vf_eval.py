"""The real ``vf-eval`` / ``vf-replay`` command lines, offline: run as a user runs them (a subprocess, the local
flags of docs/verifiers.md), their saved traces read back; and a scripted streaming chat model for runs whose
answers must be known (a certified answer, the oracle's tool calls)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.responses import JSONResponse, StreamingResponse

from _scripted_model import ScriptedChatServer

BIN = Path(sys.executable).parent
KEY_VAR = "PROOFGYM_VF_TEST_KEY"  # vf-eval reads the key from the variable it is named by (a dummy one here)
UV_NOT_READY = "failed to prepare uv script"


def command_env() -> dict[str, str]:
    """The environment vf-eval runs in: the venv's bin first on PATH (its chat harness needs uv there)."""
    if shutil.which("uv", path=str(BIN)) is None:
        pytest.skip("vf-eval's chat harness needs uv (pip install 'proofgym[verifiers]')")
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", KEY_VAR: "unused",
            "PRIME_RUNS_MODE": "disabled"}


def vf_eval(out: Path, taskset: str, base_url: str, *flags: str, model: str = "scripted",
            name: str = "run", timeout_s: float = 900) -> tuple[str, Path, list[dict[str, Any]]]:
    """``vf-eval TASKSET`` against ``base_url`` with the local flags: what it printed, its run folder and its saved
    traces (one per rollout, from ``traces.jsonl``)."""
    argv = [str(BIN / "vf-eval"), taskset, "-m", model, "-r", "1",
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
            "--client.base-url", base_url, "--client.api-key-var", KEY_VAR, "--no-push",
            "-o", str(out), "--run.name", name, *flags]
    done = subprocess.run(argv, env=command_env(), capture_output=True, text=True, timeout=timeout_s, cwd=out)
    run_dir = out / name
    traces_file = run_dir / "traces.jsonl"
    assert done.returncode == 0 and traces_file.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    traces = [trace for line in traces_file.read_text().splitlines() for trace in json.loads(line)["traces"]]
    errors = [error["message"] for trace in traces for error in trace["errors"]]
    if any(UV_NOT_READY in error for error in errors):
        pytest.skip("vf-eval could not prepare its chat harness: uv sync needs the package index once, or a warm "
                    "cache with the script's lock (docs/verifiers.md)")
    assert not errors, errors
    return done.stdout + done.stderr, run_dir, sorted(traces, key=lambda trace: trace["task"]["data"]["seed"])


def vf_replay(run_dir: Path, out: Path) -> list[dict[str, Any]]:
    """``vf-replay RUN_DIR``: the re-scored traces."""
    done = subprocess.run([str(BIN / "vf-replay"), str(run_dir), "--rich", "false", "-o", str(out)],
                          env=command_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    files = list(out.rglob("traces.jsonl"))
    assert len(files) == 1, files
    traces = [trace for line in files[0].read_text().splitlines() for trace in json.loads(line)["traces"]]
    return sorted(traces, key=lambda trace: trace["task"]["data"]["seed"])


def model_turns(trace: Mapping[str, Any]) -> list[Any]:
    """The actions of a saved trace's model turns, as proofgym's scripted policy takes them: a tool call as
    ``{"tool", "args"}``, a reply as its text."""
    turns = []
    for node in trace["nodes"]:
        message = node["message"]
        if message["role"] != "assistant" or not node.get("sampled"):
            continue
        calls = message.get("tool_calls") or []
        turns += [{"tool": call["name"], "args": json.loads(call["arguments"])} for call in calls] \
            or [message.get("content") or ""]
    return turns


class ScriptedStreamingModel(ScriptedChatServer):
    """A chat completions server that streams (SSE, with usage, as vf-eval's harness asks) a scripted reply per
    turn. ``script`` maps a task's user prompt to its replies, turn by turn (a text, or a ``{"tool", "args"}`` call;
    the last one again past the end); ``requests`` are the bodies received."""

    what = "a scripted streaming model"

    def __init__(self, script: Mapping[str, Sequence[Any]]) -> None:
        self.script = {prompt: list(replies) for prompt, replies in script.items()}
        super().__init__()

    def reply(self, body: dict[str, Any], number: int) -> Any:
        messages = body.get("messages") or []
        prompt = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
        replies = self.script.get(prompt, ["I do not know."])
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return _respond(body, replies[min(turn, len(replies) - 1)])


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def _respond(body: Mapping[str, Any], reply: Any) -> Any:
    base = {"id": "chatcmpl-scripted", "created": int(time.time()), "model": body.get("model")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if isinstance(reply, Mapping):
        call = {"index": 0, "id": f"call_{time.monotonic_ns()}", "type": "function",
                "function": {"name": reply["tool"], "arguments": json.dumps(reply["args"])}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": str(reply)}, "stop"
    if not body.get("stream"):
        return JSONResponse({**base, "object": "chat.completion", "usage": usage,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
    chunks = [{**base, "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
              {**base, "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
              {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}]
    payload = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    return StreamingResponse(iter([payload]), media_type="text/event-stream")
