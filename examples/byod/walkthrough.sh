#!/usr/bin/env bash
# Bring your own rulebook, from a CSV and plain-English rules to a trained model: the commands of the guide
# (docs/guides/byod.md includes each section below), run in order in one shell.
#
#   bash examples/byod/walkthrough.sh        (from the repository root, after `make setup`; about 20 CPU-seconds)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"

# --8<-- [start:data]
REPO=$PWD                  # the proofgym checkout
cd "$(mktemp -d)"          # a scratch folder for your domain
python "$REPO/examples/byod/make_data.py" --out records.csv
head -3 records.csv
# --8<-- [end:data]

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
