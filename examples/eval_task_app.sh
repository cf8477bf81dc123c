#!/usr/bin/env bash
# Serve an environment as a task app (the reference's HTTP contract, as synth-ai speaks it), then evaluate a policy
# against it over HTTP with `proofgym eval`: offline, the oracle policy, a few seconds.
#
#   bash examples/eval_task_app.sh        (from the repository root, after `make setup`)
#
# Point `task_app_url` at any app that speaks the contract, and `policy_name = "openai"` plus an
# [evaluation.policy_config] inference_url at any OpenAI-compatible server to evaluate a model instead.
set -euo pipefail
BIN=${BIN:-.venv/bin}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT=$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export ENVIRONMENT_API_KEY=example-key      # the app refuses requests without it; proofgym eval sends it

"$BIN/proofgym" serve grant_eligibility --port "$PORT" --traces "$WORK/app.db" --log-level warning &
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 0.5; done

cat > "$WORK/eval.toml" <<TOML
kind = "eval"

[evaluation]
env_name = "grant_eligibility"
task_app_url = "http://127.0.0.1:$PORT"
policy_name = "oracle"
seeds = "0-15"
concurrency = 4
traces = "$WORK/eval.db"
TOML

"$BIN/proofgym" eval --config "$WORK/eval.toml" --json-out "$WORK/report.json"
"$BIN/python" -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; print("summary:", {k: s[k] for k in ("passed", "pass_rate", "mean_return")})' "$WORK/report.json"
