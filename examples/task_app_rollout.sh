#!/usr/bin/env bash
# One rollout through the task app's HTTP contract, as synth-ai sends it (docs/guides/task-app.md includes the
# section below): a Verilog task app, a policy model served by `proofgym serve-model` (SmolLM2-135M on llama.cpp, offline;
# any OpenAI-compatible server in its place), and `POST /rollout` with curl; then the session found again by its
# correlation id.
#
#   bash examples/task_app_rollout.sh     (from the repository root, after `make setup`; needs iverilog and bwrap)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$WORK"' EXIT
cd "$WORK"

# --8<-- [start:rollout]
APP_PORT=${APP_PORT:-8000} MODEL_PORT=${MODEL_PORT:-8001}
proofgym serve-model smollm2 --backend llama_cpp --port "$MODEL_PORT" --log-level warning &   # the policy model
ENVIRONMENT_API_KEY=secret proofgym serve verilog --port "$APP_PORT" --env-config '{"max_turns": 20}' \
  --traces traces/proofgym.db --log-level warning &
until curl -sf "localhost:$MODEL_PORT/health" >/dev/null && curl -sf "localhost:$APP_PORT/health" >/dev/null; do
  sleep 0.5
done
curl -s "localhost:$APP_PORT/rollout" -H 'X-API-Key: secret' -H 'Content-Type: application/json' -d '{
  "run_id": "r1", "mode": "rl", "env": {"seed": 3},
  "policy": {"policy_name": "openai", "config": {"model": "smollm2",
             "inference_url": "http://127.0.0.1:'"$MODEL_PORT"'/v1?cid=trace_42", "temperature": 0.7, "max_tokens": 64}},
  "max_turns": 3, "record": {"return_trace": true, "trace_format": "compact"}, "safety": {"max_time_s": 300}}' \
  > rollout.json
proofgym traces show trace_42            # the session, found by its correlation id
# --8<-- [end:rollout]
python - <<'PY'
import json

response = json.load(open("rollout.json"))
(trajectory,) = response["trajectories"]
print(f"status {response['status']}, {trajectory['length']} steps, return {response['metrics']['mean_return']:+.3f},"
      f" trace_correlation_id {response['trace_correlation_id']}, inference_url {trajectory['inference_url']}")
print("tool calls:", [call["function"]["name"] for step in trajectory["steps"] for call in step["tool_calls"]])
PY
