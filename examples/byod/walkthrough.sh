#!/usr/bin/env bash
# Bring your own rulebook, from a CSV and plain-English rules to a trained model: the commands of the guide
# (docs/guides/byod.md includes each section below), run in order in one shell.
#
#   bash examples/byod/walkthrough.sh        (from any folder, after `make setup`; about 20 CPU-seconds)
#   bash examples/byod/walkthrough.sh --full (then also the full training run to the goal: minutes of CPU)
#
# With MODEL_URL (and MODEL) set to an OpenAI-compatible server, it also drafts a rulebook from rules.txt with that
# model (the guide's "Drafting it from plain English"); the rest uses the reviewed rules.yaml either way.
set -euo pipefail
FULL=0
for argument in "$@"; do
    case $argument in
        --full) FULL=1 ;;
        *) echo "error: walkthrough.sh: unknown argument '$argument'; expected --full or nothing" >&2; exit 2 ;;
    esac
done
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"

# --8<-- [start:data]
# the proofgym checkout (make setup installs it editable, so the package is REPO/src/proofgym)
REPO=$(python -c 'import pathlib, proofgym; print(pathlib.Path(proofgym.__file__).parents[2])')
cd "$(mktemp -d)"          # a scratch folder for your domain
python "$REPO/examples/byod/make_data.py" --out records.csv
head -3 records.csv
# --8<-- [end:data]

if [ -n "${MODEL_URL:-}" ]; then
    # --8<-- [start:draft]
    MODEL_URL=${MODEL_URL:-http://127.0.0.1:8000/v1}    # any OpenAI-compatible server
    MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}            # the model's name there
    proofgym rules draft --describe "$REPO/examples/byod/rules.txt" --data records.csv \
        --model-url "$MODEL_URL" --model "$MODEL" --out rules.draft.yaml
    proofgym rules validate rules.draft.yaml
    # --8<-- [end:draft]
fi

# --8<-- [start:init]
proofgym domain init housing --data records.csv \
    --rules "$REPO/examples/byod/rules.yaml" --describe "$REPO/examples/byod/rules.txt"
proofgym rules validate housing/rulebook.yaml
# --8<-- [end:init]

# --8<-- [start:coverage]
proofgym rules coverage housing/rulebook.yaml --data records.csv
# --8<-- [end:coverage]

# --8<-- [start:config]
cat > run.yaml <<'YAML'
kind: run
name: housing
parser: {kind: json_block, decisions: [approve, waitlist, deny], require_facts: true}
verifier: {kind: rulebook, domain: ./housing}    # a folder, relative to this file
YAML
# --8<-- [end:config]

# --8<-- [start:reward]
python - <<'PY'
import re

import proofgym as pg
from proofgym.domains import build_dataset, gold_completion, load_domain

domain = load_domain("housing")                              # the folder, registered under its name
reward_fn = pg.load_config("run.yaml").reward_function()     # parser -> rule kernel -> shaper
row = build_dataset(domain, seed=0, n=1)[0]                  # {id, prompt, gold, source_facts, branch}
gold = gold_completion(domain, domain.generate(seed=0, n=1)[0])   # the kernel's answer, with its reasoning
wrong = gold.replace(f'"classification": "{row["gold"]}"', '"classification": "waitlist"')
invented = re.sub(r'"months_in_county": \d+', '"months_in_county": 999', gold)
for name, completion in [("gold", gold), ("wrong decision", wrong), ("invented fact", invented)]:
    item = reward_fn.score([row["prompt"]], [completion], [row])[0]
    print(f"{name:15} claims {item.claim.decision!s:9} kernel certifies {item.verdict.decision!s:5} "
          f"reward {item.reward:+.2f}  {item.components}")
reward_fn.close()
PY
# --8<-- [end:reward]

# --8<-- [start:train]
proofgym demo --domain housing --quick --out runs/housing-quick
# --8<-- [end:train]

if [ "$FULL" = 1 ]; then
    # --8<-- [start:full]
    proofgym demo --domain housing --seed 0 --out runs/housing
    # --8<-- [end:full]
fi
