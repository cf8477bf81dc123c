#!/usr/bin/env bash
# serve-model's LoRA adapter endpoints, vLLM's shapes (docs/rl-policy-server.md includes the two sections below): make an
# adapter as peft saves one, serve proofgym:tiny with --enable-lora, load the adapter by name and chat with it.
#
#   bash examples/lora_adapters.sh        (from the repository root, after `make setup`; about 10 CPU-seconds)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$WORK"' EXIT
cd "$WORK"

# --8<-- [start:adapter]
# An adapter of proofgym:tiny as peft's save_pretrained writes one (a trainer's <adapter_dir>/step-<k> is another).
python - <<'PY'
import torch
from peft import LoraConfig, get_peft_model

from proofgym.policies import build_tiny_model

model, _ = build_tiny_model("tiny-cache", seed=0)
torch.manual_seed(1)
lora = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"))
with torch.no_grad():  # peft starts B at zero (the adapter would change nothing): draw it so that it shows
    for name, parameter in lora.named_parameters():
        if "lora_B" in name:
            parameter.normal_(std=0.3)
lora.save_pretrained("adapter")
PY
ls adapter
# --8<-- [end:adapter]

# --8<-- [start:serve]
PORT=${PORT:-8000}
proofgym serve-model proofgym:tiny --enable-lora --port "$PORT" --log-level warning &
until curl -sf "localhost:$PORT/health" >/dev/null; do sleep 0.5; done     # the model loads first
curl -s -w "\n" "localhost:$PORT/v1/load_lora_adapter" -H 'Content-Type: application/json' \
  -d "{\"lora_name\": \"mine\", \"lora_path\": \"$PWD/adapter\"}"
# Success: LoRA adapter 'mine' added successfully.
curl -s -w "\n" "localhost:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model": "mine", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}'
# --8<-- [end:serve]
curl -s "localhost:$PORT/v1/models" | python -c 'import json, sys; print("models:", [(m["id"], m.get("parent")) for m in json.load(sys.stdin)["data"]])'
curl -s "localhost:$PORT/v1/unload_lora_adapter" -H 'Content-Type: application/json' -d '{"lora_name": "mine"}' -w "\n"
