#!/usr/bin/env bash
# Math behind HTTP, and the math verifier's own benchmark (docs/guides/math.md includes the section below): the
# single-turn task app answering one rollout of the oracle policy, then benchmarks/math_verification.py at a small size
# (throughput in process, through the runtime's process pool, and false timeouts under a burst).
#
#   bash examples/math_task_app.sh        (from the repository root, after `make setup`)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "${SCRATCH:-}"' EXIT

# --8<-- [start:serve]
PORT=${PORT:-8000} SCRATCH=$(mktemp -d)      # SCRATCH: a folder for the trace store
proofgym serve math --port "$PORT" --traces "$SCRATCH/math.db" --log-level warning &       # the single-turn task app
until curl -sf "localhost:$PORT/health" >/dev/null; do sleep 0.5; done
curl -s "localhost:$PORT/rollout" -H 'Content-Type: application/json' -d '{"run_id": "m1", "env": {"seed": 0},
  "policy": {"policy_name": "oracle"}}' | python -c 'import json, sys; r = json.load(sys.stdin)
print("%s: return %+.3f, outcome %s" % (r["status"], r["metrics"]["mean_return"], r["metrics"]["outcome_score"]))'
# throughput and false timeouts, small (the full run, its defaults, takes minutes: the measurements page)
PROOFGYM_BENCH_RESULTS=off python benchmarks/math_verification.py --runs 1 --claims 16 --burst 4 --per-caller 2 \
  --warm-per-caller 4 --no-ray
# --8<-- [end:serve]
