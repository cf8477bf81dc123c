#!/usr/bin/env bash
# proofgym environments as inspect_ai tasks, offline (docs/inspect.md includes the sections below): serve
# SmolLM2-135M-Instruct with `proofgym serve-model`, evaluate math and Verilog (inspect's tool loop) with
# `inspect eval proofgym/<env>`, then open the logs in `inspect view` and list them over its API.
#
#   bash examples/inspect_eval.sh         (from the repository root, after `make setup`; a few CPU-minutes)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$WORK"' EXIT
cd "$WORK"

# --8<-- [start:eval]
PORT=${PORT:-8000}
proofgym serve-model smollm2 --port "$PORT" --log-level warning &
until curl -sf "localhost:$PORT/health" >/dev/null; do sleep 1; done     # the model loads first
inspect eval proofgym/math --model proofgym/smollm2 --model-base-url "http://127.0.0.1:$PORT/v1" \
  -T seeds=0-3 --max-tokens 48
# --8<-- [end:eval]

# --8<-- [start:tools]
export PROOFGYM_BASE_URL="http://127.0.0.1:$PORT/v1"      # instead of --model-base-url
inspect eval proofgym/verilog --model proofgym/smollm2 -T seeds=0 -T max_turns=3 -T solver=tools --max-tokens 64
# --8<-- [end:tools]

# --8<-- [start:view]
VIEW_PORT=${VIEW_PORT:-7575}
inspect view start --log-dir logs --port "$VIEW_PORT" &     # http://127.0.0.1:7575 ; the list of logs at /api/logs
until curl -sf "localhost:$VIEW_PORT/api/logs" >/dev/null; do sleep 0.5; done
curl -s "localhost:$VIEW_PORT/api/logs" | python -c 'import json, sys; print(sorted(log["task"] for log in json.load(sys.stdin)["files"]))'
# --8<-- [end:view]
