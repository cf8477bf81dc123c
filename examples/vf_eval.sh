#!/usr/bin/env bash
# proofgym environments as verifiers 0.4 tasksets, offline (docs/verifiers.md includes the sections below): serve
# SmolLM2-135M-Instruct with `proofgym serve-model` (llama.cpp), run `vf-eval proofgym-grant-eligibility` against it,
# re-score the saved run with `vf-replay`, look at a tool environment's MCP tool server with an MCP client, and lock
# vf-eval's chat harness script so that later runs need no package index.
#
#   bash examples/vf_eval.sh              (from the repository root, after `make setup`; a few CPU-minutes)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$WORK"' EXIT
cd "$WORK"

# --8<-- [start:eval]
PORT=${PORT:-8790}
proofgym serve-model smollm2 --backend llama_cpp --port "$PORT" --log-level warning &
until curl -sf "localhost:$PORT/health" >/dev/null; do sleep 0.5; done
export SM_KEY=unused   # vf-eval reads the key from the variable --client.api-key-var names
vf-eval proofgym-grant-eligibility -n 4 -r 1 -c 1 -m smollm2 \
  --env.agent.harness.id null --env.agent.runtime.type subprocess \
  --client.base-url "http://127.0.0.1:$PORT/v1" --client.api-key-var SM_KEY --no-push \
  --env.taskset.task.tools true --sampling.temperature 0 --sampling.max-tokens 64 \
  -o outputs --run.name grant-tools
# --8<-- [end:eval]

# --8<-- [start:replay]
vf-replay outputs/grant-tools --rich false -o replay
# --8<-- [end:replay]
python - <<'PY'
import json
from pathlib import Path

def rewards(path):
    traces = [t for line in path.read_text().splitlines() for t in json.loads(line)["traces"]]
    return {t["task"]["data"]["seed"]: (t["info"]["proofgym"]["reward"], t["info"]["proofgym"]["outcome"])
            for t in traces}

saved, (replayed_file,) = rewards(Path("outputs/grant-tools/traces.jsonl")), list(Path("replay").rglob("traces.jsonl"))
print("saved:   ", dict(sorted(saved.items())))
print("replayed:", dict(sorted(rewards(replayed_file).items())))
PY

# --8<-- [start:toolset]
export MCP_PORT=${MCP_PORT:-8800}
python -m proofgym.integrations.vf._toolset --env verilog --seed 0 &
python - <<'PY'
import asyncio
import os

from mcp.client import Client


async def look() -> None:
    for _ in range(300):  # until the server answers
        try:
            async with Client(f"http://127.0.0.1:{os.environ['MCP_PORT']}/mcp") as client:
                tools = (await client.list_tools()).tools
                print("tools:", [tool.name for tool in tools])
                result = await client.call_tool("compile", {})
                print("compile:", " ".join("".join(part.text for part in result.content).split())[:120])
                return
        except Exception:
            await asyncio.sleep(0.5)
    raise SystemExit("the tool server did not answer")


asyncio.run(look())
PY
kill %%
# --8<-- [end:toolset]

# --8<-- [start:lock]
# the vf-eval run above prepared the harness's chat script (with the package index, or uv's warm cache)
uv lock --script ~/.cache/verifiers/runtimes/scripts/*.py
UV_OFFLINE=1 vf-eval proofgym-math -n 1 -r 1 -c 1 -m smollm2 \
  --env.agent.harness.id null --env.agent.runtime.type subprocess \
  --client.base-url "http://127.0.0.1:$PORT/v1" --client.api-key-var SM_KEY --no-push \
  --sampling.temperature 0 --sampling.max-tokens 16 -o outputs --run.name math-offline
# --8<-- [end:lock]
